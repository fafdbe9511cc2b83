"""Behavioural probes: small real requests to the gpt-oss model, judged for known failure signatures.

Each probe returns ``Obs`` observations (finding id, status, detail, evidence,
and any server error text for the matcher); ``check.py`` merges them into
findings and attaches the knowledge-base references.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from gptoss_doctor import engines, settings
from gptoss_doctor.net.http import Client, Response, StreamResult

TOOL_NAME = "get_weather"
TOOL_PARAMS = {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}},
               "required": ["city"]}
CHAT_TOOLS = [{"type": "function", "function": {"name": TOOL_NAME, "description": "Get the current weather for a city.",
                                                 "parameters": TOOL_PARAMS}}]
RESPONSES_TOOLS = [{"type": "function", "name": TOOL_NAME, "description": "Get the current weather for a city.",
                    "parameters": TOOL_PARAMS}]
CHAT_PROMPT = "Say hello in one short sentence."
TOOL_PROMPT = "What is the weather in Paris right now? Use the get_weather tool."
TOOL_RESULT = '{"city": "Paris", "temperature_c": 21, "condition": "sunny", "report_id": "wx-7319"}'
TOOL_RESULT_MARKERS = ("wx-7319", "21", "sunny")
CHAT_MAX_TOKENS = 256
TOOL_MAX_TOKENS = 512

HARMONY_MARKUP_RE = re.compile(r"<\|(?:start|channel|message|end|call|return|constrain)\|>|\bto=functions\.")
FLATTENED_RE = re.compile(r"(?:^|\W)analysis.{0,4000}?assistant(?:final|commentary|analysis)|assistantfinal", re.S)
HARMONY_ERROR_RE = re.compile(
    r"HarmonyError|openai_harmony|expecting start token|unexpected tokens remaining in message header|"
    r"Unknown role|Unexpected token \d+|Failed to parse input at pos|error parsing tool call", re.I)
HARMONY_TOKEN_LEAK_RE = re.compile(r"<\||\|>|\bto=|\bfunctions\.|\bcommentary\b|\s")
UNEXPECTED_TOKEN_RE = re.compile(r"Unexpected token (\d+) while expecting start token 200006")


@dataclass
class Obs:
    id: str
    status: str
    detail: str = ""
    evidence: list[str] = field(default_factory=list)
    error_text: str = ""  # server error text to run through the matcher
    fix: str = ""
    http_status: Optional[int] = None  # set when the observation is just "the request failed with this status"


@dataclass
class Ctx:
    client: Client
    model: str
    engine: str
    gpt_oss: bool = True


def _short(s: Any, n: int = 160) -> str:
    t = " ".join(str(s).split())
    return t[:n] + ("…" if len(t) > n else "")


def error_message(obj: Any, raw: str = "") -> str:
    """The human message inside an engine's error body (nested, flat, string, detail ...)."""
    if isinstance(obj, dict):
        err = obj.get("error")
        if isinstance(err, dict):
            return str(err.get("message") or err.get("msg") or json.dumps(err)[:500])
        if isinstance(err, str):
            return err
        for key in ("message", "detail", "msg"):
            if isinstance(obj.get(key), str):
                return obj[key]
    return raw[:2000]


def _reasoning_of(msg: dict) -> tuple[Optional[str], Optional[str]]:
    for key in ("reasoning", "reasoning_content", "thinking"):
        v = msg.get(key)
        if isinstance(v, str) and v.strip():
            return key, v
    return None, None


def _body_payload(body: dict, ctx: Ctx, **extra: Any) -> dict:
    out = {"model": ctx.model, **body}
    out.update(extra)
    return out


def http_failure(probe_id: str, what: str, r: Response) -> list[Obs]:
    """Observations for a failed (non-2xx / network) answer."""
    if r.error:
        return [Obs(probe_id, "error", f"{what}: {r.error_message or r.error}")]
    msg = error_message(r.json(), r.text)
    obs = [Obs(probe_id, "fail", f"{what}: HTTP {r.status}: {_short(msg, 200)}", [f"HTTP {r.status} {_short(r.text, 300)}"],
               error_text=msg, http_status=r.status)]
    if HARMONY_ERROR_RE.search(msg):
        obs.append(Obs("probe.harmony_error", "fail", f"{what}: the server's Harmony parser failed (HTTP {r.status})",
                       [_short(msg, 300)], error_text=msg))
    return obs


def content_checks(content: str, where: str) -> list[Obs]:
    from gptoss_doctor.explain.artifacts import parse_flattened, parse_harmony

    obs = []
    m = HARMONY_MARKUP_RE.search(content)
    if m:
        i = max(0, m.start() - 40)
        calls = [x.tool_name for x in parse_harmony(content) if x.tool_name]
        what = f"a tool call to {calls[0]} leaked as raw Harmony" if calls else f"raw Harmony markup {m.group(0)!r}"
        obs.append(Obs("probe.harmony_leak", "fail", f"{what} in {where}",
                       [f"{where}: {_short(content[i:], 200)}"]))
    else:
        obs.append(Obs("probe.harmony_leak", "pass", f"no Harmony markup in {where}"))
    # with or without the analysis part: "analysis…assistantfinal…", "assistantfinalHello", "finalHello"
    flat = parse_flattened(content) if not m else []
    f = FLATTENED_RE.search(content) if not m else None
    if f or flat:
        chans = "…".join(x.channel or "" for x in flat[:3]) or "analysis…assistantfinal"
        obs.append(Obs("probe.flattened_channels", "fail", f"flattened channels ({chans}…) in {where}",
                       [f"{where}: {_short(content, 200)}"]))
    else:
        obs.append(Obs("probe.flattened_channels", "pass", f"no flattened channel names in {where}"))
    return obs


