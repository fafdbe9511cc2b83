"""``gptoss-doctor mcp`` through the MCP SDK's own client over a real stdio pipe."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

mcp = pytest.importorskip("mcp", reason="the MCP SDK is the optional extra gptoss-doctor[mcp]")

from conftest import ROOT  # noqa: E402

HEADLINE = "openai_harmony.HarmonyError: Unexpected token 12606 while expecting start token 200006"


async def _session(fn, args: tuple[str, ...] = (), env: dict | None = None):
    """``fn(session)`` against ``gptoss-doctor mcp ARGS`` started as a child (``env`` added to its environment)."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {**os.environ, **(env or {})}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    params = StdioServerParameters(command=sys.executable, args=["-m", "gptoss_doctor", "mcp", *args], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            return await asyncio.wait_for(fn(session), timeout=120)


def _doc(result) -> dict:
    if getattr(result, "structured_content", None):
        sc = result.structured_content
        return sc.get("result", sc) if isinstance(sc, dict) and set(sc) == {"result"} else sc
    return json.loads(result.content[0].text)


def test_tools_are_listed_and_explain_answers_with_the_cli_json(vocab_dir):
    async def go(session):
        tools = await session.list_tools()
        names = {t.name for t in tools.tools}
        assert {"explain", "decode", "kb_search", "kb_show", "check", "scan", "fix_config_plan",
                "fix_config_apply"} <= names
        explain = next(t for t in tools.tools if t.name == "explain")
        assert explain.input_schema["properties"]["text"]["type"] == "string"
        doc = _doc(await session.call_tool("explain", {"text": HEADLINE}))
        assert doc["command"] == "explain" and doc["ok"] is True
        assert doc["matches"][0]["id"] == "stale-generation-config-call-token"
        shown = _doc(await session.call_tool("kb_show", {"entry_id": "stale-generation-config-call-token"}))
        assert shown["command"] == "kb show" and shown["entry"]["id"] == "stale-generation-config-call-token"
        found = _doc(await session.call_tool("kb_search", {"query": "streamed tool call arguments duplicated lmdeploy"}))
        assert found["command"] == "kb search" and found["ok"] is True
        refused = _doc(await session.call_tool("fix_config_apply", {"confirm": False}))
        assert refused["ok"] is False and refused["error"]["kind"] == "usage"
        dec = _doc(await session.call_tool("decode", {"ids": [200006, 200012]}))
        assert [t["text"] for t in dec["tokens"]] == ["<|start|>", "<|call|>"]

    asyncio.run(_session(go))


def _call(session, name, args):
    """(document, isError) of one tool call; the document must be JSON in the text content too."""
    async def go():
        res = await session.call_tool(name, args)
        doc = json.loads(res.content[0].text)
        assert _doc(res) == doc
        return doc, res.is_error
    return go()


KEYS = {"OPENAI_API_KEY": "sk-allowed-key-0123456789", "AWS_SECRET_ACCESS_KEY": "S3cretAwsValue",
        "HF_TOKEN": "hf_S3cretHubTokenValue0123456789"}


def test_check_never_sends_a_variable_the_agent_picks_to_a_host_it_picks():
    """An agent cannot pick the variable (AWS_SECRET_ACCESS_KEY, HF_TOKEN, even OPENAI_API_KEY) nor the host:
    refused with a JSON document, nothing sent. Without api_key_env no key goes anywhere (the child does not
    inherit OPENAI_API_KEY)."""
    from hostile import recorder

    with recorder("localhost") as other:
        async def go(session):
            for var in ("AWS_SECRET_ACCESS_KEY", "HF_TOKEN", "OPENAI_API_KEY"):
                doc, is_error = await _call(session, "check", {"url": other.url, "quick": True, "api_key_env": var})
                assert doc["ok"] is False and is_error and doc["error"]["kind"] == "usage", doc
            assert other.requests == []  # refused before anything was sent
            doc, _ = await _call(session, "check", {"url": other.url, "quick": True})
            assert doc["command"] == "check" and other.requests  # it ran, without a key

        asyncio.run(_session(go, env=KEYS))
        sent = [r["headers"].get("authorization") for r in other.requests]
    assert sent and not any(sent), sent


def test_check_sends_the_allowed_key_to_the_host_the_person_named_only():
    from hostile import recorder

    with recorder("127.0.0.1") as named, recorder("localhost") as other:
        async def go(session):
            doc, is_error = await _call(session, "check", {"url": other.url, "quick": True,
                                                           "api_key_env": "AWS_SECRET_ACCESS_KEY"})
            assert is_error and "only OPENAI_API_KEY" in doc["error"]["message"]
            doc, is_error = await _call(session, "check", {"url": other.url, "quick": True,
                                                           "api_key_env": "OPENAI_API_KEY"})
            assert is_error and "localhost" in doc["error"]["message"] and "not one of them" in doc["error"]["message"]
            assert other.requests == []
            doc, _ = await _call(session, "check", {"url": named.url, "quick": True, "api_key_env": "OPENAI_API_KEY"})
            assert doc["command"] == "check" and named.requests

        asyncio.run(_session(go, ("--allow-host", f"127.0.0.1:{named.port}"), KEYS))
        sent = {r["headers"].get("authorization") for r in named.requests}
    assert sent - {None} == {"Bearer sk-allowed-key-0123456789"}  # (one probe asks without a key)


