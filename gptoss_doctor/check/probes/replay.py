"""check --request: the user's own request sent as given, non-streamed then streamed, with every detector run on
both answers (Harmony errors, leaked or flattened Harmony, duplicated or differing streamed arguments, an answer
left in the reasoning, finish_reason, a required tool call missing, arguments that are not JSON or do not follow
the tool's schema, a response_format not followed). Observations use the ids of the standard probes, so the
knowledge-base links, the causes and the fixes are the same as ``check``'s."""

from __future__ import annotations

import json
from typing import Any, Optional

from gptoss_doctor.check.probes.chat import error_chunk_obs, framing_obs, summarize_chat_stream
from gptoss_doctor.check.probes.common import (HARMONY_MARKUP_RE, Ctx, Obs, _message, _reasoning_of, _short,
                                               content_checks, error_message, garbled, http_failure)
from gptoss_doctor.check.probes.tools import _json_ok, duplicated

WHERE = "your request"


def _schema_problems(args: Any, schema: Any, path: str = "arguments") -> list[str]:
    """The plain JSON-schema checks a tool's ``parameters`` name (type, required, properties,
    additionalProperties: false, enum), enough to tell a model's wrong call from a server's broken one."""
    if not isinstance(schema, dict):
        return []
    out: list[str] = []
    t = schema.get("type")
    kinds = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}
    if t in kinds and not isinstance(args, kinds[t]):
        return [f"{path} is {type(args).__name__}, the schema says {t}"]
    if t in ("number", "integer") and (isinstance(args, bool) or not isinstance(args, (int, float))
                                       or (t == "integer" and isinstance(args, float) and not args.is_integer())):
        return [f"{path} is {type(args).__name__}, the schema says {t}"]
    if isinstance(schema.get("enum"), list) and args not in schema["enum"]:
        out.append(f"{path} is {json.dumps(args)[:40]}, not one of the enum values")
    if isinstance(args, dict):
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        for key in schema.get("required") or []:
            if isinstance(key, str) and key not in args:
                out.append(f"{path} lacks the required property {key!r}")
        if schema.get("additionalProperties") is False:
            out += [f"{path} has {k!r}, which the schema does not allow" for k in args if k not in props]
        for k, sub in props.items():
            if k in args:
                out += _schema_problems(args[k], sub, f"{path}.{k}")
    elif isinstance(args, list) and isinstance(schema.get("items"), dict):
        for n, item in enumerate(args[:50]):
            out += _schema_problems(item, schema["items"], f"{path}[{n}]")
    return out[:5]


def _tools(body: dict) -> dict[str, Any]:
    """name -> parameters schema of the request's function tools (Chat Completions and Responses shapes)."""
    out = {}
    for t in body.get("tools") or []:
        if not isinstance(t, dict) or t.get("type") not in (None, "function"):
            continue
        fn = t.get("function") if isinstance(t.get("function"), dict) else t
        if isinstance(fn.get("name"), str):
            out[fn["name"]] = fn.get("parameters")
    return out


def _required_tool(body: dict) -> Optional[str]:
    """'*' when tool_choice requires some tool, the name when it requires one, else None."""
    tc = body.get("tool_choice")
    if tc == "required":
        return "*"
    if isinstance(tc, dict):
        fn = tc.get("function") if isinstance(tc.get("function"), dict) else tc
        if isinstance(fn.get("name"), str):
            return fn["name"]
    return None


