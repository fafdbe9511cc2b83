"""Tests for the engine emulators: real HTTP servers on 127.0.0.1, talked to with httpx."""
from __future__ import annotations

import json
import time

import ssl

import httpx
import pytest

from tests.emulators import ENGINES, FAULTS, serve

TIMEOUT = httpx.Timeout(5.0)
_SSL = ssl.create_default_context()  # shared: building one per client is slow
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Get the weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
HI = [{"role": "user", "content": "hi"}]
WEATHER = [{"role": "user", "content": "What is the weather in Paris?"}]


def client(srv, key=None):
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=srv.url, timeout=TIMEOUT, headers=headers, verify=_SSL)


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
        # the call's deltas go out before the error on the token after <|call|> (recorded on 0.26.0)
        assert reasoning and errors and "HarmonyError" in errors[0]["message"] and done and calls
    with serve("vllm", faults=("stale_eos", "no_tool_parser")) as srv:  # without the tool flags: no call delta
        content, reasoning, calls, finish, errors, done = accumulate(stream_chat(
            client(srv), {"model": srv.model, "messages": WEATHER, "tools": TOOLS}))
        assert reasoning and errors and "HarmonyError" in errors[0]["message"] and done and not calls
    with serve("vllm", version="0.32.0", faults=("stale_eos",)) as srv:  # 0.32 skips the bad token: no error
        r = client(srv).post("/v1/chat/completions", json={"model": srv.model, "messages": WEATHER, "tools": TOOLS})
        ch = r.json()["choices"][0]
        assert r.status_code == 200 and ch["message"]["tool_calls"] and ch["stop_reason"] is None


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
        r = c.post("/v1/chat/completions", json={"model": srv.model, "messages": HI})
        assert r.status_code == 500 and r.content == b""  # EngineDeadError → bare 500 (§1.5)
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


# ------------------------------------------------------------------------------------- all engines
HEALTH = {"vllm": "/health", "sglang": "/health", "llama.cpp": "/health", "lmdeploy": "/health",
          "litellm": "/health/liveliness", "trtllm": "/health", "tgi": "/health", "ollama": "/",
          "lmstudio": None}
NO_REASONING = {"tgi"}
NO_RESPONSES = {"tgi"}
GREETING = "Hello! How can I help you today? 😊"


def chat(c, srv, messages, **kw):
    return c.post("/v1/chat/completions", json=dict({"model": srv.model, "messages": messages}, **kw))


def reasoning_of(msg):
    return msg.get("reasoning") or msg.get("reasoning_content")


def raw_stream(c, srv, body):
    with c.stream("POST", "/v1/chat/completions", json=dict({"model": srv.model}, stream=True, **body)) as r:
        return r.status_code, r.read().decode("utf-8")


