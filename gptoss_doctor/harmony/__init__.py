"""Harmony, the format gpt-oss speaks: the one special-token table (tokens) and the o200k vocabulary (vocab)."""
