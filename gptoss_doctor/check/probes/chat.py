"""check, probes: plain chat, streamed and not (answer, reasoning field, SSE framing, mid-stream errors)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Optional

from gptoss_doctor import engines
from gptoss_doctor.net.http import StreamResult
from gptoss_doctor.check.probes.common import CHAT_MAX_TOKENS, CHAT_PROMPT, Ctx, HARMONY_ERROR_RE, HARMONY_MARKUP_RE, Obs, _body_payload, _message, _reasoning_of, _short, content_checks, error_message, garbled, http_failure, reasoning_obs


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
    after_call: str = ""  # content that arrived after a tool_calls delta

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
                if s.tool_calls:
                    s.after_call += delta["content"]
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
    if problems == [res.error_message] and res.still_streaming() and not s.error_texts:
        return [Obs("probe.stream.framing", "warn", f"{what}: still streaming when the deadline came "
                    f"({len(res.events)} events in {res.elapsed:.0f} s): the server is slow, the stream is not broken",
                    [f"{len(res.events)} events, {res.bytes_read} bytes, ended: timeout while events arrived"],
                    fix="raise --timeout for slow hardware; check the server's load (see Saturation) if it is "
                        "usually faster")]
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
