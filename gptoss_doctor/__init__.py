"""gptoss-doctor: diagnose gpt-oss / Harmony serving problems."""

__version__ = "0.1.0"
