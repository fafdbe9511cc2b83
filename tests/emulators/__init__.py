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
from .vllm import VLLM

_REGISTRY = {
    "vllm": VLLM,
}


def _load_more() -> None:
    import importlib
    for modname, names in (
        ("sglang", ("sglang",)), ("llamacpp", ("llama.cpp",)), ("ollama", ("ollama",)),
        ("lmdeploy", ("lmdeploy",)), ("litellm", ("litellm",)), ("lmstudio", ("lmstudio",)),
        ("trtllm", ("trtllm",)), ("tgi", ("tgi",)), ("notllm", ("not-llm",)),
    ):
        try:
            mod = importlib.import_module(f"{__name__}.{modname}")
        except ImportError:
            continue
        for n in names:
            cls = getattr(mod, "ENGINE_CLASSES", {}).get(n)
            if cls is not None:
                _REGISTRY[n] = cls


_load_more()

ENGINES = tuple(n for n in _REGISTRY if n != "not-llm")
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
          delay: float = 0.0, model: Optional[str] = None, max_model_len: Optional[int] = None) -> Iterator[Engine]:
    """Start an emulator on 127.0.0.1:<free port> in a daemon thread; stop and join on exit."""
    srv = create(engine, version=version, faults=faults, api_key=api_key, delay=delay, model=model,
                 max_model_len=max_model_len)
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


__all__ = ["serve", "create", "ENGINES", "ALL_ENGINES", "FAULTS", "Engine"]