def reasoning_obs(field_name: Optional[str], content: str, where: str, ctx: Ctx) -> Obs:
    if field_name:
        return Obs("probe.reasoning", "pass", f"reasoning returned in '{field_name}' ({where})")
    from gptoss_doctor.explain.artifacts import parse_flattened, parse_harmony

    msgs = parse_harmony(content) if HARMONY_MARKUP_RE.search(content) else parse_flattened(content)
    leaked = bool(msgs or FLATTENED_RE.search(content))
    status = "fail" if (ctx.gpt_oss and engines.get(ctx.engine).reasoning_field) or leaked else "warn"
    detail = f"no reasoning / reasoning_content field ({where})"
    if any(x.channel == "analysis" for x in msgs) or (leaked and not msgs):
        detail += "; the reasoning is mixed into content"
    elif msgs:
        detail += "; the content holds raw Harmony messages (" + ", ".join(
            dict.fromkeys(f"{x.channel or '?'}" + (f" to {x.recipient}" if x.recipient else "") for x in msgs[:3])) + ")"
    return Obs("probe.reasoning", status, detail)


def _message(obj: Optional[dict]) -> Optional[dict]:
    if not obj:
        return None
    ch = obj.get("choices")
    if isinstance(ch, list) and ch and isinstance(ch[0], dict):
        msg = ch[0].get("message")
        return msg if isinstance(msg, dict) else None
    return None


# -- plain chat -------------------------------------------------------------------------------------

GREETING_RE = re.compile(r"\b(?:hello|hi|hey|greetings|good (?:morning|afternoon|evening|day)|welcome|howdy)\b|"
                         r"bonjour|hola|hallo|ciao|salut|olá|привет|你好|こんにちは|안녕", re.I)


def garbled(text: str) -> Optional[str]:
    """Why ``text`` is not language a healthy model writes (random or broken weights, a bad quantisation or
    kernel), else None: words run into themselves ("ultimaultimaultima"), or many writing systems mixed."""
    import unicodedata

    from gptoss_doctor.explain.artifacts import doubled_fragments

    t = text[:4000]
    doubled = doubled_fragments(t)
    if len(doubled) >= 3:
        return "words run into themselves (" + ", ".join(doubled[:3]) + ")"
    scripts = set()
    for ch in t:
        if ch.isalpha():
            try:
                scripts.add(unicodedata.name(ch).split(" ")[0])
            except ValueError:
                continue
    scripts -= {"LATIN"}
    if len(scripts) >= 3:
        return f"it mixes {len(scripts) + 1} writing systems"
    return None

async def chat(ctx: Ctx) -> list[Obs]:
    body = _body_payload({"messages": [{"role": "user", "content": CHAT_PROMPT}], "max_tokens": CHAT_MAX_TOKENS,
                          "temperature": 0, "reasoning_effort": "low", "stream": False}, ctx)
    r = await ctx.client.post("/v1/chat/completions", body)
    if not r.ok:
        return http_failure("probe.chat", "POST /v1/chat/completions", r)
    obj = r.json_object()
    msg = _message(obj)
    if msg is None:
        if obj and obj.get("error"):
            return http_failure("probe.chat", "POST /v1/chat/completions (error body with HTTP 200)", r)
        return [Obs("probe.chat", "fail", "the answer is not a chat completion (no choices[0].message)",
                    [_short(r.text, 300)])]
    content = msg.get("content") if isinstance(msg.get("content"), str) else ""
    fname, reasoning = _reasoning_of(msg)
    finish = obj["choices"][0].get("finish_reason")
    obs = []
    why = garbled(content) or garbled(reasoning or "")
    if why and not HARMONY_MARKUP_RE.search(content):
        # no flag fixes this: the model itself does not produce language (nor Harmony)
        return [Obs("probe.chat", "fail", f"the answer is not language ({why}): the model's weights, quantisation or "
                    "kernels are broken, not a server flag", [f"content: {_short(content, 160)!r}"],
                    fix="check the checkpoint (a complete, official download), its quantisation and the GPU kernels; "
                        "try the same model on another engine or GPU")]
    if content.strip():
        obs.append(Obs("probe.chat", "pass", f"answered {_short(content, 60)!r} (finish_reason {finish})"))
    elif finish == "length":
        obs.append(Obs("probe.chat", "warn", f"no content within max_tokens={CHAT_MAX_TOKENS} (finish_reason length)"))
    else:
        obs.append(Obs("probe.chat", "fail", f"empty content (finish_reason {finish})", [_short(r.text, 300)]))
    obs += content_checks(content, "chat content")
    obs.append(reasoning_obs(fname, content, "chat", ctx))
    return obs


