"""check --deep: the Responses API's built-in python tool (vLLM --tool-server; vLLM #30222), against the vLLM
emulator: a clear skip without a tool server, a pass when the tool's output reaches the model streamed and not, and
the streaming-only loss named as such with the stream=false workaround."""

from __future__ import annotations

import json

import pytest

from tests.emulators import serve


def builtin(cli, url: str) -> tuple[int, dict]:
    r = cli("check", "--json", "--deep", url)
    f = {c["id"]: c for c in r.json()["targets"][0]["checks"]}
    return r.code, f["probe.responses.builtin_tools"]


def test_without_a_tool_server_the_probe_says_so_and_skips(cli):
    with serve("vllm", version="0.26.0") as srv:
        code, f = builtin(cli, srv.url)
    assert f["status"] == "skip" and "--tool-server" in f["detail"], f
    assert code == 0


def test_the_tool_output_reaches_the_model_streamed_and_not(cli):
    with serve("vllm", version="0.26.0", faults=("tool_server",)) as srv:
        code, f = builtin(cli, srv.url)
        bodies = [json.loads(r["body"] or b"null") for r in srv.requests if r["path"] == "/v1/responses"]
    assert f["status"] == "pass", f
    assert any("code_interpreter_call.completed" in e for e in f["evidence"]), f["evidence"]
    assert code == 0
    # two requests with the tool, one streamed, each with its own nonce
    tool_bodies = [b for b in bodies if b and "code_interpreter" in str(b.get("tools"))]
    assert [bool(b.get("stream")) for b in tool_bodies] == [False, True]
    assert tool_bodies[0]["input"] != tool_bodies[1]["input"]


def test_streaming_that_loses_the_tool_output_is_named_with_the_workaround(cli):
    with serve("vllm", version="0.26.0", faults=("tool_server", "builtin_stream_output_lost")) as srv:
        code, f = builtin(cli, srv.url)
    assert code == 1
    assert f["status"] == "fail" and "streaming loses the tool's output" in f["detail"], f
    assert "stream=false" in f["fix"]
    assert "https://github.com/vllm-project/vllm/issues/30222" in f["references"]
    assert "vllm-responses-streaming-code-interpreter-output-lost" in f["kb"]


@pytest.mark.parametrize("engine", ["llama.cpp", "ollama"])
def test_engines_without_built_in_tools_are_skipped_not_failed(cli, engine):
    with serve(engine) as srv:
        code, f = builtin(cli, srv.url)
    assert f["status"] == "skip", f
