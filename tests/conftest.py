"""Shared fixtures: an isolated environment per test run and the real o200k vocabulary (TIKTOKEN_ENCODINGS_BASE,
../shared/vocab, or a one-time verified download)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest


def pytest_configure(config):
    # A suite started in the background (nohup, `cmd &` in a shell without job control) inherits SIGINT ignored, and
    # an ignored signal stays ignored in every process it starts: the doctors the Ctrl-C tests interrupt could not be
    # interrupted, and exit 0. A handler of our own is reset to the default in each child, as a terminal's run has it.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


ROOT = Path(__file__).resolve().parent.parent
SHARED_VOCAB = ROOT.parent / "shared" / "vocab"
RECORDED = ROOT / "tests" / "recorded"  # the real engine exchanges the tests replay (copied from ../shared/real)
VOCAB_NAME = "o200k_base.tiktoken"
VOCAB_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
VOCAB_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
# read before the isolation below removes them from this process
_USER_ENCODINGS_BASE = os.environ.get("TIKTOKEN_ENCODINGS_BASE")
_USER_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gptoss-doctor-tests"

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


def _verified(folder: Path) -> bool:
    f = folder / VOCAB_NAME
    if not f.is_file():
        return False
    with open(f, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest() == VOCAB_SHA256


def _download_vocab(folder: Path) -> str:
    """Fetch the vocabulary once into ``folder`` from OpenAI's public URL, verified; '' or why it failed."""
    import urllib.request

    try:
        with urllib.request.urlopen(VOCAB_URL, timeout=20) as r:
            data = r.read(16 << 20)
    except Exception as exc:  # noqa: BLE001 - any failure means: no vocabulary from the network
        return f"{type(exc).__name__}: {exc}"
    if hashlib.sha256(data).hexdigest() != VOCAB_SHA256:
        return "the downloaded file failed its sha256 check"
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{VOCAB_NAME}.{os.getpid()}.tmp"
    tmp.write_bytes(data)
    os.replace(tmp, folder / VOCAB_NAME)
    return ""


_VOCAB: dict = {}


def find_vocab() -> tuple[Path | None, str]:
    """The folder holding the real, verified o200k_base.tiktoken: $TIKTOKEN_ENCODINGS_BASE, then ../shared/vocab,
    then a one-time download into ~/.cache/gptoss-doctor-tests (tried once per test run); else (None, why)."""
    if not _VOCAB:
        candidates = [Path(_USER_ENCODINGS_BASE)] if _USER_ENCODINGS_BASE else []
        candidates += [SHARED_VOCAB, _USER_CACHE]
        found = next((c for c in candidates if _verified(c)), None)
        why = ""
        if found is None:
            why = _download_vocab(_USER_CACHE)
            found = _USER_CACHE if not why and _verified(_USER_CACHE) else None
        _VOCAB["result"] = (found, why and (
            f"the real o200k vocabulary is not available: no verified {VOCAB_NAME} in $TIKTOKEN_ENCODINGS_BASE, "
            f"{SHARED_VOCAB} or {_USER_CACHE}, and downloading it from {VOCAB_URL} failed ({why[:100]})"))
    return _VOCAB["result"]


@pytest.fixture(scope="session")
def vocab_dir() -> Path:
    """The folder holding the real o200k_base.tiktoken (see find_vocab); without one, the test is skipped with the
    one reason saying where it was looked for."""
    found, why = find_vocab()
    if found is None:
        pytest.skip(why)
    return found


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


def pytest_terminal_summary(terminalreporter) -> None:
    """Say once, at the end, why the tests that need the vocabulary were skipped."""
    if _VOCAB and _VOCAB["result"][0] is None:
        terminalreporter.write_line(f"vocabulary tests skipped: {_VOCAB['result'][1]}", yellow=True)
