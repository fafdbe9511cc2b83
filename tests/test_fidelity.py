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
        kw: dict = {"headers": {}}
        if case["body"] is not None:
            kw = {"content": case["body"].encode(), "headers": {"content-type": "application/json"}}
        if case["auth"] and key:  # the "WRONG KEY" exchange sent another key
            kw["headers"]["Authorization"] = "Bearer wrong-key" if "WRONG KEY" in case["title"] else f"Bearer {key}"
        r = httpx.request(case["method"], srv.url + case["path"], timeout=20, **kw)
    want_ct = case["headers"].get("content-type", "").split(";")[0]
    got_ct = r.headers.get("content-type", "").split(";")[0]
    assert (r.status_code, got_ct) == (case["status"], want_ct), r.text[:300]
    assert r.headers.get("server") == case["headers"].get("server")
    assert _top(r.text, got_ct) == _top(case["text"], want_ct), (r.text[:300], case["text"][:300])


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
