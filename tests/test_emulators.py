"""Tests for the engine emulators: real HTTP servers on 127.0.0.1, talked to with httpx."""
from __future__ import annotations

import json
import os
import sys
import time

import httpx
import pytest

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from tests.emulators import ENGINES, FAULTS, serve  # noqa: E402

TIMEOUT = httpx.Timeout(5.0)
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Get the weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
HI = [{"role": "user", "content": "hi"}]
WEATHER = [{"role": "user", "content": "What is the weather in Paris?"}]


def client(srv, key=None):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=srv.url, timeout=TIMEOUT, headers=headers)


def sse_events(resp):
    """Parse SSE from a streamed httpx response → list of (event, data-str)."""
    events, ev, data = [], None, []
    for line in resp.iter_lines():
        if line == "":
            if data:
                events.append((ev, "\n".join(data)))
            ev, data = None, []
        elif line.startswith(":"):
            continue
        elif line.startswith("event:"):
            ev = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
    if data:
        events.append((ev, "\n".join(data)))
    return events


def stream_chat(c, body, path="/v1/chat/completions"):
    with c.stream("POST", path, json=dict(body, stream=True)) as r:
        assert r.status_code == 200, r.read()
        assert r.headers["content-type"].startswith("text/event-stream")
        return sse_events(r)


def accumulate(events):
    """Accumulate chat chunks → (content, reasoning, tool_calls{idx: {name, arguments}}, finish, errors, done)."""
    content, reasoning, calls, finish, errors, done = "", "", {}, None, [], False
    for _, data in events:
        if data == "[DONE]":
            done = True
            continue
        obj = json.loads(data)
        if "error" in obj:
            errors.append(obj["error"])
            continue
        for ch in obj.get("choices") or []:
            d = ch.get("delta") or {}
            content += d.get("content") or ""
            reasoning += d.get("reasoning") or d.get("reasoning_content") or ""
            for tc in d.get("tool_calls") or []:
                slot = calls.setdefault(tc.get("index", 0), {"name": "", "arguments": ""})
                fn = tc.get("function") or {}
                if fn.get("name") and not slot["name"]:
                    slot["name"] = fn["name"]
                slot["arguments"] += fn.get("arguments") or ""
            finish = ch.get("finish_reason") or finish
    return content, reasoning, calls, finish, errors, done


# ------------------------------------------------------------------------------------- registry
def test_registry():
    for e in ("vllm", "sglang", "lmdeploy", "llama.cpp", "ollama", "litellm"):
        assert e in ENGINES, e
    for f in ("stale_eos", "dup_stream_args", "raw_harmony", "flattened", "no_reasoning_parser",
              "no_tool_parser", "tool_name_leak", "api_key", "slow", "dead", "no_responses_api",
              "responses_tool_output_lost"):
        assert f in FAULTS, f


# ------------------------------------------------------------------------------------- vLLM
def test_vllm_surface():
    with serve("vllm") as srv:
        assert srv.url.startswith("http://127.0.0.1:") and not srv.url.endswith("/")
        assert (srv.engine, srv.version, srv.model) == ("vllm", "0.11.0", "openai/gpt-oss-20b")
        c = client(srv)
        r = c.get("/health")
        assert r.status_code == 200 and r.content == b"" and r.headers["server"] == "uvicorn"
        assert c.get("/version").json() == {"version": "0.11.0"}
        m = c.get("/v1/models").json()
        card = m["data"][0]
        assert m["object"] == "list" and card["owned_by"] == "vllm" and card["max_model_len"] == 131072
        assert card["root"] == "openai/gpt-oss-20b" and card["permission"][0]["allow_search_indices"] is False
        t = c.post("/tokenize", json={"model": srv.model, "prompt": "<|return|><|call|><|endoftext|><|start|>",
                                      "return_token_strs": True}).json()
        assert t["tokens"] == [200002, 200012, 199999, 200006] and t["count"] == 4
        assert t["max_model_len"] == 131072
        d = c.post("/detokenize", json={"model": srv.model, "tokens": [200002, 200012, 199999]}).json()
        assert d == {"prompt": "<|return|><|call|><|endoftext|>"}
        assert c.get("/metrics").text.count("vllm:") > 2
        nf = c.get("/no/such/route")
        assert nf.status_code == 404 and nf.json()["error"]["code"] == 404
        assert c.post("/v1/chat/completions", json={"model": "nope", "messages": HI}).status_code == 404
        paths = [r["path"] for r in srv.requests]
        assert "/health" in paths and "/tokenize" in paths
        assert all(set(r) >= {"method", "path", "headers", "body"} for r in srv.requests)


