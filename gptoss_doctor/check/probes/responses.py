"""check, probes: the Responses API — a streamed tool request (events, function_call items, reasoning events) and
a two-turn conversation that must see the tool's output."""

from __future__ import annotations

import json
import re
from typing import Any

from gptoss_doctor import engines
from gptoss_doctor.check.probes.common import Ctx, HARMONY_ERROR_RE, Obs, RESPONSES_TOOLS, TOOL_MAX_TOKENS, TOOL_NAME, TOOL_PROMPT, TOOL_RESULT, _body_payload, _short, error_message, http_failure, ran_past_call
from gptoss_doctor.check.probes.tools import _clean_name, _json_ok, _tool_output_obs, duplicated, name_obs


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
            prof = engines.get(ctx.engine)
            if not prof.responses_api:
                return [Obs("probe.responses", "skip", f"{ctx.engine} has no Responses API")]
            gap = prof.responses_gap(ctx.version)
            if gap:  # this release predates the API: nothing to fix but the version, not a fault of the server
                ver = f" {ctx.version}" if ctx.version else ""
                return [Obs("probe.responses", "skip", f"{what}: HTTP {r.status}: {prof.label}{ver} has no "
                            f"Responses API. {gap}"),
                        Obs("probe.responses.function_call", "skip", "no Responses API in this version"),
                        Obs("probe.responses.reasoning", "skip", "no Responses API in this version")]
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
    after_call: list[str] = []  # text of message items that came after a function_call item
    negative: list[str] = []  # events whose output_index is below 0
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
        if isinstance(obj.get("output_index"), int) and obj["output_index"] < 0:
            negative.append(t)
        if t in ("error", "response.failed"):
            resp = obj.get("response") if isinstance(obj.get("response"), dict) else obj
            errors.append(error_message(resp, ev.data))
        item = obj.get("item")
        if isinstance(item, dict) and item.get("type") == "function_call":
            fc_items.append(item)
        if t == "response.output_item.done" and isinstance(item, dict) and item.get("type") == "message" and fc_items:
            after_call.append(_output_text({"output": [item]}) or "(a message item)")
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
    if after_call:
        # output items come in the order the model wrote them: a message after the call was written after <|call|>
        obs.append(ran_past_call("the Responses stream: a message item after the function_call item",
                                 [f"Responses message after the call: {_short(after_call[0], 120)!r}"]))
    reasoning = [t for t in types if "reasoning" in t]
    if reasoning:
        obs.append(Obs("probe.responses.reasoning", "pass", f"reasoning events: {', '.join(dict.fromkeys(reasoning))}"))
    elif not errors and not engines.get(ctx.engine).reasoning_events:
        obs.append(Obs("probe.responses.reasoning", "skip", f"{ctx.engine} streams no reasoning events (by design)"))
    elif not errors:
        obs.append(Obs("probe.responses.reasoning", "warn", f"{what}: no reasoning events in the stream", evidence))
    if bad:
        obs.append(Obs("probe.stream.framing", "fail", f"{what}: {bad} events are not JSON"))
    obs += _index_obs(ctx, what, negative)
    return obs


def _index_obs(ctx: Ctx, what: str, negative: list[str]) -> list[Obs]:
    """Events with an output_index below 0 (the gpt-oss reference server's first item: recorded)."""
    if not negative:
        return []
    return [Obs("probe.responses.conformance", "warn", f"{what}: {len(negative)} events carry a negative "
                f"output_index: {', '.join(dict.fromkeys(negative))[:200]}",
                fix=engines.get(ctx.engine).fix("probe.responses.conformance")
                or "clients must key streamed output items by item_id, not by output_index")]


PLAIN_PROMPT = "Say hello in one short sentence."


async def responses_plain(ctx: Ctx) -> list[Obs]:
    """A plain streamed Responses request (no tools): the chat probe of a server that serves only /v1/responses.
    Its answer must arrive as output_text and end with response.completed."""
    what = "POST /v1/responses (plain, stream)"
    res = await ctx.client.stream("/v1/responses", _body_payload(
        {"input": PLAIN_PROMPT, "max_output_tokens": TOOL_MAX_TOKENS, "reasoning": {"effort": "low"},
         "stream": True}, ctx), until=lambda ev: (ev.event or "") in _FINAL_EVENTS)
    if res.ended == "not_sse":
        return http_failure("probe.responses", what, res.as_response())
    if res.error and not res.events:
        return [Obs("probe.responses", "error", f"{what}: {res.error_message or res.error}")]
    types, text, negative, kinds = [], [], [], []
    for ev in res.events:
        try:
            obj = json.loads(ev.data)
        except (ValueError, RecursionError):
            continue
        t = _ev_type(ev, obj)
        types.append(t)
        if isinstance(obj, dict) and isinstance(obj.get("output_index"), int) and obj["output_index"] < 0:
            negative.append(t)
        if t == "response.output_text.delta" and isinstance(obj, dict) and isinstance(obj.get("delta"), str):
            text.append(obj["delta"])
        if t == "response.output_item.done" and isinstance(obj, dict) and isinstance(obj.get("item"), dict):
            kinds.append(str(obj["item"].get("type")))
    answer = "".join(text).strip()
    evidence = [f"events: {', '.join(dict.fromkeys(types))[:300]}"]
    if "response.completed" in types and answer:
        obs = [Obs("probe.responses", "pass", f"{what}: {_short(answer, 60)!r}, ends with response.completed")]
    elif "response.completed" in types:
        got = f"output items: {', '.join(kinds)[:120]}" if kinds else "no output items"
        obs = [Obs("probe.responses", "fail", f"{what}: completed without any output_text ({got})", evidence)]
    else:
        obs = [Obs("probe.responses", "fail", f"{what}: no response.completed event ({res.ended}: "
                   f"{res.error_message or str(len(types)) + ' events'})", evidence,
                   fix="read the server log for this request")]
    return obs + _index_obs(ctx, what, negative)

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