def test_mcp_refuses_a_malformed_allow_host():
    r = subprocess.run([sys.executable, "-m", "gptoss_doctor", "mcp", "--allow-host", "user:pw@host"],
                       capture_output=True, stdin=subprocess.DEVNULL, timeout=60,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 2 and b"not a host name" in r.stderr and b"pw" not in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-m", "gptoss_doctor", "mcp", "--api-key-env", "A B"], capture_output=True,
                       stdin=subprocess.DEVNULL, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert r.returncode == 2 and b"not an environment variable name" in r.stderr, r.stderr


def test_fix_config_apply_demands_a_json_boolean(tmp_path):
    folder = tmp_path / "gpt-oss-20b"
    folder.mkdir()
    (folder / "generation_config.json").write_text('{"eos_token_id": [200002, 199999]}')

    async def go(session):
        for lax in ("yes", "true", "on", 1, "1"):
            doc, is_error = await _call(session, "fix_config_apply", {"confirm": lax, "target": str(folder)})
            assert doc["ok"] is False and is_error and doc["error"]["kind"] == "usage", (lax, doc)
            assert "confirm" in doc["error"]["message"]
        doc, is_error = await _call(session, "fix_config_apply", {"confirm": False, "target": str(folder)})
        assert is_error and doc["error"]["kind"] == "usage"

    asyncio.run(_session(go, env={"HF_HUB_OFFLINE": "1"}))
    assert (folder / "generation_config.json").read_text() == '{"eos_token_id": [200002, 199999]}'


def test_tool_contract_refusals_errors_and_annotations():
    """decode of 20,000 IDs is refused (ok false), not cut to 10,000; a NUL in a string argument and a wrong type
    get a usage document; failed documents carry isError; annotations say what the tools do; descriptions are
    one paragraph without the docstring's indentation."""
    async def go(session):
        doc, is_error = await _call(session, "decode", {"ids": list(range(20000))})
        assert doc["ok"] is False and is_error and "too many IDs (20000)" in doc["error"]["message"]
        doc, is_error = await _call(session, "kb_search", {"query": "tool\x00calls"})
        assert doc["ok"] is False and is_error and doc["error"]["kind"] == "usage" and "NUL" in doc["error"]["message"]
        doc, is_error = await _call(session, "decode", {"ids": "x"})
        assert doc["ok"] is False and is_error and doc["error"]["message"].startswith("invalid arguments: ids")
        doc, is_error = await _call(session, "kb_show", {"entry_id": "no-such-entry"})
        assert doc["ok"] is False and is_error and doc["error"]["exit_code"] == 2
        doc, is_error = await _call(session, "decode", {"ids": [200006]})
        assert doc["ok"] is True and not is_error
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert tools["fix_config_plan"].annotations.open_world_hint is True
        assert tools["fix_config_apply"].annotations.destructive_hint is True
        for t in tools.values():
            assert "\n" not in t.description and "  " not in t.description, (t.name, t.description)

    asyncio.run(_session(go))


def test_errors_that_the_cli_puts_on_stderr_are_in_the_document():
    from gptoss_doctor.mcp_server import _run

    doc = _run(["kb", "search", "--json", "--no-such-option", "x"], 30)  # a usage error from the CLI's parser
    assert doc["ok"] is False and "see stderr" not in doc["error"]["message"]
    assert "no-such-option" in doc["error"]["message"]


def test_malformed_requests_get_a_json_rpc_error():
    """JSON-RPC 2.0 (section 5.1): a line that is not JSON gets -32700 with id null, a message that is not a
    request -32600 (with its id when it has one); the server then goes on answering."""
    import select
    import time

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "gptoss_doctor", "mcp"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)

    def send(line: str) -> None:
        proc.stdin.write(line.encode() + b"\n")
        proc.stdin.flush()

    def answer() -> dict | None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 1.0)
            if ready:
                return json.loads(proc.stdout.readline())
        return None

    try:
        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
        assert answer()["id"] == 1
        send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        send("{not json")
        assert answer() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
        send('{"jsonrpc": "2.0", "id": 8}')
        got = answer()
        assert got["id"] == 8 and got["error"]["code"] == -32600
        send('{"jsonrpc": "2.0", "id": "s", "method": "tools/call", "params": "bad"}')
        got = answer()
        assert got["id"] == "s" and got["error"]["code"] == -32600
        send("[1, 2]")
        assert answer()["error"]["code"] == -32600
        send(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}))
        assert answer()["id"] == 9
    finally:
        proc.stdin.close()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