def test_vllm_chat_and_tools():
    with serve("vllm") as srv:
        c = client(srv)
        r = c.post("/v1/chat/completions", json={"model": srv.model, "messages": HI})
        ch = r.json()["choices"][0]
        assert ch["finish_reason"] == "stop" and ch["message"]["content"].startswith("Hello")
        assert ch["message"]["reasoning_content"] and "stop_reason" in ch
        r = c.post("/v1/chat/completions", json={"model": srv.model, "messages": WEATHER, "tools": TOOLS})
        ch = r.json()["choices"][0]
        assert ch["finish_reason"] == "tool_calls"
        tc = ch["message"]["tool_calls"][0]
        assert tc["function"]["name"] == "get_weather" and json.loads(tc["function"]["arguments"]) == {"city": "Paris"}
        assert tc["id"].startswith("chatcmpl-tool-")
        ev = stream_chat(c, {"model": srv.model, "messages": WEATHER, "tools": TOOLS,
                             "stream_options": {"include_usage": True}})
        content, reasoning, calls, finish, errors, done = accumulate(ev)
        assert done and not errors and finish == "tool_calls" and reasoning
        assert len([e for e in ev if '"arguments"' in e[1]]) >= 3  # fragmented
        assert calls[0]["name"] == "get_weather" and json.loads(calls[0]["arguments"]) == {"city": "Paris"}
        assert json.loads(ev[-2][1])["usage"]["completion_tokens"] > 0
        ev = stream_chat(c, {"model": srv.model, "messages": HI})
        content, reasoning, calls, finish, errors, done = accumulate(ev)
        assert content == "Hello! How can I help you today? 😊" and "—" in reasoning and finish == "stop"


def test_vllm_versions():
    with serve("vllm", version="0.10.1") as srv:
        c = client(srv)
        assert c.get("/version").json()["version"] == "0.10.1"
        r = c.post("/v1/chat/completions", json={"model": srv.model, "messages": WEATHER, "tools": TOOLS,
                                                 "tool_choice": "auto"})
        assert r.status_code == 400
        assert r.json()["error"]["message"] == ('"auto" tool choice requires --enable-auto-tool-choice '
                                                'and --tool-call-parser to be set')
    with serve("vllm", version="0.10.0") as srv:
        r = client(srv).post("/v1/chat/completions", json={"model": srv.model, "messages": WEATHER, "tools": TOOLS})
        assert r.status_code == 400 and r.json()["object"] == "error"
    with serve("vllm", version="0.12.0") as srv:
        msg = client(srv).post("/v1/chat/completions", json={"model": srv.model, "messages": HI}).json()
        msg = msg["choices"][0]["message"]
        assert msg["reasoning"] and msg["reasoning_content"] == msg["reasoning"]
    with serve("vllm", version="0.17.1", model="gpt-oss-120b", max_model_len=32768) as srv:
        c = client(srv)
        assert c.get("/v1/models").json()["data"][0]["max_model_len"] == 32768
        msg = c.post("/v1/chat/completions", json={"model": "gpt-oss-120b", "messages": HI}).json()
        assert "reasoning_content" not in msg["choices"][0]["message"]


