"""Shared fixtures: an isolated environment per test run and the real o200k vocabulary from ../shared."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
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


def run_cli(*args: str, input: bytes | str | None = None, env: dict | None = None, cwd: str | None = None,
            timeout: float = 60, text: bool = False, base_env: dict | None = None,
            **popen: object) -> subprocess.CompletedProcess:
    """The one subprocess runner: ``python -m gptoss_doctor ARGS`` as a user runs it (``base_env`` replaces this
    process's environment; ``env`` adds to it)."""
    full_env = dict(os.environ if base_env is None else base_env)
    full_env.update(env or {})
    full_env["PYTHONPATH"] = str(ROOT) + os.pathsep + full_env.get("PYTHONPATH", "")
    if input is None and "stdin" not in popen:
        popen["stdin"] = subprocess.DEVNULL
    return subprocess.run([sys.executable, "-m", "gptoss_doctor", *args], input=input, capture_output=True,
                          env=full_env, cwd=cwd, timeout=timeout, text=text, **popen)


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str

    def json(self) -> dict:
        return json.loads(self.stdout)  # exactly one document, or this fails


@pytest.fixture
def cli(capsys):
    """The one in-process runner: ``cli("check", "--json", url)`` -> CliResult (exit code, stdout, stderr)."""
    from gptoss_doctor.cli import main

    def run(*args: str) -> CliResult:
        capsys.readouterr()
        with pytest.raises(SystemExit) as exc:
            main(list(args))
        out, err = capsys.readouterr()
        return CliResult(exc.value.code, out, err)

    return run


def run_cli_on_tty(*args: str, tty: tuple[str, ...] = ("stderr",), env: dict | None = None,
                   timeout: float = 60) -> tuple[int, bytes, bytes]:
    """``python -m gptoss_doctor ARGS`` with the streams named in ``tty`` on a real pseudo-terminal (80x24):
    (exit code, stdout bytes when stdout is a pipe, every byte the terminal received)."""
    import fcntl
    import pty
    import struct
    import termios
    import threading

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    full_env = dict(os.environ)
    full_env.update({"TERM": "xterm-256color", **(env or {})})
    full_env.pop("COLUMNS", None)
    full_env["PYTHONPATH"] = str(ROOT) + os.pathsep + full_env.get("PYTHONPATH", "")
    proc = subprocess.Popen([sys.executable, "-m", "gptoss_doctor", *args], stdin=subprocess.DEVNULL,
                            stdout=slave if "stdout" in tty else subprocess.PIPE,
                            stderr=slave if "stderr" in tty else subprocess.PIPE, env=full_env)
    os.close(slave)
    seen = bytearray()

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                return
            if not chunk:
                return
            seen.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        out, _ = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.join(5)
        os.close(master)
    return proc.returncode, out or b"", bytes(seen)
