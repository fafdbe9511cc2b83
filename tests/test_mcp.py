"""``gptoss-doctor mcp`` through the MCP SDK's own client over a real stdio pipe."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest

mcp = pytest.importorskip("mcp", reason="the MCP SDK is the optional extra gptoss-doctor[mcp]")

from conftest import ROOT  # noqa: E402

HEADLINE = "openai_harmony.HarmonyError: Unexpected token 12606 while expecting start token 200006"


async def _session(fn):
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    params = StdioServerParameters(command=sys.executable, args=["-m", "gptoss_doctor", "mcp"], env=env)
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