@pytest.mark.parametrize("engine", ENGINES)
def test_engine_healthy(engine):
    with serve(engine) as srv:
        assert srv.engine == engine and srv.version and srv.model
        c = client(srv)
        if HEALTH[engine]:
            assert c.get(HEALTH[engine]).status_code == 200
        models = c.get("/v1/models")
        assert models.status_code == 200 and srv.model in [m["id"] for m in models.json()["data"]]
        r = chat(c, srv, HI)
        assert r.status_code == 200, r.text
        ch = r.json()["choices"][0]
        assert ch["message"]["content"] == GREETING and ch["finish_reason"] == "stop"
        if engine not in NO_REASONING:
            assert "greeting" in reasoning_of(ch["message"])
        content, reasoning, calls, finish, errors, done = accumulate(stream_chat(c, {"model": srv.model,
                                                                                     "messages": HI}))
        assert content == GREETING and finish == "stop" and done and not errors and not calls
        assert (not reasoning) == (engine in NO_REASONING)
        # tools: call to the first tool with schema-derived arguments
        r = chat(c, srv, WEATHER, tools=TOOLS)
        ch = r.json()["choices"][0]
        assert ch["finish_reason"] == "tool_calls"
        tc = ch["message"]["tool_calls"][0]
        assert tc["function"]["name"] == "get_weather"
        assert json.loads(tc["function"]["arguments"]) == {"city": "Paris"}
        content, reasoning, calls, finish, errors, done = accumulate(
            stream_chat(c, {"model": srv.model, "messages": WEATHER, "tools": TOOLS}))
        assert calls[0]["name"] == "get_weather" and json.loads(calls[0]["arguments"]) == {"city": "Paris"}
        assert finish == "tool_calls" and done
        # tool result turn
        follow = WEATHER + [{"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "22°C, sunny"}]
        r = chat(c, srv, follow, tools=TOOLS)
        assert "22°C, sunny" in r.json()["choices"][0]["message"]["content"]
        # second tool in the list is chosen when named
        tools2 = TOOLS + [{"type": "function", "function": {"name": "search", "parameters": {
            "type": "object", "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}}}}]
        r = chat(c, srv, WEATHER, tools=tools2, tool_choice={"type": "function", "function": {"name": "search"}})
        tc = r.json()["choices"][0]["message"]["tool_calls"][0]["function"]
        assert tc["name"] == "search" and json.loads(tc["arguments"]) == {"query": "weather in Paris", "limit": 1}
        # max_tokens → finish_reason length
        r = chat(c, srv, HI, max_tokens=3)
        assert r.json()["choices"][0]["finish_reason"] == "length"
        # Responses API
        r = c.post("/v1/responses", json={"model": srv.model, "input": "hi"})
        if engine in NO_RESPONSES:
            assert r.status_code == 404
        else:
            out = r.json()["output"]
            assert out[-1]["type"] == "message" and out[-1]["content"][0]["text"] == GREETING
            with c.stream("POST", "/v1/responses", json={"model": srv.model, "input": "hi", "stream": True}) as s:
                types = [json.loads(d)["type"] for _, d in sse_events(s)]
            assert types[0] == "response.created" and types[-1] == "response.completed"
            assert "response.output_text.delta" in types and "response.output_item.added" in types
        assert len(srv.requests) >= 8


@pytest.mark.parametrize("engine", ENGINES)
def test_fault_raw_harmony_and_flattened(engine):
    with serve(engine, faults=("raw_harmony",)) as srv:
        c = client(srv)
        msg = chat(c, srv, HI).json()["choices"][0]["message"]
        assert msg["content"].startswith("<|channel|>analysis<|message|>")
        assert msg["content"].endswith("<|end|><|start|>assistant<|channel|>final<|message|>" + GREETING)
        assert not reasoning_of(msg)
        content, reasoning, *_ = accumulate(stream_chat(c, {"model": srv.model, "messages": HI}))
        assert content == msg["content"] and not reasoning
    with serve(engine, faults=("flattened",)) as srv:
        c = client(srv)
        msg = chat(c, srv, HI).json()["choices"][0]["message"]
        assert msg["content"].startswith("analysisThe user says hi") and "assistantfinalHello!" in msg["content"]
        assert "<|" not in msg["content"] and not reasoning_of(msg)


@pytest.mark.parametrize("engine", ENGINES)
def test_fault_parsers(engine):
    with serve(engine, faults=("no_reasoning_parser",)) as srv:
        c = client(srv)
        msg = chat(c, srv, HI).json()["choices"][0]["message"]
        assert msg["content"] == GREETING and not reasoning_of(msg)
        content, reasoning, *_ = accumulate(stream_chat(c, {"model": srv.model, "messages": HI}))
        assert content == GREETING and not reasoning
    with serve(engine, faults=("no_tool_parser",)) as srv:
        c = client(srv)
        ch = chat(c, srv, WEATHER, tools=TOOLS).json()["choices"][0]
        assert not ch["message"].get("tool_calls") and ch["finish_reason"] == "stop"
        assert json.loads(ch["message"]["content"]) == {"name": "get_weather", "arguments": {"city": "Paris"}}
        content, reasoning, calls, finish, *_ = accumulate(
            stream_chat(c, {"model": srv.model, "messages": WEATHER, "tools": TOOLS}))
        assert not calls and '"get_weather"' in content and finish == "stop"
    with serve(engine, faults=("tool_name_leak",)) as srv:
        c = client(srv)
        tc = chat(c, srv, WEATHER, tools=TOOLS).json()["choices"][0]["message"]["tool_calls"][0]
        assert tc["function"]["name"] == "get_weather<|channel|>commentary"


@pytest.mark.parametrize("engine", ENGINES)
def test_fault_dup_stream_args(engine):
    with serve(engine, faults=("dup_stream_args",)) as srv:
        c = client(srv)
        tc = chat(c, srv, WEATHER, tools=TOOLS).json()["choices"][0]["message"]["tool_calls"][0]
        assert json.loads(tc["function"]["arguments"]) == {"city": "Paris"}
        _, _, calls, *_ = accumulate(stream_chat(c, {"model": srv.model, "messages": WEATHER, "tools": TOOLS}))
        assert calls[0]["arguments"] != tc["function"]["arguments"]
        with pytest.raises(ValueError):
            json.loads(calls[0]["arguments"])


@pytest.mark.parametrize("engine", ENGINES)
def test_fault_stale_eos(engine):
    with serve(engine, faults=("stale_eos",)) as srv:
        c = client(srv)
        assert chat(c, srv, HI).status_code == 200  # plain answers still end at <|return|>
        r = chat(c, srv, WEATHER, tools=TOOLS)
        assert r.status_code in (422, 500), r.text
        status, raw = raw_stream(c, srv, {"messages": WEATHER, "tools": TOOLS})
        # vLLM streams the call's deltas before the error (recorded on 0.26.0); the others fail before the call
        assert status == 200 and "error" in raw and ('"tool_calls"' in raw) == (engine == "vllm")
        first = raw.split("\n\n")[0]
        assert first.startswith("data: {")  # some normal chunks first
        if engine == "vllm":
            assert "openai_harmony.HarmonyError: Unexpected token 12606 while expecting start token 200006" in \
                r.json()["error"]["message"]


def test_stale_eos_exposed_ids():
    with serve("ollama") as srv:
        info = client(srv).post("/api/show", json={"model": srv.model}).json()
        assert info["model_info"]["tokenizer.ggml.eos_token_ids"] == [199999, 200002, 200012]
    with serve("ollama", faults=("stale_eos",)) as srv:
        info = client(srv).post("/api/show", json={"model": srv.model}).json()
        assert info["model_info"]["tokenizer.ggml.eos_token_ids"] == [199999, 200002]
        assert 'stop' in info["parameters"] and "<|call|>" not in info["parameters"]


@pytest.mark.parametrize("engine", ENGINES)
def test_fault_api_key(engine):
    with serve(engine, faults=("api_key",)) as srv:
        assert srv.api_key == "sk-test"
        c = client(srv)
        if HEALTH[engine]:
            assert c.get(HEALTH[engine]).status_code == 200
        assert chat(c, srv, HI).status_code == 401
        assert chat(client(srv, "wrong"), srv, HI).status_code == 401
        assert chat(client(srv, "sk-test"), srv, HI).status_code == 200


@pytest.mark.parametrize("engine", ENGINES)
def test_fault_dead(engine):
    with serve(engine, faults=("dead",)) as srv:
        c = client(srv)
        if HEALTH[engine] and engine not in ("ollama", "litellm"):
            assert c.get(HEALTH[engine]).status_code == 503
        r = chat(c, srv, HI)
        assert r.status_code >= 400


@pytest.mark.parametrize("engine", [e for e in ENGINES if e not in NO_RESPONSES])
def test_fault_responses(engine):
    tools = [{"type": "function", "name": "get_weather",
              "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]
    with serve(engine, faults=("no_responses_api",)) as srv:
        r = client(srv).post("/v1/responses", json={"model": srv.model, "input": "hi"})
        assert r.status_code == 404 or (engine == "lmstudio" and "Unexpected endpoint" in r.text)
    for faults, expect in (((), "22°C"), (("responses_tool_output_lost",), "don't have the result")):
        with serve(engine, faults=faults) as srv:
            c = client(srv)
            r1 = c.post("/v1/responses", json={"model": srv.model, "input": "weather in Paris?", "tools": tools})
            fc = [o for o in r1.json()["output"] if o["type"] == "function_call"][0]
            assert json.loads(fc["arguments"]) == {"city": "Paris"}
            r2 = c.post("/v1/responses", json={
                "model": srv.model, "tools": tools,
                "input": [{"role": "user", "content": "weather in Paris?"},
                          {"type": "function_call", "call_id": fc["call_id"], "name": "get_weather",
                           "arguments": fc["arguments"]},
                          {"type": "function_call_output", "call_id": fc["call_id"], "output": "22°C"}]})
            text = [o for o in r2.json()["output"] if o["type"] == "message"][0]["content"][0]["text"]
            assert expect in text


def test_fault_slow():
    with serve("vllm", faults=("slow",)) as srv:
        assert srv.delay == 1.5
    with serve("sglang", faults=("slow",), delay=0.3) as srv:
        t0 = time.monotonic()
        assert client(srv).get("/health").status_code == 200
        assert time.monotonic() - t0 >= 0.3


def test_unknown_engine_and_fault():
    with pytest.raises(ValueError):
        with serve("nope"):
            pass
    with pytest.raises(ValueError):
        with serve("vllm", faults=("bogus",)):
            pass


# ------------------------------------------------------------------------------------- engine specifics
def test_sglang_specifics():
    with serve("sglang") as srv:
        c = client(srv)
        info = c.get("/get_server_info").json()
        assert info["version"] == srv.version and info["reasoning_parser"] == "gpt-oss"
        assert c.get("/server_info").json()["tool_call_parser"] == "gpt-oss"
        assert c.get("/model_info").json()["model_type"] == "gpt_oss"
        m = c.get("/v1/models").json()["data"][0]
        assert m["owned_by"] == "sglang" and m["max_model_len"] == 131072
        t = c.post("/tokenize", json={"model": srv.model, "prompt": "<|return|>"}).json()
        assert t["tokens"] == [200002] and t["max_model_len"] > 10 ** 20
        assert c.post("/detokenize", json={"tokens": [200012], "skip_special_tokens": False}).json() == \
            {"text": "<|call|>"}
        ch = chat(c, srv, WEATHER, tools=TOOLS).json()["choices"][0]
        assert ch["matched_stop"] == 200012
        assert c.get("/nope").json()["object"] == "error"
        r = c.post("/v1/chat/completions", content=b"{}", headers={"content-type": "text/plain"})
        assert r.status_code == 400 and "Unsupported Media Type" in r.text
    with serve("sglang", faults=("api_key",)) as srv:
        c = client(srv)
        assert c.get("/health").status_code == 200
        r = c.get("/get_server_info")
        assert r.status_code == 401 and r.json() == {"error": "Unauthorized"}


def test_llamacpp_specifics():
    with serve("llama.cpp") as srv:
        c = client(srv)
        r = c.get("/props")
        assert r.headers["server"] == "llama.cpp"
        p = r.json()
        assert p["build_info"].startswith("b7900-") and p["eos_token"] == "<|return|>"
        assert p["default_generation_settings"]["n_ctx"] == 131072
        m = c.get("/v1/models").json()
        assert m["data"][0]["owned_by"] == "llamacpp" and m["data"][0]["meta"]["n_ctx_train"] == 131072
        assert m["models"][0]["digest"] == ""
        assert srv.model.endswith(".gguf")
        assert c.post("/tokenize", json={"content": "<|call|>"}).json() == {"tokens": [200012]}
        assert c.post("/detokenize", json={"tokens": [200002]}).json() == {"content": "<|return|>"}
        assert c.get("/slots").json()[0]["params"]["chat_format"] == "GPT-OSS"
        assert c.get("/nope").json() == {"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}}
        assert "<html" in c.get("/").text
    with serve("llama.cpp", version="b6100") as srv:
        assert client(srv).post("/v1/responses", json={"input": "hi"}).status_code == 404
    with serve("llama.cpp", faults=("dead",)) as srv:
        c = client(srv)
        r = c.get("/health")
        assert r.status_code == 503 and r.json()["error"]["message"] == "Loading model"
        assert c.get("/v1/models").status_code == 200
    with serve("llama.cpp", faults=("api_key",)) as srv:
        c = client(srv)
        assert c.get("/v1/models").status_code == 200
        r = c.get("/props")
        assert r.status_code == 401 and r.json()["error"]["message"] == "Invalid API Key"
        assert c.get("/props", headers={"X-Api-Key": "sk-test"}).status_code == 200
    with serve("llama.cpp", faults=("stale_eos",)) as srv:
        status, raw = raw_stream(client(srv), srv, {"messages": WEATHER, "tools": TOOLS})
        assert "\nerror: {" in raw and "[DONE]" not in raw


def test_ollama_specifics():
    with serve("ollama") as srv:
        c = client(srv)
        r = c.get("/")
        assert r.text == "Ollama is running" and "server" not in r.headers
        assert c.get("/api/version").json() == {"version": srv.version}
        assert c.get("/api/tags").json()["models"][0]["name"] == "gpt-oss:20b"
        assert c.get("/v1/models").json()["data"][0]["owned_by"] == "library"
        assert c.get("/api/ps").json()["models"][0]["context_length"] == 8192
        body = chat(c, srv, HI).json()
        assert body["system_fingerprint"] == "fp_ollama" and body["choices"][0]["message"]["reasoning"]
        ev = stream_chat(c, {"model": srv.model, "messages": WEATHER, "tools": TOOLS})
        tc_chunks = [e for e in ev if '"tool_calls":[' in e[1]]
        assert len(tc_chunks) == 1  # complete call in one chunk
        with c.stream("POST", "/api/chat", json={"model": srv.model, "messages": HI}) as s:
            lines = [json.loads(x) for x in s.iter_lines() if x]
        assert lines[-1]["done"] is True and "".join(x["message"]["content"] for x in lines) == GREETING
        assert "".join(x["message"].get("thinking", "") for x in lines)
        r = c.post("/api/chat", json={"model": srv.model, "messages": WEATHER, "tools": TOOLS, "stream": False})
        assert r.json()["message"]["tool_calls"][0]["function"]["arguments"] == {"city": "Paris"}
        assert c.post("/api/chat", json={"model": "llama3", "messages": HI}).status_code == 404
        assert c.get("/nope").text == "404 page not found"
        with c.stream("POST", "/v1/responses", json={"model": srv.model, "input": "hi", "stream": True}) as s:
            types = [json.loads(d)["type"] for _, d in sse_events(s)]
        assert "response.reasoning_summary_text.delta" in types


def test_lmdeploy_litellm_lmstudio_trtllm_tgi_specifics():
    with serve("lmdeploy") as srv:
        c = client(srv)
        assert c.get("/health").json()["status"] == "healthy"
        card = c.get("/v1/models").json()["data"][0]
        assert card["owned_by"] == "lmdeploy" and "max_model_len" not in card
        assert card["permission"][0]["allow_search_indices"] is True
        e = c.post("/v1/encode", json={"input": "<|return|>", "add_bos": False}).json()
        assert e == {"input_ids": [200002], "length": 1}
    with serve("lmdeploy", faults=("api_key",)) as srv:
        r = client(srv).get("/v1/models")
        assert r.status_code == 401 and r.json()["type"] == "authentication_error"
    with serve("litellm") as srv:
        c = client(srv)
        assert c.get("/health/liveliness").json() == "I'm alive!"
        assert c.get("/health/readiness").json()["litellm_version"] == srv.version
        m = c.get("/v1/models").json()["data"][0]
        assert m == {"id": "gpt-oss-20b", "object": "model", "created": 1677610602, "owned_by": "openai"}
        r = chat(c, srv, HI)
        assert r.headers["x-litellm-version"] == srv.version and "reasoning_content" in r.json()["choices"][0]["message"]
    with serve("litellm", faults=("api_key",)) as srv:
        c = client(srv)
        assert c.get("/health/readiness").status_code == 200
        r = c.get("/v1/models")
        assert r.status_code == 401 and r.json()["error"]["code"] == "401"
    with serve("lmstudio") as srv:
        c = client(srv)
        r = c.get("/props")
        assert r.status_code == 200 and r.json() == {"error": "Unexpected endpoint or method. (GET /props)"}
        m = c.get("/v1/models").json()["data"][0]
        assert m["owned_by"] == "organization_owner" and "created" not in m
        v0 = c.post("/api/v0/chat/completions", json={"model": srv.model, "messages": HI}).json()
        assert v0["runtime"]["version"] and v0["stats"]["stop_reason"] == "eosFound"
    with serve("trtllm") as srv:
        c = client(srv)
        assert c.get("/version").json() == {"version": srv.version}
        assert isinstance(c.get("/metrics").json(), list)
        assert c.get("/v1/models").json()["data"][0]["owned_by"] == "tensorrt_llm"
        ev = stream_chat(c, {"model": srv.model, "messages": WEATHER, "tools": TOOLS})
        names = [json.loads(d)["choices"][0]["delta"]["tool_calls"][0]["function"]["name"]
                 for _, d in ev if '"tool_calls":[' in d]
        assert len(names) > 1 and set(names) == {"get_weather"}
    with serve("tgi", faults=("api_key",)) as srv:
        c = client(srv)
        info = c.get("/info").json()
        assert info["router"] == "text-generation-router" and info["version"] == "3.3.7"
        assert c.get("/v1/models").json()["data"][0]["created"] == 0
        r = chat(c, srv, HI)
        assert r.status_code == 401 and r.content == b""
        r = chat(client(srv, "sk-test"), srv, HI)
        assert r.json()["system_fingerprint"] == "3.3.7-native" and "x-compute-type" in r.headers


def test_not_llm():
    with serve("not-llm") as srv:
        c = client(srv)
        r = c.get("/")
        assert r.status_code == 200 and r.headers["server"].startswith("nginx") and "<html" in r.text
        for path in ("/v1/models", "/health", "/version"):
            r = c.get(path)
            assert r.status_code == 404 and "text/html" in r.headers["content-type"]
        assert chat(c, srv, HI).status_code == 404


# ------------------------------------------------------------------------------------- transport
def test_stream_is_chunked_and_split_awkwardly():
    with serve("vllm") as srv:
        with httpx.Client(base_url=srv.url, timeout=TIMEOUT, verify=_SSL) as c:
            with c.stream("POST", "/v1/chat/completions", json={"model": srv.model, "messages": HI, "stream": True}) as r:
                assert r.headers["transfer-encoding"] == "chunked"
                pieces = list(r.iter_raw())
        data = b"".join(pieces)
        assert data.endswith(b"data: [DONE]\n\n")
        assert len(pieces) > 20
        bad_utf8 = 0
        for p in pieces:
            try:
                p.decode("utf-8")
            except UnicodeDecodeError:
                bad_utf8 += 1
        assert bad_utf8 >= 1  # some piece ends/starts inside a multibyte character
        assert any(p.endswith(b"da") or p.endswith(b"dat") or p.endswith(b"d") for p in pieces)


def test_many_servers_and_clean_shutdown():
    import contextlib
    with contextlib.ExitStack() as stack:
        srvs = [stack.enter_context(serve(e)) for e in ENGINES]
        assert len({s.url for s in srvs}) == len(srvs)
        for s in srvs:
            assert httpx.get(s.url + "/v1/models", timeout=TIMEOUT, verify=_SSL).status_code == 200
    # shutting down while a slow response is pending must not hang
    t0 = time.monotonic()
    with serve("vllm", faults=("slow",), delay=30) as srv:
        import threading
        th = threading.Thread(target=lambda: _swallow(lambda: httpx.get(srv.url + "/version", timeout=2, verify=_SSL)),
                              daemon=True)
        th.start()
        time.sleep(0.1)
    th.join(timeout=5)
    assert time.monotonic() - t0 < 5


def _swallow(fn):
    try:
        fn()
    except Exception:
        pass


def test_http10_stream_and_request_log():
    import socket
    with serve("sglang", faults="no_reasoning_parser") as srv:
        assert srv.faults == ("no_reasoning_parser",)
        host, port = srv.url[len("http://"):].split(":")
        body = json.dumps({"model": srv.model, "messages": HI, "stream": True}).encode()
        with socket.create_connection((host, int(port)), timeout=5) as s:
            s.sendall(b"POST /v1/chat/completions HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"X-Custom: Yes\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            data = b""
            while len(data) < 1_000_000:
                d = s.recv(65536)
                if not d:
                    break
                data += d
        head, _, payload = data.partition(b"\r\n\r\n")
        assert b"transfer-encoding" not in head.lower() and payload.endswith(b"data: [DONE]\n\n")
        rec = srv.requests[-1]
        assert rec["method"] == "POST" and rec["path"] == "/v1/chat/completions"
        assert rec["headers"]["x-custom"] == "Yes" and rec["body"] == body