@dataclass
class StreamSummary:
    result: StreamResult
    content: str = ""
    reasoning_field: Optional[str] = None
    reasoning: str = ""
    tool_calls: dict = field(default_factory=dict)  # index -> {"name", "args", "fragments", "id"}
    error_texts: list[str] = field(default_factory=list)
    bad_json: int = 0
    finish: Optional[str] = None


def summarize_chat_stream(res: StreamResult) -> StreamSummary:
    s = StreamSummary(res)
    for ev in res.events:
        if ev.is_done:
            continue
        try:
            obj = json.loads(ev.data)
        except (ValueError, RecursionError):
            s.bad_json += 1
            continue
        if not isinstance(obj, dict):
            s.bad_json += 1
            continue
        if obj.get("error") is not None or ev.event == "error" or obj.get("object") == "error":
            s.error_texts.append(error_message(obj, ev.data))
            continue
        for ch in obj.get("choices") or []:
            if not isinstance(ch, dict):
                continue
            if ch.get("finish_reason"):
                s.finish = ch["finish_reason"]
            delta = ch.get("delta") if isinstance(ch.get("delta"), dict) else {}
            if isinstance(delta.get("content"), str):
                s.content += delta["content"]
            for key in ("reasoning", "reasoning_content", "thinking"):
                if isinstance(delta.get(key), str) and delta[key]:
                    s.reasoning_field = s.reasoning_field or key
                    s.reasoning += delta[key]
            for i, tc in enumerate(delta.get("tool_calls") or []):
                if not isinstance(tc, dict):
                    continue
                idx = tc.get("index", i)
                if not isinstance(idx, (int, str)) or isinstance(idx, bool):
                    idx = i
                acc = s.tool_calls.setdefault(idx, {"name": "", "args": "", "fragments": [], "id": None})
                fn = tc.get("function") if isinstance(tc.get("function"), dict) else {}
                name = fn.get("name")
                if isinstance(name, str) and name and name != acc["name"]:
                    acc["name"] = name if not acc["name"] else acc["name"] + name
                args = fn.get("arguments")
                if isinstance(args, str) and args:
                    acc["args"] += args
                    acc["fragments"].append(args)
                if tc.get("id") and not acc["id"]:
                    acc["id"] = tc["id"]
    return s


def framing_obs(res: StreamResult, what: str, s: StreamSummary, engine: str = "") -> list[Obs]:
    if res.ended == "not_sse":
        r = res.as_response()
        if res.status is not None and not (200 <= res.status < 300):
            return http_failure("probe.stream.framing", what, r)
        # a whole JSON answer to a streamed request: something rewrote or buffered the stream (or ignores "stream")
        return [Obs("probe.stream.framing", "fail", f"{what}: stream requested but the answer is {res.content_type or 'not SSE'}",
                    [_short(r.text, 200)],
                    fix="check what sits between the client and the server (a proxy or gateway that buffers or "
                        "rewrites SSE), or whether the server honours \"stream\": true")]
    if res.ended == "redirect":
        return [Obs("probe.stream.framing", "error", f"{what}: redirected to another host ({res.redirect_to})")]
    problems = []
    if res.ended == "timeout":
        problems.append(res.error_message)
    elif res.ended in ("max_events", "max_bytes"):
        problems.append(f"no [DONE] after {len(res.events)} events / {res.bytes_read} bytes (stopped reading)")
    elif res.ended == "reset":
        problems.append(f"the connection was closed mid-stream after {len(res.events)} events ({res.error_message})")
    elif res.ended in ("error", "line_too_long"):
        problems.append(res.error_message or "stream error")
    elif not res.done:
        profile = engines.get(engine)
        if res.ended == "eof" and s.finish and not profile.done_sentinel and not s.bad_json and not s.error_texts:
            # a complete stream (it sent its finish_reason) from an engine that never sends the sentinel
            return [Obs("probe.stream.framing", "warn", f"{what}: {len(res.events)} SSE events, finish_reason "
                        f"{s.finish!r}, then the connection closed without data: [DONE] ({profile.label} never "
                        "sends it)", [f"{len(res.events)} events, {res.bytes_read} bytes, ended: {res.ended}"],
                        fix=profile.fix("probe.stream.framing"))]
        problems.append(f"the stream ended without data: [DONE] ({len(res.events)} events)")
    if s.bad_json:
        problems.append(f"{s.bad_json} data: lines are not JSON objects")
    if problems:
        if s.error_texts:
            fix = "read the error event: it names the failing component (see the references)"
        elif res.ended == "timeout" and not res.events:
            fix = ("no event arrived in time: the request may be queued behind others (see Saturation), or a proxy "
                   "holds the whole stream back until it ends (buffering)")
        elif res.ended in ("reset", "eof") or not res.done:
            fix = "the stream was cut: read the server log for this request (a crash, an OOM, a proxy timeout)"
        else:
            fix = ""
        return [Obs("probe.stream.framing", "fail", f"{what}: " + "; ".join(problems),
                    [f"{len(res.events)} events, {res.bytes_read} bytes, ended: {res.ended}"], fix=fix)]
    return [Obs("probe.stream.framing", "pass", f"{what}: {len(res.events)} SSE events, ends with [DONE]")]


