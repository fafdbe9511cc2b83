"""Hugging Face ``transformers serve`` (https://huggingface.co/docs/transformers/main/serving)."""

from __future__ import annotations

from gptoss_doctor.engines.profile import EngineProfile

PROFILE = EngineProfile(name="transformers", label="transformers", tracker="huggingface/transformers",
                        log_hints=(r"transformers/(?:generation|commands|models)|transformers serve",))
