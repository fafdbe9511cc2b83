"""check, probes: tool calls — non-streamed, streamed (fragments compared with the non-streamed call), and a
second turn with the tool's result."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Optional

from gptoss_doctor import engines
from gptoss_doctor.check.probes.common import CHAT_TOOLS, Ctx, HARMONY_TOKEN_LEAK_RE, MODEL_FIRST_FIX, Obs, TOOL_MAX_TOKENS, TOOL_NAME, TOOL_PROMPT, TOOL_RESULT, TOOL_RESULT_MARKERS, UNEXPECTED_TOKEN_RE, _body_payload, _message, _reasoning_of, _short, content_checks, error_message, garbled, http_failure, ran_past_call
from gptoss_doctor.check.probes.chat import StreamSummary, error_chunk_obs, framing_obs, summarize_chat_stream


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
    reported, stop = _stop(choice, ctx.engine)
    finish = choice.get("finish_reason")
    stop_ev = f"finish_reason = {_json(finish)}, {'stop_reason' if reported else 'stop_reason/matched_stop'} = {_json(stop)}"
    if not calls:
        if not content.strip() and _int(stop) == 200012:
            # the model did call a tool (it stopped at <|call|>) but nothing turned it into tool_calls: the chat
            # endpoint does not extract tool calls for it (vLLM 0.26 and 0.32 answer exactly this without both
            # --tool-call-parser openai and --enable-auto-tool-choice, and with the parser alone)
            obs.append(Obs("probe.tools.call", "fail", "no tool call in tool_calls although generation stopped at "
                           "<|call|> (200012): the call was parsed and dropped", [_short(r.text, 300)]))
            obs.append(Obs("probe.tools.no_parser", "fail", "content null, stop_reason 200012 and no tool_calls: the "
                           "server does not extract tool calls into tool_calls for this request (no tool-call "
                           "parser, or auto tool choice not enabled)", [stop_ev]))
            obs.append(Obs("eos.call_token", "pass", "generation stopped at <|call|> (200012) after the tool call",
                           [f"stop_reason/matched_stop = {stop}"]))
            return ToolResult(obs)
        if not content.strip() and reported and stop is None and finish == "stop" and _reasoning_of(msg)[1]:
            # the model reasoned, wrote no answer and no call came back, and generation ended at <|return|>, not at
            # <|call|>: its call was dropped (no extraction) and generation ran on after it (stale stop tokens);
            # recorded on vLLM 0.32.0 with a stale generation_config.json and no tool flags (e7)
            obs.append(Obs("probe.tools.call", "fail", "no tool call in tool_calls and no content: the model's tool "
                           "call was dropped", [_short(r.text, 300)]))
            obs.append(Obs("probe.tools.no_parser", "fail", "content null and no tool_calls after reasoning about the "
                           "tool: the server does not extract tool calls into tool_calls for this request (no "
                           "tool-call parser, or auto tool choice not enabled)", [stop_ev]))
            obs.append(ran_past_call(f"the tool request: no call and no content came back, stop_reason {_json(stop)}",
                                     [stop_ev, _usage(obj)]))
            return ToolResult(obs)
        obs.append(Obs("probe.tools.call", "fail", "no tool call in tool_calls"
                       + (f"; content: {_short(content, 120)!r}" if content else ""), [_short(r.text, 300)]))
        if garbled(content):
            obs[-1].detail += " — the model's output is not language (see Plain chat)"
            obs[-1].fix = MODEL_FIRST_FIX
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
    if _int(stop) == 200012:
        obs.append(Obs("eos.call_token", "pass", "generation stopped at <|call|> (200012) after the tool call",
                       [f"stop_reason/matched_stop = {stop}"]))
    elif reported and finish != "length":
        # vLLM reports the stop token that ended generation; after a call it is 200012 unless <|call|> is missing
        # from the stop list, and then the model's own continuation can come back as content (recorded on 0.32.0)
        ev = [stop_ev, _usage(obj)] + ([f"content beside the tool call: {_short(content, 120)!r}"] if content else [])
        obs.append(ran_past_call(f"the tool call: finish_reason {_json(finish)} with stop_reason {_json(stop)}"
                                 + (", and content beside the call" if content else ""), ev))
    assistant = {"role": "assistant", "content": None,
                 "tool_calls": [{"id": calls[0].get("id") or "call_0", "type": "function",
                                 "function": {"name": clean or TOOL_NAME, "arguments": args or "{}"}}]}
    return ToolResult(obs, name=name, args=args, call_id=calls[0].get("id") or "call_0", assistant_message=assistant)

# a vLLM choice as a proxy passes it on: LiteLLM 1.109.1 moves the backend's own choice fields into
# provider_specific_fields (recorded in front of vLLM: {"token_ids": null, "stop_reason": 200012}); token_ids tells
# vLLM apart from other engines that name a stop_reason with rules of their own
VLLM_CHOICE_FIELDS = ("stop_reason", "token_ids")

def _stop(choice: dict, engine: str) -> tuple[bool, Any]:
    """(reported, value): the stop token that ended generation; reported is True only on an engine that always
    names it (its profile's stop_reason_key present in the choice, or a vLLM backend's choice behind a proxy), where
    null is a fact, not a gap."""
    profile = engines.get(engine)
    key = profile.stop_reason_key
    if key and key in choice:
        return True, choice[key]
    passed = choice.get("provider_specific_fields")
    if profile.is_proxy and isinstance(passed, dict) and all(k in passed for k in VLLM_CHOICE_FIELDS):
        return True, passed["stop_reason"]
    return False, choice.get("stop_reason", choice.get("matched_stop"))

def _json(v: Any) -> str:
    """A value as the server wrote it (null, "tool_calls", 200012), for details and evidence."""
    try:
        return _short(json.dumps(v), 60)
    except (TypeError, ValueError, RecursionError):
        return _short(repr(v), 60)

def _usage(obj: dict) -> str:
    usage = obj.get("usage") if isinstance(obj.get("usage"), dict) else {}
    return f"usage.completion_tokens = {_json(usage.get('completion_tokens'))}"

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
    if s.after_call.strip():
        # text streamed after the call's deltas was written after <|call|>: a preamble comes before the call
        obs.append(ran_past_call(f"the {what}: content after the call's deltas",
                                 [f"streamed content after the tool_calls deltas: {_short(s.after_call, 120)!r}"]))
    after_call_error = bool(s.error_texts and UNEXPECTED_TOKEN_RE.search(s.error_texts[0])
                            and engines.get(engine).tool_deltas_before_harmony_error)
    if not s.tool_calls:
        if s.error_texts:
            obs.append(Obs("probe.tools.stream", "fail", f"{what}: no tool call before the error chunk",
                           error_text=s.error_texts[0]))
            if after_call_error and s.reasoning and not s.content.strip():
                # the error is on the token after <|call|>, so the model wrote its call; this engine streams a
                # call's deltas before that error when it extracts tool calls, and none came: a second fault
                obs.append(Obs("probe.tools.no_parser", "fail", f"{what}: reasoning, then the Harmony error that "
                               "follows a call, and no tool_calls delta before it: the server does not extract tool "
                               "calls into tool_calls (no tool-call parser, or auto tool choice not enabled)",
                               [f"error chunk after {len(s.reasoning)} characters of reasoning and no tool_calls "
                                f"delta: {_short(s.error_texts[0], 120)}"]))
        elif ns.args is not None:
            obs.append(Obs("probe.tools.stream", "fail", f"{what}: no tool_calls deltas in the stream"
                           + (f"; content: {_short(s.content, 100)!r}" if s.content else "")))
            if s.content and _tool_text(s.content):
                obs.append(Obs("probe.tools.no_parser", "fail", "the streamed tool call came back as text in content",
                               [f"content: {_short(s.content, 200)}"]))
        elif res.ended == "timeout":
            obs.append(Obs("probe.tools.stream", "skip", f"{what}: not judged: no tool call arrived before the "
                           "deadline (see SSE framing)"))
        else:
            obs.append(Obs("probe.tools.stream", "skip", f"{what}: no tool call (neither streamed nor non-streamed)"))
        return obs
    acc = s.tool_calls[sorted(s.tool_calls, key=str)[0]]
    joined, frags = acc["args"], acc["fragments"]
    if s.error_texts:
        # the stream broke with an error: its partial call proves nothing either way, so no ✓ for it
        obs.append(Obs("probe.tools.stream", "fail", f"{what}: the stream ended with an error after "
                       f"{len(frags)} argument fragment(s)", error_text=s.error_texts[0]))
        if after_call_error:  # but the call was extracted before the error: the tool-call parser is on
            obs.append(Obs("probe.tools.no_parser", "pass", f"{what}: the call came as tool_calls deltas "
                           f"({acc['name'] or '?'}) before the Harmony error, so tool calls are extracted"))
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