def test_vllm_stale_eos():
    with serve("vllm", faults=("stale_eos",)) as srv:
        c = client(srv)
        ok = c.post("/v1/chat/completions", json={"model": srv.model, "messages": HI})
        assert ok.status_code == 200
        r = c.post("/v1/chat/completions", json={"model": srv.model, "messages": WEATHER, "tools": TOOLS})
        assert r.status_code == 500
        assert "openai_harmony.HarmonyError: Unexpected token 12606 while expecting start token 200006" in \
            r.json()["error"]["message"]
        ev = stream_chat(c, {"model": srv.model, "messages": WEATHER, "tools": TOOLS})
        content, reasoning, calls, finish, errors, done = accumulate(ev)
        assert reasoning and errors and "HarmonyError" in errors[0]["message"] and done and not calls


def test_vllm_api_key_and_dead():
    with serve("vllm", faults=("api_key",)) as srv:
        c = client(srv)
        assert c.get("/health").status_code == 200
        assert c.get("/version").status_code == 200  # vLLM only guards /v1/*
        r = c.get("/v1/models")
        assert r.status_code == 401 and r.json() == {"error": "Unauthorized"}
        assert client(srv, "wrong").get("/v1/models").status_code == 401
        assert client(srv, "sk-test").get("/v1/models").status_code == 200
    with serve("vllm", api_key="s3cret") as srv:
        assert client(srv, "s3cret").get("/v1/models").status_code == 200
        assert client(srv, "sk-test").get("/v1/models").status_code == 401
    with serve("vllm", faults=("dead",)) as srv:
        c = client(srv)
        assert c.get("/health").status_code == 503
        assert c.post("/v1/chat/completions", json={"model": srv.model, "messages": HI}).status_code == 503
        assert c.get("/version").status_code == 200


def test_vllm_responses():
    with serve("vllm") as srv:
        c = client(srv)
        r = c.post("/v1/responses", json={"model": srv.model, "input": "hi"}).json()
        assert r["object"] == "response" and r["status"] == "completed"
        assert [o["type"] for o in r["output"]] == ["reasoning", "message"]
        with c.stream("POST", "/v1/responses", json={"model": srv.model, "input": "hi", "stream": True}) as s:
            ev = sse_events(s)
        types = [json.loads(d)["type"] for _, d in ev]
        assert [e for e, _ in ev] == types
        assert types[0] == "response.created" and types[-1] == "response.completed"
        for t in ("response.output_item.added", "response.reasoning_text.delta", "response.reasoning_part.added",
                  "response.output_text.delta"):
            assert t in types
        seqs = [json.loads(d)["sequence_number"] for _, d in ev]
        assert seqs == list(range(len(seqs)))
        tools = [{"type": "function", "name": "get_weather",
                  "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]
        with c.stream("POST", "/v1/responses", json={"model": srv.model, "input": "weather?", "tools": tools,
                                                     "stream": True}) as s:
            ev = sse_events(s)
        objs = [json.loads(d) for _, d in ev]
        args = "".join(o["delta"] for o in objs if o["type"] == "response.function_call_arguments.delta")
        done = [o for o in objs if o["type"] == "response.function_call_arguments.done"][0]
        assert json.loads(args) == {"city": "Paris"} == json.loads(done["arguments"])
        # two-turn with function_call_output
        r1 = c.post("/v1/responses", json={"model": srv.model, "input": "weather?", "tools": tools}).json()
        fc = [o for o in r1["output"] if o["type"] == "function_call"][0]
        r2 = c.post("/v1/responses", json={"model": srv.model, "previous_response_id": r1["id"], "tools": tools,
                                           "input": [{"type": "function_call_output", "call_id": fc["call_id"],
                                                      "output": "22°C and sunny"}]}).json()
        text = [o for o in r2["output"] if o["type"] == "message"][0]["content"][0]["text"]
        assert "22°C and sunny" in text
        assert c.get(f"/v1/responses/{r1['id']}").json()["id"] == r1["id"]
