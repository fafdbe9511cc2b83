"""Real-socket HTTP emulators of LLM serving engines for gpt-oss (test support).

    from tests.emulators import serve, ENGINES, FAULTS
    with serve("vllm", version="0.10.1", faults=("stale_eos",)) as srv:
        httpx.get(srv.url + "/version")
        srv.requests  # [{"method", "path", "headers", "body"}, ...]
"""
from __future__ import annotations

import contextlib
from typing import Iterator, Optional

from ._base import FAULTS, Engine
from . import gptoss_reference, litellm, llamacpp, lmdeploy, lmstudio, notllm, ollama, sglang, tgi, transformers, trtllm, vllm

# An explicit registry: a broken emulator module fails the import (and the whole run) instead of dropping out.
_REGISTRY: dict = {}
for _mod in (vllm, sglang, llamacpp, ollama, lmdeploy, litellm, lmstudio, trtllm, tgi, transformers, gptoss_reference,
             notllm):
    _REGISTRY.update(_mod.ENGINE_CLASSES)

# engines whose default (fault-free) emulation is a healthy gpt-oss server; transformers serve 5.23 has no Harmony
# parser at all (recorded), so its healthy state already fails the channel and tool checks; the gpt-oss reference
# server serves only /v1/responses (recorded: no chat completions, model list or version to check)
GAPS_BY_DESIGN = ("transformers", "gptoss-reference")
ENGINES = tuple(n for n in _REGISTRY if n != "not-llm" and n not in GAPS_BY_DESIGN)
ALL_ENGINES = tuple(_REGISTRY)


def create(engine: str, version: Optional[str] = None, faults=(), api_key: Optional[str] = None,
           delay: float = 0.0, model: Optional[str] = None, max_model_len: Optional[int] = None) -> Engine:
    try:
        cls = _REGISTRY[engine]
    except KeyError:
        raise ValueError(f"unknown engine {engine!r}; known: {tuple(_REGISTRY)}") from None
    if isinstance(faults, str):
        faults = (faults,)
    return cls(version=version, faults=tuple(faults), api_key=api_key, delay=delay, model=model,
               max_model_len=max_model_len)


@contextlib.contextmanager
def serve(engine: str, version: Optional[str] = None, faults=(), api_key: Optional[str] = None,
          delay: float = 0.0, model: Optional[str] = None, max_model_len: Optional[int] = None,
          port: int = 0) -> Iterator[Engine]:
    """Start an emulator on 127.0.0.1:<free port> (or ``port``) in a daemon thread; stop and join on exit."""
    srv = create(engine, version=version, faults=faults, api_key=api_key, delay=delay, model=model,
                 max_model_len=max_model_len)
    srv.start(port)
    try:
        yield srv
    finally:
        srv.stop()


__all__ = ["serve", "create", "ENGINES", "ALL_ENGINES", "GAPS_BY_DESIGN", "FAULTS", "Engine"]