def _call_obs(name: str, args: Optional[str], tools: dict, where: str) -> list[Obs]:
    obs = []
    if HARMONY_MARKUP_RE.search(name) or "<|" in name:
        obs.append(Obs("probe.tools.name_leak", "fail", f"Harmony tokens leaked into the tool name {name!r} ({where})"))
    elif tools and name not in tools:
        obs.append(Obs("probe.tools.name_leak", "warn", f"{where}: a call to {name!r}, which the request does not offer "
                       f"(offered: {', '.join(list(tools)[:5])})"))
    else:
        obs.append(Obs("probe.tools.name_leak", "pass", f"tool name {name!r} is one the request offers ({where})"))
    if not _json_ok(args):
        obs.append(Obs("probe.tools.invalid_json", "fail", f"{where}: the arguments of {name} are not valid JSON: "
                       f"{_short(args or '', 120)!r}"))
        return obs
    obs.append(Obs("probe.tools.invalid_json", "pass", f"{where}: the arguments of {name} are valid JSON"))
    problems = _schema_problems(json.loads(args), tools.get(name)) if name in tools else []
    if problems:
        obs.append(Obs("probe.tools.schema", "fail", f"{where}: {name}'s arguments do not follow its schema: "
                       + "; ".join(problems), [f"arguments: {_short(args, 200)}"],
                       fix="the model answered off-schema: mark the tool strict where the engine supports it, or "
                           "validate and retry in the client; if every call is off-schema, check the chat template"))
    elif name in tools:
        obs.append(Obs("probe.tools.schema", "pass", f"{where}: {name}'s arguments follow its schema"))
    return obs


def _format_obs(body: dict, text: str, where: str) -> list[Obs]:
    rf = body.get("response_format")
    if not isinstance(rf, dict) or rf.get("type") not in ("json_schema", "json_object"):
        return []
    if HARMONY_MARKUP_RE.search(text):
        return [Obs("probe.structured_output", "fail", f"{where}: Harmony markup in the JSON answer", [_short(text, 200)])]
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return [Obs("probe.structured_output", "fail", f"{where}: response_format asks for JSON, the answer is not "
                    f"JSON: {_short(text, 120)!r}")]
    schema = (rf.get("json_schema") or {}).get("schema") if rf.get("type") == "json_schema" else None
    problems = _schema_problems(value, schema) if schema else []
    if problems:
        return [Obs("probe.structured_output", "fail", f"{where}: the JSON answer does not follow the schema: "
                    + "; ".join(problems), [_short(text, 200)])]
    return [Obs("probe.structured_output", "pass", f"{where}: the answer follows response_format")]


def _answer_obs(body: dict, msg: dict, choice: dict, where: str) -> tuple[list[Obs], Optional[tuple[str, str]]]:
    """Observations of one chat answer, and its first tool call (name, arguments)."""
    obs: list[Obs] = []
    content = msg.get("content") if isinstance(msg.get("content"), str) else ""
    fname, reasoning = _reasoning_of(msg)
    calls = [c for c in msg.get("tool_calls") or [] if isinstance(c, dict)]
    finish = choice.get("finish_reason")
    why = garbled(content) or garbled(reasoning or "")
    if why and not HARMONY_MARKUP_RE.search(content):
        return [Obs("probe.chat", "fail", f"{where}: the answer is not language ({why}): the model's weights, "
                    "quantisation or kernels are broken, not a server flag", [f"content: {_short(content, 160)!r}"],
                    fix="check the checkpoint, its quantisation and the GPU kernels")], None
    if content.strip() or calls:
        obs.append(Obs("probe.chat", "pass", f"{where}: answered (finish_reason {finish})"))
    elif reasoning:
        obs.append(Obs("probe.chat", "fail" if finish != "length" else "warn",
                       f"{where}: empty content, the answer is only in {fname} (finish_reason {finish})",
                       [f"{fname}: {_short(reasoning, 160)}"],
                       fix="the reasoning used the token budget: raise max_tokens or lower reasoning_effort"
                       if finish == "length" else "read the reasoning field, or ask for less reasoning"))
    else:
        obs.append(Obs("probe.chat", "fail", f"{where}: empty content and no tool call (finish_reason {finish})"))
    if content:
        obs += content_checks(content, f"{where}'s content")
    tools = _tools(body)
    required = _required_tool(body)
    first = None
    if calls:
        fn = calls[0].get("function") if isinstance(calls[0].get("function"), dict) else {}
        args = fn.get("arguments")
        args = json.dumps(args) if isinstance(args, dict) else args if isinstance(args, str) else None
        name = fn.get("name") if isinstance(fn.get("name"), str) else ""
        first = (name, args or "")
        obs.append(Obs("probe.tools.call", "pass", f"{where}: {name} returned in tool_calls"))
        for c in calls:
            f2 = c.get("function") if isinstance(c.get("function"), dict) else {}
            a2 = f2.get("arguments")
            a2 = json.dumps(a2) if isinstance(a2, dict) else a2 if isinstance(a2, str) else None
            obs += _call_obs(str(f2.get("name") or ""), a2, tools, where)
        if finish not in ("tool_calls", None):
            obs.append(Obs("probe.tools.call", "warn", f"{where}: tool_calls came with finish_reason {finish!r}, not "
                           "'tool_calls': clients that branch on finish_reason will not run the tool"))
    elif required:
        leaked = bool(HARMONY_MARKUP_RE.search(content) or "to=functions" in content)
        obs.append(Obs("probe.tools.call", "fail", f"{where}: tool_choice requires "
                       + ("a tool call" if required == "*" else f"a call to {required}") + " and none came back"
                       + (f"; content: {_short(content, 100)!r}" if content else "")))
        if leaked:
            obs.append(Obs("probe.tools.no_parser", "fail", f"{where}: the tool call came back as text in content",
                           [f"content: {_short(content, 200)}"]))
    elif tools and ("to=functions" in content or HARMONY_MARKUP_RE.search(content)):
        obs.append(Obs("probe.tools.no_parser", "fail", f"{where}: a tool call came back as text in content",
                       [f"content: {_short(content, 200)}"]))
    obs += _format_obs(body, content, where)
    return obs, first