def error_chunk_obs(s: StreamSummary, what: str) -> list[Obs]:
    if not s.error_texts:
        return [Obs("probe.stream.error_chunk", "pass", f"{what}: no error chunk")]
    text = s.error_texts[0]
    obs = [Obs("probe.stream.error_chunk", "fail", f"{what}: error chunk mid-stream: {_short(text, 200)}",
               [_short(t, 300) for t in s.error_texts[:3]], error_text=text)]
    if HARMONY_ERROR_RE.search(text):
        obs.append(Obs("probe.harmony_error", "fail", f"{what}: the server's Harmony parser failed mid-stream",
                       [_short(text, 300)], error_text=text))
    return obs


async def chat_stream(ctx: Ctx) -> list[Obs]:
    body = _body_payload({"messages": [{"role": "user", "content": CHAT_PROMPT}], "max_tokens": CHAT_MAX_TOKENS,
                          "temperature": 0, "reasoning_effort": "low", "stream": True}, ctx)
    res = await ctx.client.stream("/v1/chat/completions", body)
    what = "streamed chat"
    s = summarize_chat_stream(res)
    obs = framing_obs(res, what, s, ctx.engine)
    if res.ended in ("not_sse", "redirect"):
        return obs
    obs += error_chunk_obs(s, what)
    if s.content:
        obs += content_checks(s.content, "streamed chat content")
    if not s.error_texts and res.ended in ("done", "eof"):
        obs.append(reasoning_obs(s.reasoning_field, s.content, "streamed chat", ctx))
    return obs


# -- tool calls -------------------------------------------------------------------------------------

@dataclass
class ToolResult:
    obs: list[Obs]
    name: Optional[str] = None
    args: Optional[str] = None
    call_id: Optional[str] = None
    assistant_message: Optional[dict] = None


def _json_ok(s: Optional[str]) -> bool:
    if s is None:
        return False
    try:
        json.loads(s)
        return True
    except (ValueError, RecursionError):
        return False


def _tool_text(content: str) -> bool:
    """Does the content look like a tool call written out as text?"""
    if TOOL_NAME in content or "to=functions" in content:
        return True
    try:
        obj = json.loads(content.strip())
    except (ValueError, RecursionError):
        return False
    return isinstance(obj, dict) and ("city" in obj or "arguments" in obj or "parameters" in obj)


def name_obs(name: str, where: str) -> Obs:
    if name == TOOL_NAME:
        return Obs("probe.tools.name_leak", "pass", f"tool name is clean ({where})")
    if HARMONY_TOKEN_LEAK_RE.search(name):
        return Obs("probe.tools.name_leak", "fail", f"Harmony tokens leaked into the tool name {name!r} ({where})",
                   [f"expected {TOOL_NAME!r}, got {name!r}"])
    return Obs("probe.tools.name_leak", "warn", f"unexpected tool name {name!r} ({where})")


def _clean_name(name: str) -> str:
    return re.split(r"<\||\s", name, 1)[0]


