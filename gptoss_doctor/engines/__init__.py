"""The engines the doctor knows, one module each, listed in one registry.

Every other part of the doctor asks this registry about an engine (its label, port, fingerprint, capabilities,
version rules, fix wording) instead of naming engines itself. Adding an engine: write ``<engine>.py`` exposing
``PROFILE`` (see ``profile.EngineProfile``), add it to ``_MODULES`` below, and add its emulator under
``tests/emulators``. The order of ``_MODULES`` is the order engines are listed in (help texts, log hints); which
engine a server is decided by the rules' priorities, not by this order.
"""

from __future__ import annotations

from typing import Optional

from gptoss_doctor.engines import (
    gptoss_reference, litellm, llamacpp, lmdeploy, lmstudio, mlx, ollama, sglang, tgi, transformers, trtllm, vllm,
)
from gptoss_doctor.engines.profile import EngineProfile, Rule, Signals

_MODULES = (vllm, sglang, lmdeploy, llamacpp, ollama, lmstudio, litellm, trtllm, tgi, transformers, mlx,
            gptoss_reference)

PROFILES: tuple[EngineProfile, ...] = tuple(m.PROFILE for m in _MODULES)
UNKNOWN = EngineProfile(name="unknown", label="unknown engine", reads_generation_config=True)
_BY_NAME = {p.name: p for p in PROFILES}


def get(name: Optional[str]) -> EngineProfile:
    """The profile of ``name``; the generic 'unknown engine' profile for anything else."""
    return _BY_NAME.get(name or "", UNKNOWN)


def known(name: Optional[str]) -> bool:
    return (name or "") in _BY_NAME


def names() -> tuple[str, ...]:
    return tuple(_BY_NAME)


def label(name: Optional[str]) -> str:
    p = _BY_NAME.get(name or "")
    return p.label if p else (name or UNKNOWN.label)


def identify(signals: Signals) -> Optional[tuple[str, str]]:
    """(engine, why) from the discovery answers: the matching rule of lowest priority; auth rules only when no
    other rule matched and the server asked for a key."""
    rules = sorted(((r, p.name) for p in PROFILES for r in p.rules), key=lambda x: x[0].priority)
    for auth in (False, True):
        if auth and not signals.auth_status:
            break
        for rule, name in rules:
            if rule.auth == auth and rule.test(signals):
                return name, rule.why
    return None


def port_hint() -> str:
    """'vLLM 8000, SGLang 30000, …' for a refused connection."""
    return ", ".join(f"{p.label} {p.default_port}" for p in PROFILES if p.default_port)


def log_hints() -> list[tuple[str, str]]:
    """(engine, regex) pairs in registry order, each engine's patterns in its own order."""
    return [(p.name, rx) for p in PROFILES for rx in p.log_hints]


__all__ = ["EngineProfile", "PROFILES", "Rule", "Signals", "UNKNOWN", "get", "identify", "known", "label",
           "log_hints", "names", "port_hint"]
