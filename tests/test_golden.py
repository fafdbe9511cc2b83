"""Golden outputs: JSON documents, exit codes and a few human/markdown reports, pinned before the package layout
changed (issue 8) so that moving code cannot change what users and scripts read. The knowledge base is a frozen
copy (tests/golden/knowledge) so that new entries do not move these files."""

from __future__ import annotations

import json
from dataclasses import astuple

import pytest

from tests.emulators import ENGINES, serve
from tests.golden import KNOWLEDGE, assert_golden, normalise, normalise_json
from tests.hostile import closed_port

HEADLINE = "openai_harmony.HarmonyError: Unexpected token 12606 while expecting start token 200006"
EXPLAIN = {
    "headline": HEADLINE,
    "leak": "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"Paris\"}<|call|>",
    "stale-config": "vLLM 0.10.1 gpt-oss-120b: openai_harmony.HarmonyError: unexpected tokens remaining in message header",
    "cuda-oom": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "nothing": "the weather is nice today",
}
CHECK = [  # (name, engine, faults, extra args)
    *[(f"{e}-healthy", e, (), []) for e in ENGINES],
    ("vllm-deep", "vllm", (), ["--deep"]),
    ("transformers-deep", "transformers", (), ["--deep"]),
    ("vllm-quick", "vllm", (), ["--quick"]),
    ("vllm-stale_eos", "vllm", ("stale_eos",), []),
    ("vllm-raw_harmony", "vllm", ("raw_harmony",), []),
    ("vllm-no_reasoning_parser", "vllm", ("no_reasoning_parser",), []),
    ("vllm-tool_name_leak", "vllm", ("tool_name_leak",), []),
    ("vllm-dead", "vllm", ("dead",), []),
    ("vllm-api_key", "vllm", ("api_key",), []),
    ("vllm-no_responses_api", "vllm", ("no_responses_api",), ["--deep"]),
    ("vllm-responses_tool_output_lost", "vllm", ("responses_tool_output_lost",), ["--deep"]),
    ("vllm-structured_harmony", "vllm", ("structured_harmony",), ["--deep"]),
    ("vllm-garbage", "vllm", ("garbage",), []),
    ("sglang-flattened", "sglang", ("flattened",), []),
    ("sglang-no_tool_parser", "sglang", ("no_tool_parser",), []),
    ("lmdeploy-dup_stream_args", "lmdeploy", ("dup_stream_args",), []),
    ("litellm-backend_key_wrong", "litellm", ("backend_key_wrong",), []),
    ("litellm-backend_cooldown", "litellm", ("backend_cooldown",), []),
]


@pytest.fixture(autouse=True)
def _frozen_kb(monkeypatch, vocab_dir):
    monkeypatch.setenv("GPTOSS_DOCTOR_KNOWLEDGE", str(KNOWLEDGE))
    monkeypatch.setenv("TIKTOKEN_ENCODINGS_BASE", str(vocab_dir))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "80")
    from gptoss_doctor.check.link import reset_kb_cache

    reset_kb_cache()  # the check pipeline caches the KB per process
    yield
    reset_kb_cache()


def doc_with_code(code: int, out: str) -> dict:
    doc = json.loads(out)  # exactly one document on stdout
    return {"exit": code, "doc": doc}


@pytest.mark.parametrize("name", EXPLAIN)
def test_explain_json(name, cli):
    code, out, _ = astuple(cli("explain", "--json", EXPLAIN[name]))
    assert_golden(f"explain-{name}.json", normalise_json(doc_with_code(code, out)))


@pytest.mark.parametrize("name", ["headline", "leak", "nothing"])
def test_explain_human(name, cli):
    code, out, _ = astuple(cli("explain", EXPLAIN[name]))
    assert_golden(f"explain-{name}.txt", f"exit {code}\n" + normalise(out))


@pytest.mark.parametrize("args", [["decode", "--json", "200006", "17360", "200008"], ["decode", "--json", "999999999"],
                                  ["explain", "--json", "--file", "/nonexistent/x.log"], ["kb", "show", "--json", "stale-generation-config-call-token"],
                                  ["kb", "list", "--json", "--engine", "tgi"], ["kb", "show", "--json", "no-such-entry"],
                                  ["check", "--json", "--targets", "/dev/null"], ["check", "--json", "--quick", "--deep", "http://x"]],
                         ids=["decode", "decode-bad", "explain-nofile", "kb-show", "kb-list", "kb-show-missing",
                              "check-nourl", "check-usage"])
def test_other_json(args, cli, request):
    code, out, _ = astuple(cli(*args))
    assert_golden(f"{request.node.callspec.id}.json", normalise_json(doc_with_code(code, out)))


@pytest.mark.parametrize("name,engine,faults,extra", CHECK, ids=[c[0] for c in CHECK])
def test_check_json(name, engine, faults, extra, cli):
    with serve(engine, faults=faults) as srv:
        code, out, _ = astuple(cli("check", "--json", "--timeout", "5", *extra, srv.url))
    assert_golden(f"check-{name}.json", normalise_json(doc_with_code(code, out)))


def test_check_unreachable_json(cli):
    code, out, _ = astuple(cli("check", "--json", "--timeout", "2", f"http://127.0.0.1:{closed_port()}"))
    assert_golden("check-unreachable.json", normalise_json(doc_with_code(code, out)))


@pytest.mark.parametrize("fmt", ["human", "markdown"])
def test_check_reports(fmt, cli):
    with serve("vllm", faults=("stale_eos",)) as srv:
        code, out, _ = astuple(cli("check", "--timeout", "5", *(["--markdown"] if fmt == "markdown" else []), srv.url))
    assert_golden(f"check-vllm-stale_eos.{'md' if fmt == 'markdown' else 'txt'}", f"exit {code}\n" + normalise(out))