async def tools(ctx: Ctx) -> ToolResult:
    body = _body_payload({"messages": [{"role": "user", "content": TOOL_PROMPT}], "tools": CHAT_TOOLS,
                          "tool_choice": "auto", "max_tokens": TOOL_MAX_TOKENS, "temperature": 0, "reasoning_effort": "low", "stream": False}, ctx)
    r = await ctx.client.post("/v1/chat/completions", body)
    if not r.ok:
        obs = http_failure("probe.tools.call", "tool call", r)
        text = error_message(r.json(), r.text)
        if re.search(r"tool.{0,40}parser|auto.?tool.?choice|tool_choice|--jinja", text, re.I):
            obs.append(Obs("probe.tools.no_parser", "fail", "the server has no tool parser enabled for this model",
                           [_short(text, 300)], error_text=text))
        m = UNEXPECTED_TOKEN_RE.search(text)
        if m and int(m.group(1)) not in (200002, 200007, 200012, 200003):
            obs.append(Obs("eos.call_token", "fail", "generation did not stop at <|call|> after the tool call "
                           f"(the parser then met token {m.group(1)})", [_short(text, 300)], error_text=text))
        return ToolResult(obs)
    obj = r.json_object()
    msg = _message(obj)
    if msg is None:
        if obj and obj.get("error"):
            return ToolResult(http_failure("probe.tools.call", "tool call (error body with HTTP 200)", r))
        return ToolResult([Obs("probe.tools.call", "fail", "the answer is not a chat completion", [_short(r.text, 300)])])
    content = msg.get("content") if isinstance(msg.get("content"), str) else ""
    calls = [c for c in (msg.get("tool_calls") or []) if isinstance(c, dict)]
    choice = obj["choices"][0]
    obs: list[Obs] = []
    if not calls:
        stop = choice.get("stop_reason", choice.get("matched_stop"))
        if not content.strip() and _int(stop) == 200012:
            # the model did call a tool (it stopped at <|call|>) but nothing turned it into tool_calls:
            # the chat endpoint runs no tool-call parser (vLLM 0.26 answers exactly this without the flags)
            obs.append(Obs("probe.tools.call", "fail", "no tool call in tool_calls although generation stopped at "
                           "<|call|> (200012): the call was parsed and dropped", [_short(r.text, 300)]))
            obs.append(Obs("probe.tools.no_parser", "fail", "content null, stop_reason 200012 and no tool_calls: the "
                           "server runs no tool-call parser for this model", [f"stop_reason = {stop}"]))
            obs.append(Obs("eos.call_token", "pass", "generation stopped at <|call|> (200012) after the tool call",
                           [f"stop_reason/matched_stop = {stop}"]))
            return ToolResult(obs)
        obs.append(Obs("probe.tools.call", "fail", "no tool call in tool_calls"
                       + (f"; content: {_short(content, 120)!r}" if content else ""), [_short(r.text, 300)]))
        if garbled(content):
            obs[-1].detail += " — the model's output is not language (see Plain chat)"
            obs[-1].fix = "fix the model first (checkpoint, quantisation, kernels); no server flag helps here"
            obs.append(Obs("probe.tools.no_parser", "skip", "not judged: the model's output is not language "
                           "(see Plain chat), so no parser could find a tool call in it"))
            return ToolResult(obs)
        if content and _tool_text(content):
            obs.append(Obs("probe.tools.no_parser", "fail", "the tool call came back as text in content with empty tool_calls",
                           [f"content: {_short(content, 200)}"]))
        obs += content_checks(content, "tool-call content")
        return ToolResult(obs)
    fn = calls[0].get("function") if isinstance(calls[0].get("function"), dict) else {}
    name = fn.get("name") if isinstance(fn.get("name"), str) else ""
    args = fn.get("arguments")
    if isinstance(args, dict):  # some servers send an object instead of a JSON string
        args = json.dumps(args)
    args = args if isinstance(args, str) else ""
    clean = _clean_name(name)
    if clean == TOOL_NAME:
        obs.append(Obs("probe.tools.call", "pass", f"{TOOL_NAME}({_short(args, 60)}) returned in tool_calls"))
    else:
        obs.append(Obs("probe.tools.call", "fail", f"tool_calls names {name!r}, expected {TOOL_NAME!r}"))
    obs.append(Obs("probe.tools.no_parser", "pass", "tool call parsed into tool_calls"))
    obs.append(name_obs(name, "non-streamed"))
    if _json_ok(args):
        obs.append(Obs("probe.tools.invalid_json", "pass", "non-streamed arguments are valid JSON"))
    else:
        obs.append(Obs("probe.tools.invalid_json", "fail", f"non-streamed arguments are not valid JSON: {_short(args, 120)!r}"))
    if content:
        obs += content_checks(content, "tool-call content")
    # behavioural stop-token evidence (vLLM stop_reason / SGLang matched_stop)
    stop = choice.get("stop_reason", choice.get("matched_stop"))
    if _int(stop) == 200012:
        obs.append(Obs("eos.call_token", "pass", "generation stopped at <|call|> (200012) after the tool call",
                       [f"stop_reason/matched_stop = {stop}"]))
    assistant = {"role": "assistant", "content": None,
                 "tool_calls": [{"id": calls[0].get("id") or "call_0", "type": "function",
                                 "function": {"name": clean or TOOL_NAME, "arguments": args or "{}"}}]}
    return ToolResult(obs, name=name, args=args, call_id=calls[0].get("id") or "call_0", assistant_message=assistant)


