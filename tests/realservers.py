"""Real servers for the tests/test_real_*.py modules: a free loopback port, and a process that is started, waited
for until it answers, and always stopped. A server that does not come up is a test failure (with its log tail),
never a silent skip: the skip decision belongs to each module (its executable is not configured)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import signal
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
    """Start ``cmd`` (which listens on 127.0.0.1:``port``) in its own process group, wait until GET ``ready_path``
    answers 200, yield the base URL; stop the whole group (SIGTERM, then SIGKILL) whatever happens: servers such as
    vLLM run their engine in child processes, and one still starting may ignore SIGTERM."""
    out = open(log, "wb")  # noqa: SIM115 - closed below
    p = subprocess.Popen(list(cmd), stdout=out, stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True)
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
        _stop_group(p)
        out.close()


def _stop_group(p: subprocess.Popen) -> None:
    """SIGTERM the process group led by ``p``, SIGKILL whatever of it is left after 20 s, and reap the leader."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # children (vLLM's EngineCore) may outlive the leader for a moment
        if p.poll() is not None:
            try:
                os.killpg(p.pid, 0)
            except ProcessLookupError:
                return
        time.sleep(0.5)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(p.pid, signal.SIGKILL)
    p.wait()


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


def vocab_file() -> Path:
    """The real o200k_base.tiktoken (tests/conftest.find_vocab); without one, the calling test is skipped with the
    one reason."""
    vocab, why = find_vocab()
    if vocab is None:
        pytest.skip(why)
    return vocab / VOCAB_NAME


@functools.lru_cache(maxsize=None)
def tiny_model(py: str, template: str) -> Path:
    """The tiny random gpt-oss of tests/recorded/build_tiny_gptoss.py (copied from ../shared/real), built with
    ``py`` (a Python with torch, transformers, tokenizers, tiktoken and safetensors) and the gpt-oss chat template
    ``template``."""
    build = SHARED_REAL / "build_tiny_gptoss.py"
    return _build(py, [str(build), "--vocab", str(vocab_file()), "--chat-template", template, "--out"],
                  cache_dir("gpt-oss-tiny", build, Path(template), py))


@functools.lru_cache(maxsize=None)
def tiny_models(py: str, template: str) -> dict[str, Path]:
    """tiny_model and two scripted copies of it (make_scripted_gptoss.py): "random" (garbage output), "hello"
    (<|channel|>final<|message|>Hello<|return|>) and "tool" (a get_weather call). Folder names say gpt-oss, as a
    user's download would."""
    script = SHARED_REAL / "make_scripted_gptoss.py"
    base = tiny_model(py, template)
    hello = _build(py, [str(script), "--src", str(base), "--out"], cache_dir("gpt-oss-tiny-hello", script, base.name))
    tool = _build(py, [str(script), "--src", str(base), "--reply", TOOL_REPLY, "--out"],
                  cache_dir("gpt-oss-tiny-tool", script, base.name, TOOL_REPLY))
    return {"random": base, "hello": hello, "tool": tool}


STALE_EOS = [200002, 199999]  # the eos_token_id of gpt-oss's generation_config.json before <|call|> was added


def link_copy(src: Path, dst: Path, generation_config: Optional[dict] = None) -> Path:
    """``src``'s files in a new folder ``dst`` as hard links (copies across file systems), with
    generation_config.json replaced by ``generation_config`` when given (written, never linked, so the source
    stays as it was)."""
    tmp = dst.with_name(dst.name + f".partial-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for f in src.iterdir():
        if f.is_file() and not (generation_config is not None and f.name == "generation_config.json"):
            try:
                os.link(f, tmp / f.name)
            except OSError:
                shutil.copy2(f, tmp / f.name)
    if generation_config is not None:
        (tmp / "generation_config.json").write_text(json.dumps(generation_config, indent=2), encoding="utf-8")
    os.replace(tmp, dst)
    return dst


def stale_model(model: Path) -> Path:
    """``model`` with the stale generation_config.json (eos_token_id [200002, 199999]: no <|call|>), cached beside it."""
    out = cache_dir("gpt-oss-tiny-stale", model.name, json.dumps(STALE_EOS))
    if (out / "generation_config.json").is_file():
        return out
    gen = json.loads((model / "generation_config.json").read_text(encoding="utf-8"))
    gen["eos_token_id"] = STALE_EOS
    return link_copy(model, out, gen)


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