async def _chat(ctx: Ctx, path: str, body: dict) -> list[Obs]:
    obs: list[Obs] = []
    r = await ctx.client.post(path, {**body, "stream": False})
    first = None
    if not r.ok:
        obs += http_failure("probe.chat", f"{WHERE} (stream false)", r)
    else:
        obj = r.json_object()
        msg = _message(obj)
        if msg is None:
            obs.append(Obs("probe.chat", "fail", f"{WHERE}: the answer is not a chat completion", [_short(r.text, 300)]))
        else:
            more, first = _answer_obs(body, msg, obj["choices"][0], f"{WHERE} (stream false)")
            obs += more
    what = f"{WHERE} (stream true)"
    res = await ctx.client.stream(path, {**body, "stream": True})
    s = summarize_chat_stream(res)
    obs += framing_obs(res, what, s, ctx.engine)
    if res.ended in ("not_sse", "redirect"):
        return obs
    obs += error_chunk_obs(s, what)
    if s.content:
        obs += content_checks(s.content, f"{what}'s content")
    tools = _tools(body)
    if s.tool_calls:
        acc = s.tool_calls[sorted(s.tool_calls, key=str)[0]]
        joined, frags = acc["args"], acc["fragments"]
        obs += [o for o in _call_obs(acc["name"], joined, tools, what) if o.id != "probe.tools.name_leak" or o.status != "pass"]
        if duplicated(frags, joined, first[1] if first else None):
            obs.append(Obs("probe.tools.stream_duplicated", "fail", f"{what}: streamed argument fragments are "
                           f"duplicated: {_short(joined, 120)!r}", [f"{len(frags)} fragments: {_short(frags[:8], 200)}"]))
        else:
            obs.append(Obs("probe.tools.stream_duplicated", "pass", f"{what}: no duplicated argument fragments"))
        if first and _json_ok(joined) and _json_ok(first[1]):
            same = json.loads(joined) == json.loads(first[1])
            obs.append(Obs("probe.tools.stream", "pass" if same else "warn",
                           f"{what}: the streamed arguments " + ("equal" if same else "differ from (sampling?)")
                           + " the non-streamed ones"))
        elif first:
            obs.append(Obs("probe.tools.stream", "fail", f"{what}: the streamed arguments differ from the "
                           "non-streamed ones", [f"streamed: {_short(joined, 150)}", f"non-streamed: {_short(first[1], 150)}"]))
    elif first and not s.error_texts:
        obs.append(Obs("probe.tools.stream", "fail", f"{what}: no tool_calls deltas, although the non-streamed "
                       "answer called a tool" + (f"; content: {_short(s.content, 100)!r}" if s.content else "")))
    elif _required_tool(body) and not s.error_texts:
        obs.append(Obs("probe.tools.call", "fail", f"{what}: tool_choice requires a tool call and none was streamed"))
    return obs


