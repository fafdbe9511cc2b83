"""check, probes: the Responses API's built-in tools (``check --deep``). gpt-oss was trained with a python tool;
vLLM runs it when started with a tool server (``--tool-server demo`` or an MCP server) and the request asks for the
``code_interpreter`` tool. The probe asks the model to run one line of python whose output it cannot guess (a hash
of a fresh nonce) and reads the answer: the tool ran when the output carries a code_interpreter call (streamed:
``response.code_interpreter_call*`` events; vLLM returns the non-streamed call as a reasoning item holding the code),
and its output reached the model when the answer holds the value. Streamed and not, because streaming lost the
output on vLLM (https://github.com/vllm-project/vllm/issues/30222)."""

from __future__ import annotations

import hashlib
import json
import secrets
from typing import Any

from gptoss_doctor import engines
from gptoss_doctor.check.probes.common import Ctx, Obs, _body_payload, _short, error_message
from gptoss_doctor.check.probes.responses import _FINAL_EVENTS, _ev_type, _output_text

FID = "probe.responses.builtin_tools"
TOOLS = [{"type": "code_interpreter", "container": {"type": "auto"}}]
NO_TOOL_SERVER = ("no built-in python tool ran: the server has no tool server for it (vLLM: --tool-server demo, or "
                  "an MCP tool server with code_interpreter), or the model chose not to use it")


def task() -> tuple[str, str, str]:
    """(prompt, code, expected output): a fresh nonce each run, so no model can know the value without running it."""
    nonce = secrets.token_hex(6)
    code = f"import hashlib; print(hashlib.sha256(b'{nonce}').hexdigest()[:12])"
    expected = hashlib.sha256(nonce.encode()).hexdigest()[:12]
    prompt = f"Use the python tool to run this code, then reply with only what it prints:\n{code}"
    return prompt, code, expected


def _body(ctx: Ctx, prompt: str, stream: bool) -> dict:
    return _body_payload({"input": prompt, "tools": TOOLS, "max_output_tokens": 2048, "reasoning": {"effort": "low"},
                          "stream": stream}, ctx)


def _ran_python(items: list[Any]) -> bool:
    """A code_interpreter_call item, or vLLM's shape: the python call as a reasoning item holding the code."""
    for it in items:
        if not isinstance(it, dict):
            continue
        if it.get("type") == "code_interpreter_call":
            return True
        if it.get("type") == "reasoning":
            text = " ".join(c.get("text", "") for c in it.get("content") or [] if isinstance(c, dict))
            if "hashlib" in text and "print(" in text:
                return True
    return False


def _refused(where: str, status: int, text: str, engine: str = "") -> Obs:
    if status in (404, 405, 501):
        return Obs(FID, "skip", f"{where}: no Responses API (HTTP {status})")
    profile = engines.get(engine)
    if status >= 500 and profile.builtin_python:
        # an engine that runs the python tool itself (the gpt-oss reference server): its tool backend failed
        return Obs(FID, "fail", f"{where}: HTTP {status} when the model called the python tool: the tool's backend "
                   f"failed ({_short(text, 80)})", [f"HTTP {status} {_short(text, 200)}"], http_status=status,
                   fix=profile.fix(FID))
    return Obs(FID, "skip", f"{where}: the server refused the code_interpreter tool (HTTP {status}: "
               f"{_short(text, 120)}); it offers no built-in tools", [f"HTTP {status} {_short(text, 200)}"])


def _judge(where: str, ran: bool, answer: str, expected: str, evidence: list[str], engine: str = "") -> Obs:
    if not ran:
        why = (f"the model did not call the python tool ({engines.get(engine).label} runs it itself when the "
               "request declares code_interpreter)") if engines.get(engine).builtin_python else NO_TOOL_SERVER
        return Obs(FID, "skip", f"{where}: {why}", evidence)
    if expected in answer:
        return Obs(FID, "pass", f"{where}: the python tool ran and the answer uses its output ({expected})", evidence)
    return Obs(FID, "fail", f"{where}: the python tool ran but its output did not reach the model (the answer "
               f"{_short(answer, 80)!r} lacks {expected})", evidence)


