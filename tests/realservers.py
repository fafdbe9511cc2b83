"""Real servers for the tests/test_real_*.py modules: a free loopback port, and a process that is started, waited
for until it answers, and always stopped. A server that does not come up is a test failure (with its log tail),
never a silent skip: the skip decision belongs to each module (its executable is not configured)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Iterator, Optional, Sequence

import httpx
import pytest

from tests.conftest import RECORDED, VOCAB_NAME, find_vocab

SHARED_REAL = RECORDED  # build_tiny_gptoss.py and make_scripted_gptoss.py, copied from ../shared/real


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tail(log: Path, n: int = 3000) -> str:
    try:
        return log.read_text(errors="replace")[-n:]
    except OSError:
        return ""


@contextlib.contextmanager
def running(cmd: Sequence[str], *, name: str, ready_path: str, port: int, log: Path, env: Optional[dict] = None,
            cwd: Optional[Path] = None, timeout: float = 180) -> Iterator[str]:
    """Start ``cmd`` (which listens on 127.0.0.1:``port``), wait until GET ``ready_path`` answers 200, yield the base
    URL; stop the process (terminate, then kill) whatever happens."""
    out = open(log, "wb")  # noqa: SIM115 - closed below
    p = subprocess.Popen(list(cmd), stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if p.poll() is not None:
                pytest.fail(f"{name} exited with {p.returncode}: {_tail(log)}")
            try:
                if httpx.get(url + ready_path, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"{name} did not answer within {timeout:.0f} s: {_tail(log)}")
            time.sleep(0.5)
        yield url
    finally:
        p.terminate()
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        out.close()


def cache_dir(kind: str, *inputs: Path | str) -> Path:
    """A folder for things slow to build (tiny models, GGUF files), keyed by what they are built from: under
    $GPTOSS_DOCTOR_REAL_CACHE when set (kept between runs on one machine), else under the system temp folder."""
    h = hashlib.sha256()
    for item in inputs:
        h.update(Path(item).read_bytes() if isinstance(item, Path) else item.encode())
    root = Path(os.environ.get("GPTOSS_DOCTOR_REAL_CACHE") or Path(os.environ.get("TMPDIR", "/tmp")) / "gptoss-doctor-real")
    d = root / f"{kind}-{h.hexdigest()[:16]}"
    d.parent.mkdir(parents=True, exist_ok=True)
    return d


def findings(doc: dict) -> dict:
    """check --json: the first target's findings by id."""
    return {c["id"]: c for c in doc["targets"][0]["checks"]}


# fixes that name a server flag: a model or a runtime without a Harmony parser must get none of them
FLAG_FIXES = ("--enable-auto-tool-choice", "--tool-call-parser", "--reasoning-parser", "--jinja", "--reasoning-format")


def flag_fixes(doc: dict) -> list[tuple[str, str]]:
    return [(c["id"], c.get("fix", "")) for c in doc["targets"][0]["checks"]
            if any(flag in (c.get("fix") or "") for flag in FLAG_FIXES)]


TOOL_REPLY = '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city":"Paris"}<|call|>'


def _build(py: str, args: list[str], out: Path) -> Path:
    """Run a model script into ``out`` unless a previous run left it complete there (written beside, then renamed)."""
    if out.is_dir() and (out / "generation_config.json").is_file():
        return out
    tmp = out.with_name(out.name + f".partial-{os.getpid()}")
    r = subprocess.run([py, *args, str(tmp)], capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        pytest.fail(f"{Path(args[0]).name} failed: {r.stderr[-3000:]}")
    os.replace(tmp, out)
    return out


@functools.lru_cache(maxsize=None)
def tiny_models(py: str, template: str) -> dict[str, Path]:
    """The tiny random gpt-oss of tests/recorded/build_tiny_gptoss.py and two scripted copies
    (make_scripted_gptoss.py): "random" (garbage output), "hello" (<|channel|>final<|message|>Hello<|return|>)
    and "tool" (a get_weather call). Folder names say gpt-oss, as a user's download would."""
    build, script = SHARED_REAL / "build_tiny_gptoss.py", SHARED_REAL / "make_scripted_gptoss.py"
    vocab, why = find_vocab()
    if vocab is None:
        pytest.skip(why)
    base = _build(py, [str(build), "--vocab", str(vocab / VOCAB_NAME), "--chat-template", template, "--out"],
                  cache_dir("gpt-oss-tiny", build, Path(template), py))
    hello = _build(py, [str(script), "--src", str(base), "--out"], cache_dir("gpt-oss-tiny-hello", script, base.name))
    tool = _build(py, [str(script), "--src", str(base), "--reply", TOOL_REPLY, "--out"],
                  cache_dir("gpt-oss-tiny-tool", script, base.name, TOOL_REPLY))
    return {"random": base, "hello": hello, "tool": tool}


@functools.lru_cache(maxsize=None)
def gguf(py: str, llama_src: str, model: Path) -> Path:
    """``model`` converted to GGUF (f16) with the convert_hf_to_gguf.py of the llama.cpp source tree it runs with."""
    convert = Path(llama_src) / "convert_hf_to_gguf.py"
    out = cache_dir(f"{model.name}-gguf", convert).with_suffix(".gguf")
    if out.is_file():
        return out
    tmp = out.with_name(out.name + f".partial-{os.getpid()}")
    env = dict(os.environ, PYTHONPATH=str(Path(llama_src) / "gguf-py"))
    r = subprocess.run([py, str(convert), str(model), "--outfile", str(tmp), "--outtype", "f16"], capture_output=True,
                       text=True, timeout=900, env=env)
    if r.returncode != 0:
        pytest.fail(f"convert_hf_to_gguf.py failed: {r.stderr[-3000:]}")
    os.replace(tmp, out)
    return out