def _int(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


async def tools_stream(ctx: Ctx) -> StreamSummary:
    body = _body_payload({"messages": [{"role": "user", "content": TOOL_PROMPT}], "tools": CHAT_TOOLS,
                          "tool_choice": "auto", "max_tokens": TOOL_MAX_TOKENS, "temperature": 0, "reasoning_effort": "low", "stream": True}, ctx)
    res = await ctx.client.stream("/v1/chat/completions", body)
    return summarize_chat_stream(res)


def duplicated(fragments: list[str], joined: str, reference: Optional[str]) -> bool:
    if _json_ok(joined):
        return False
    collapsed = [f for i, f in enumerate(fragments) if i == 0 or f != fragments[i - 1]]
    if len(collapsed) < len(fragments) and _json_ok("".join(collapsed)):
        return True
    if reference and _json_ok(reference) and len(joined) > len(reference):
        return True
    return False


def compare_stream(ns: ToolResult, s: StreamSummary, engine: str = "") -> list[Obs]:
    what = "streamed tool call"
    res = s.result
    obs = framing_obs(res, what, s, engine)
    if res.ended in ("not_sse", "redirect"):
        if res.status and res.status >= 400:
            text = error_message(res.as_response().json(), res.as_response().text)
            obs = [o for o in obs if o.id != "probe.stream.framing"] + [
                Obs("probe.tools.stream", "fail", f"{what}: HTTP {res.status}: {_short(text, 160)}", error_text=text,
                    http_status=res.status)]
            obs += [o for o in http_failure("probe.stream.framing", what, res.as_response()) if o.id == "probe.harmony_error"]
        return obs
    obs += error_chunk_obs(s, what)
    if s.content:
        obs += content_checks(s.content, "streamed tool-call content")
    if not s.tool_calls:
        if s.error_texts:
            obs.append(Obs("probe.tools.stream", "fail", f"{what}: no tool call before the error chunk",
                           error_text=s.error_texts[0]))
        elif ns.args is not None:
            obs.append(Obs("probe.tools.stream", "fail", f"{what}: no tool_calls deltas in the stream"
                           + (f"; content: {_short(s.content, 100)!r}" if s.content else "")))
            if s.content and _tool_text(s.content):
                obs.append(Obs("probe.tools.no_parser", "fail", "the streamed tool call came back as text in content",
                               [f"content: {_short(s.content, 200)}"]))
        else:
            obs.append(Obs("probe.tools.stream", "skip", f"{what}: no tool call (neither streamed nor non-streamed)"))
        return obs
    acc = s.tool_calls[sorted(s.tool_calls, key=str)[0]]
    joined, frags = acc["args"], acc["fragments"]
    if s.error_texts:
        # the stream broke with an error: its partial call proves nothing either way, so no ✓ for it
        obs.append(Obs("probe.tools.stream", "fail", f"{what}: the stream ended with an error after "
                       f"{len(frags)} argument fragment(s)", error_text=s.error_texts[0]))
        return obs
    obs.append(name_obs(acc["name"], "streamed"))
    if duplicated(frags, joined, ns.args):
        obs.append(Obs("probe.tools.stream_duplicated", "fail",
                       f"streamed argument fragments are duplicated: {_short(joined, 120)!r}",
                       [f"streamed: {_short(joined, 200)}", f"non-streamed: {_short(ns.args or '', 200)}",
                        f"{len(frags)} fragments: {_short(frags[:8], 200)}"]))
    else:
        obs.append(Obs("probe.tools.stream_duplicated", "pass", "no duplicated argument fragments"))
    if not _json_ok(joined):
        obs.append(Obs("probe.tools.invalid_json", "fail", f"concatenated streamed arguments are not valid JSON: {_short(joined, 120)!r}"))
    else:
        obs.append(Obs("probe.tools.invalid_json", "pass", "streamed arguments are valid JSON"))
    if ns.args is None:
        obs.append(Obs("probe.tools.stream", "skip", f"{what}: nothing to compare with (the non-streamed call failed)"))
    elif _json_ok(joined) and _json_ok(ns.args) and json.loads(joined) == json.loads(ns.args):
        obs.append(Obs("probe.tools.stream", "pass", f"streamed arguments ({len(frags)} fragments) equal the non-streamed ones"))
    elif _json_ok(joined) and _json_ok(ns.args):
        obs.append(Obs("probe.tools.stream", "warn", "streamed and non-streamed arguments differ (sampling?)",
                       [f"streamed: {_short(joined, 150)}", f"non-streamed: {_short(ns.args, 150)}"]))
    else:
        obs.append(Obs("probe.tools.stream", "fail", "streamed arguments differ from the non-streamed ones",
                       [f"streamed: {_short(joined, 150)}", f"non-streamed: {_short(ns.args, 150)}"]))
    return obs


async def chat_two_turn(ctx: Ctx, first: ToolResult) -> list[Obs]:
    if first.assistant_message is None:
        return [Obs("probe.responses.tool_output", "skip", "two-turn chat: the first turn produced no tool call")]
    call_id = first.assistant_message["tool_calls"][0]["id"]
    messages = [{"role": "user", "content": TOOL_PROMPT}, first.assistant_message,
                {"role": "tool", "tool_call_id": call_id, "name": TOOL_NAME, "content": TOOL_RESULT}]
    body = _body_payload({"messages": messages, "tools": CHAT_TOOLS, "max_tokens": TOOL_MAX_TOKENS, "temperature": 0,
                          "stream": False}, ctx)
    r = await ctx.client.post("/v1/chat/completions", body)
    if not r.ok:
        return http_failure("probe.responses.tool_output", "two-turn chat (tool result sent back)", r)
    msg = _message(r.json_object()) or {}
    content = msg.get("content") if isinstance(msg.get("content"), str) else ""
    return [_tool_output_obs(content, "two-turn chat")]


def _tool_output_obs(text: str, where: str) -> Obs:
    seen = [m for m in TOOL_RESULT_MARKERS if m.lower() in text.lower()]
    if seen:
        return Obs("probe.responses.tool_output", "pass", f"{where}: the answer uses the tool output ({', '.join(seen)})")
    return Obs("probe.responses.tool_output", "fail", f"{where}: the answer does not use the tool output",
               [f"tool output sent: {TOOL_RESULT}", f"answer: {_short(text, 200)!r}"])


# -- Responses API (--deep) -------------------------------------------------------------------------

def _responses_body(ctx: Ctx, stream: bool, input_: Any = TOOL_PROMPT) -> dict:
    return _body_payload({"input": input_, "tools": RESPONSES_TOOLS, "max_output_tokens": TOOL_MAX_TOKENS,
                          "reasoning": {"effort": "low"}, "stream": stream}, ctx)


_FINAL_EVENTS = ("response.completed", "response.failed", "response.incomplete", "error")


def _ev_type(ev: Any, obj: Any) -> str:
    if isinstance(obj, dict) and isinstance(obj.get("type"), str):
        return obj["type"]
    return ev.event or ""


async def responses_stream(ctx: Ctx) -> list[Obs]:
    res = await ctx.client.stream("/v1/responses", _responses_body(ctx, True),
                                  until=lambda ev: (ev.event or "") in _FINAL_EVENTS or any(
                                      f'"type":"{t}"' in ev.data.replace(" ", "") for t in _FINAL_EVENTS[:3]))
    what = "POST /v1/responses (stream)"
    if res.ended == "not_sse":
        r = res.as_response()
        if r.status in (404, 405, 501):
            if not engines.get(ctx.engine).responses_api:
                return [Obs("probe.responses", "skip", f"{ctx.engine} has no Responses API")]
            return [Obs("probe.responses", "fail", f"{what}: HTTP {r.status}: the server has no Responses API",
                        [_short(r.text, 200)], error_text=error_message(r.json(), r.text), http_status=r.status,
                        fix="use an engine release with /v1/responses for gpt-oss, or use /v1/chat/completions"),
                    Obs("probe.responses.function_call", "skip", "no Responses API"),
                    Obs("probe.responses.reasoning", "skip", "no Responses API")]
        if r.status is not None and 200 <= r.status < 300:
            return [Obs("probe.responses", "fail", f"{what}: stream requested but the answer is {res.content_type or 'not SSE'}")]
        obs = http_failure("probe.responses", what, r)
        text = error_message(r.json(), r.text)
        for o in obs:
            if o.id != "probe.responses":
                continue
            if engines.get(ctx.engine).is_proxy and re.search(r"reasoning", text, re.I):
                # the proxy, not the engine, refuses the parameter (LiteLLM's per-provider parameter lists)
                o.fix = ("let reasoning through the proxy for this model (allowed_openai_params, or mark the model as "
                         "a reasoning model in its model_info); drop_params would only drop it silently")
            elif re.search(r"--jinja|jinja", text, re.I):
                o.fix = "tools need the model's chat template: start llama-server without --no-jinja"
        return obs
    if res.ended == "redirect" or (res.error and not res.events):
        return [Obs("probe.responses", "error", f"{what}: {res.error_message or 'redirected to ' + str(res.redirect_to)}")]
    types: list[str] = []
    fc_items: list[dict] = []
    fc_args: list[str] = []
    deltas: dict[str, list[str]] = {}
    errors: list[str] = []
    bad = 0
    for ev in res.events:
        try:
            obj = json.loads(ev.data)
        except (ValueError, RecursionError):
            bad += 1
            continue
        t = _ev_type(ev, obj)
        types.append(t)
        if not isinstance(obj, dict):
            continue
        if t in ("error", "response.failed"):
            resp = obj.get("response") if isinstance(obj.get("response"), dict) else obj
            errors.append(error_message(resp, ev.data))
        item = obj.get("item")
        if isinstance(item, dict) and item.get("type") == "function_call":
            fc_items.append(item)
        if t == "response.function_call_arguments.done" and isinstance(obj.get("arguments"), str):
            fc_args.append(obj["arguments"])
        if t == "response.function_call_arguments.delta" and isinstance(obj.get("delta"), str):
            key = str(obj.get("item_id") or obj.get("output_index") or 0)
            deltas.setdefault(key, []).append(obj["delta"])
        if t == "response.completed" and isinstance(obj.get("response"), dict):
            for it in obj["response"].get("output") or []:
                if isinstance(it, dict) and it.get("type") == "function_call":
                    fc_items.append(it)
    obs: list[Obs] = []
    evidence = [f"events: {', '.join(dict.fromkeys(types))[:300]}"]
    if errors:
        text = errors[0]
        obs.append(Obs("probe.responses", "fail", f"{what}: error event: {_short(text, 200)}", evidence, error_text=text))
        if HARMONY_ERROR_RE.search(text):
            obs.append(Obs("probe.harmony_error", "fail", f"{what}: the Harmony parser failed", [_short(text, 300)],
                           error_text=text))
    elif "response.completed" in types or "response.incomplete" in types:
        obs.append(Obs("probe.responses", "pass", f"{what}: {len(types)} events, ends with response.completed"
                       if "response.completed" in types else f"{what}: ends with response.incomplete"))
    elif "response.function_call_arguments.done" in types and res.ended in ("eof", "reset", "done"):
        # vLLM closes the stream right after the call when its Harmony parser fails on what follows <|call|>,
        # without an error event (seen on real vLLM 0.26.0 with a stale generation_config.json)
        obs.append(Obs("probe.responses", "fail", f"{what}: the stream stopped right after the function call "
                       "(function_call_arguments.done) without response.completed: the server's Harmony parser failed "
                       "after <|call|> (its log has the HarmonyError)", evidence,
                       fix="a stale generation_config.json (no <|call|> stop token) does this: gptoss-doctor fix-config "
                           "--dry-run, then --yes, and restart the server"))
    else:
        obs.append(Obs("probe.responses", "fail", f"{what}: no response.completed event ({res.ended}: "
                       f"{res.error_message or str(len(types)) + ' events'})", evidence,
                       fix="read the server log for this request"))
    if fc_items or fc_args:
        name = next((i.get("name") for i in fc_items if i.get("name")), TOOL_NAME)
        args = fc_args[0] if fc_args else next((i.get("arguments") for i in fc_items if isinstance(i.get("arguments"), str)), "")
        if _clean_name(str(name)) != TOOL_NAME:
            obs.append(Obs("probe.responses.function_call", "fail", f"function_call item names {name!r}"))
        elif args and not _json_ok(args):
            obs.append(Obs("probe.responses.function_call", "fail", f"function_call arguments are not valid JSON: {_short(args, 100)!r}"))
        else:
            obs.append(Obs("probe.responses.function_call", "pass", f"function_call item {name}({_short(args, 60)})"))
        if name != TOOL_NAME:
            obs.append(name_obs(str(name), "Responses API"))
    elif not errors:
        obs.append(Obs("probe.responses.function_call", "fail", f"{what}: no function_call item for a tool request", evidence))
    if deltas and fc_args:
        frags = next(iter(deltas.values()))
        joined = "".join(frags)
        if joined != fc_args[0] and duplicated(frags, joined, fc_args[0]):
            obs.append(Obs("probe.tools.stream_duplicated", "fail",
                           f"Responses API: argument deltas are duplicated: {_short(joined, 120)!r}",
                           [f"deltas joined: {_short(joined, 200)}", f"arguments.done: {_short(fc_args[0], 200)}"]))
        elif joined == fc_args[0]:
            obs.append(Obs("probe.tools.stream_duplicated", "pass", "Responses API argument deltas add up"))
    reasoning = [t for t in types if "reasoning" in t]
    if reasoning:
        obs.append(Obs("probe.responses.reasoning", "pass", f"reasoning events: {', '.join(dict.fromkeys(reasoning))}"))
    elif not errors and not engines.get(ctx.engine).reasoning_events:
        obs.append(Obs("probe.responses.reasoning", "skip", f"{ctx.engine} streams no reasoning events (by design)"))
    elif not errors:
        obs.append(Obs("probe.responses.reasoning", "warn", f"{what}: no reasoning events in the stream", evidence))
    if bad:
        obs.append(Obs("probe.stream.framing", "fail", f"{what}: {bad} events are not JSON"))
    return obs


def _output_text(obj: dict) -> str:
    if isinstance(obj.get("output_text"), str):
        return obj["output_text"]
    parts = []
    for it in obj.get("output") or []:
        if isinstance(it, dict) and it.get("type") == "message":
            for c in it.get("content") or []:
                if isinstance(c, dict) and isinstance(c.get("text"), str):
                    parts.append(c["text"])
    return "".join(parts)


async def responses_two_turn(ctx: Ctx) -> list[Obs]:
    where = "two-turn Responses API"
    r = await ctx.client.post("/v1/responses", _responses_body(ctx, False))
    if r.status in (404, 405, 501):
        return [Obs("probe.responses.tool_output", "skip", f"{where}: no Responses API")]
    if not r.ok:
        return http_failure("probe.responses.tool_output", f"{where} (first turn)", r)
    obj = r.json_object() or {}
    fc = next((i for i in obj.get("output") or [] if isinstance(i, dict) and i.get("type") == "function_call"), None)
    if fc is None:
        return [Obs("probe.responses.tool_output", "skip", f"{where}: the first turn made no function call")]
    call_id = fc.get("call_id") or fc.get("id") or "call_0"
    input_ = [{"role": "user", "content": TOOL_PROMPT},
              {"type": "function_call", "call_id": call_id, "name": _clean_name(str(fc.get("name") or TOOL_NAME)),
               "arguments": fc.get("arguments") if isinstance(fc.get("arguments"), str) else "{}"},
              {"type": "function_call_output", "call_id": call_id, "output": TOOL_RESULT}]
    r2 = await ctx.client.post("/v1/responses", _responses_body(ctx, False, input_))
    if not r2.ok:
        return http_failure("probe.responses.tool_output", f"{where} (tool output sent back)", r2)
    return [_tool_output_obs(_output_text(r2.json_object() or {}), where)]


async def run_all(ctx: Ctx, deep: bool, chat_obs: Optional[list[Obs]] = None) -> list[Obs]:
    """Every probe, concurrently where independent (``chat_obs``: the plain chat already run on its own)."""
    tools_task = asyncio.ensure_future(tools(ctx))
    stream_task = asyncio.ensure_future(tools_stream(ctx))
    from gptoss_doctor.check.probes import extras as probe_extras

    jobs = [_done(chat_obs) if chat_obs is not None else chat(ctx), chat_stream(ctx),
            probe_extras.structured_output(ctx), probe_extras.saturation(ctx)]
    if deep:
        jobs += [responses_stream(ctx), responses_two_turn(ctx)]

    async def tool_chain() -> list[Obs]:
        ns = await tools_task
        out = list(ns.obs)
        extra = [chat_two_turn(ctx, ns)] if deep else []
        st = await stream_task
        out += compare_stream(ns, st, ctx.engine)
        for more in await asyncio.gather(*extra):
            out += more
        return out

    ids = ["probe.tools.call", "probe.chat", "probe.stream.framing", "probe.structured_output", "metrics.saturation",
           "probe.responses", "probe.responses.tool_output"]
    results = await asyncio.gather(*(guard(job, fid) for job, fid in zip([tool_chain(), *jobs], ids)))
    return [o for group in results for o in group]


async def _done(obs: list[Obs]) -> list[Obs]:
    return obs


async def guard(job: Any, fid: str) -> list[Obs]:
    """A bug in a probe (or an answer shape nobody foresaw) becomes an 'error' check, not a crash."""
    try:
        return await job
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001
        if settings.debug():
            raise
        return [Obs(fid, "error", f"internal error in this probe: {type(exc).__name__}: {_short(exc, 200)} "
                                  "(a bug in gptoss-doctor: please report it)")]
