"""Shared fixtures: an isolated environment per test run and the real o200k vocabulary from ../shared."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED_VOCAB = ROOT.parent / "shared" / "vocab"

# Isolation for every test: no downloads, no user caches, no stray keys.
os.environ["GPTOSS_DOCTOR_OFFLINE"] = "1"
for var in ("TIKTOKEN_ENCODINGS_BASE", "GPTOSS_DOCTOR_VOCAB", "OPENAI_API_KEY", "HF_TOKEN", "GPTOSS_DOCTOR_DEBUG",
            "TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR", "TIKTOKEN_RS_CACHE_DIR", "GPTOSS_DOCTOR_KNOWLEDGE"):
    os.environ.pop(var, None)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    base = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_CACHE_HOME", str(base / "cache"))
    monkeypatch.setenv("HF_HOME", str(base / "hf"))
    monkeypatch.setenv("TMPDIR", str(base / "tmp"))
    (base / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(base / "tmp"))
    yield


@pytest.fixture(scope="session")
def vocab_dir() -> Path:
    """The folder holding the real o200k_base.tiktoken; missing it is a failure, not a skip."""
    f = SHARED_VOCAB / "o200k_base.tiktoken"
    if not f.is_file():
        pytest.fail(f"the real vocabulary is missing: {f} (../shared must sit beside the project)")
    return SHARED_VOCAB


def run_cli(*args: str, input: bytes | None = None, env: dict | None = None, cwd: str | None = None,
            timeout: float = 60) -> subprocess.CompletedProcess:
    """Run ``python -m gptoss_doctor`` as a user would, in a subprocess."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    full_env["PYTHONPATH"] = str(ROOT) + os.pathsep + full_env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "gptoss_doctor", *args], input=input, capture_output=True,
                          env=full_env, cwd=cwd, timeout=timeout)