def _responses_items(obj: dict) -> tuple[list[dict], str]:
    items = [i for i in obj.get("output") or [] if isinstance(i, dict)]
    text = "".join(str(c.get("text") or "") for i in items if i.get("type") == "message"
                   for c in i.get("content") or [] if isinstance(c, dict))
    return items, text


async def _responses(ctx: Ctx, path: str, body: dict) -> list[Obs]:
    obs: list[Obs] = []
    tools = _tools(body)
    r = await ctx.client.post(path, {**body, "stream": False})
    if not r.ok:
        obs += http_failure("probe.responses", f"{WHERE} (stream false)", r)
    else:
        obj = r.json_object() or {}
        items, text = _responses_items(obj)
        status = obj.get("status")
        obs.append(Obs("probe.responses", "pass" if status == "completed" else "warn",
                       f"{WHERE} (stream false): status {status!r}, {len(items)} output item(s)"))
        if text:
            obs += content_checks(text, f"{WHERE}'s output text")
        for i in items:
            if i.get("type") == "function_call":
                obs += _call_obs(str(i.get("name") or ""), i.get("arguments") if isinstance(i.get("arguments"), str)
                                 else None, tools, f"{WHERE} (stream false)")
        if _required_tool(body) and not any(i.get("type") == "function_call" for i in items):
            obs.append(Obs("probe.responses.function_call", "fail", f"{WHERE}: tool_choice requires a tool call and "
                           "no function_call item came back"))
    what = f"{WHERE} (stream true)"
    res = await ctx.client.stream(path, {**body, "stream": True},
                                  until=lambda ev: (ev.event or "") in ("response.completed", "response.failed",
                                                                        "response.incomplete", "error"))
    if res.ended == "not_sse":
        rr = res.as_response()
        if rr.status and rr.status >= 400:
            obs += http_failure("probe.stream.framing", what, rr)
        return obs
    errors, completed, deltas = [], False, {}
    for ev in res.events:
        try:
            data = json.loads(ev.data)
        except (ValueError, RecursionError):
            continue
        if not isinstance(data, dict):
            continue
        kind = str(data.get("type") or ev.event or "")
        if kind in ("error", "response.failed"):
            errors.append(error_message(data.get("response") or data, ev.data))
        if kind == "response.completed":
            completed = True
        if kind == "response.function_call_arguments.delta" and isinstance(data.get("delta"), str):
            deltas.setdefault(str(data.get("item_id") or data.get("output_index")), []).append(data["delta"])
    if errors:
        obs.append(Obs("probe.stream.error_chunk", "fail", f"{what}: an error event: {_short(errors[0], 200)}",
                       error_text=errors[0]))
    else:
        obs.append(Obs("probe.stream.error_chunk", "pass", f"{what}: no error event"))
    obs.append(Obs("probe.responses", "pass" if completed else "fail",
                   f"{what}: " + ("ends with response.completed" if completed else
                                  f"no response.completed ({len(res.events)} events, ended: {res.ended})")))
    for frags in deltas.values():
        joined = "".join(frags)
        if duplicated(frags, joined, None):
            obs.append(Obs("probe.tools.stream_duplicated", "fail", f"{what}: function_call_arguments deltas are "
                           f"duplicated: {_short(joined, 120)!r}"))
    return obs


async def replay(ctx: Ctx, req) -> list[Obs]:
    """Send ``req`` (check.request.UserRequest) as given, twice (stream false, stream true), and judge both."""
    body = dict(req.body)
    if ctx.model and (ctx.override_model or not body.get("model")):
        body["model"] = ctx.model
    ctx.client.extra_headers = dict(req.headers)
    if req.api == "responses":
        return await _responses(ctx, req.path, body)
    return await _chat(ctx, req.path, body)