async def builtin_tools(ctx: Ctx) -> list[Obs]:
    prompt, code, expected = task()
    where = "built-in python tool"
    r = await ctx.client.post("/v1/responses", _body(ctx, prompt, False))
    if r.error:
        return [Obs(FID, "error", f"{where}: {r.error_message or r.error}")]
    if not r.ok:
        obs = [_refused(where, r.status or 0, error_message(r.json(), r.text), ctx.engine)]
        if obs[0].status != "fail":  # refused: the streamed request would only repeat that
            return obs
    else:
        obj = r.json_object() or {}
        items = obj.get("output") if isinstance(obj.get("output"), list) else []
        obs = [_judge(where, _ran_python(items), _output_text(obj), expected,
                      [f"output items: {', '.join(str(i.get('type')) for i in items if isinstance(i, dict))[:120]}"],
                      ctx.engine)]
    if obs[0].status == "skip":  # no tool server: the streamed request would only repeat that
        return obs
    prompt, code, expected = task()
    obs.append(await _streamed(ctx, prompt, expected))
    if obs[0].status == "pass" and obs[1].status == "fail":
        obs[1].detail += "; the same request without streaming worked: streaming loses the tool's output"
        obs[1].fix = "use stream=false for requests that use the built-in python tool, and upgrade the engine"
    return obs


async def _streamed(ctx: Ctx, prompt: str, expected: str) -> Obs:
    where = "built-in python tool (streamed)"
    res = await ctx.client.stream("/v1/responses", _body(ctx, prompt, True),
                                  until=lambda ev: (ev.event or "") in _FINAL_EVENTS)
    if res.ended == "not_sse":
        r = res.as_response()
        return _refused(where, r.status or 0, error_message(r.json(), r.text), ctx.engine)
    if res.error and not res.events:
        return Obs(FID, "error", f"{where}: {res.error_message or res.error}")
    ci_events, text, final_items, outputs, types = [], [], [], [], []
    for ev in res.events:
        try:
            obj = json.loads(ev.data)
        except ValueError:
            continue
        typ = _ev_type(ev, obj)
        types.append(typ)
        if typ.startswith("response.code_interpreter_call"):
            ci_events.append(typ)
        elif typ == "response.output_text.delta" and isinstance(obj.get("delta"), str):
            text.append(obj["delta"])
        elif typ == "response.output_item.done" and isinstance(obj.get("item"), dict):
            item = obj["item"]
            if item.get("type") == "code_interpreter_call" and isinstance(item.get("outputs"), list):
                outputs.extend(item["outputs"])
        elif typ in ("response.completed", "response.incomplete") and isinstance(obj.get("response"), dict):
            final_items = obj["response"].get("output") or []
    evidence = [f"code_interpreter events: {', '.join(dict.fromkeys(e.split('response.', 1)[1] for e in ci_events))}"
                if ci_events else "no response.code_interpreter_call* events"]
    if ci_events and ci_events[-1].endswith(".interpreting") and not any(t in _FINAL_EVENTS for t in types):
        # the server started the tool and the stream ended there: the tool's backend failed (the reference server
        # without a Docker daemon, recorded)
        return Obs(FID, "fail", f"{where}: the stream was cut while the python tool ran ({res.ended} after "
                   "response.code_interpreter_call.interpreting, no response.completed): the tool's backend failed",
                   evidence, fix=engines.get(ctx.engine).fix(FID) or "read the server log for the tool's error")
    answer = "".join(text) or _output_text({"output": final_items})
    ran = bool(ci_events) or _ran_python(final_items)
    o = _judge(where, ran, answer, expected, evidence, ctx.engine)
    if o.status == "pass" and not outputs:
        o.detail += " (the code_interpreter_call items carry no outputs: clients cannot show what the tool printed)"
    return o
