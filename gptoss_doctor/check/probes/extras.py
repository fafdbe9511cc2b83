"""Two more probes for ``check``: saturation from the engine's /metrics (plus the time to first token of a tiny
request of our own), and structured output (``response_format`` with a JSON schema), a known weak spot of gpt-oss
serving: grammar-constrained decoding can stop the model from writing its Harmony channels."""

from __future__ import annotations

import json
import time
from typing import Optional

from gptoss_doctor import engines
from gptoss_doctor.check import metrics as M
from gptoss_doctor.check.probes.common import (
    HARMONY_MARKUP_RE, Ctx, Obs, _body_payload, _message, error_message, garbled, http_failure,
)

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
          "additionalProperties": False}
STRUCTURED_PROMPT = "What is the capital of France? Answer as JSON."


async def first_token_seconds(ctx: Ctx) -> Optional[float]:
    """Seconds until the first SSE event of a one-token streamed chat (None when it did not stream)."""
    seen: list[float] = []
    t0 = time.monotonic()

    def until(ev) -> bool:
        if not seen:
            seen.append(time.monotonic() - t0)
        return False

    body = _body_payload({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1, "stream": True}, ctx)
    res = await ctx.client.stream("/v1/chat/completions", body, seconds=min(ctx.client.timeout, 30.0), until=until)
    return seen[0] if seen and res.status == 200 else None


async def saturation(ctx: Ctx) -> list[Obs]:
    """KV cache, queue, preemptions, aborts and prefix-cache hits from /metrics, then the TTFT of a tiny request.
    ``check`` runs this before any other probe and waits for it: with the doctor's own requests in flight, the queue
    and the first-token time would measure the doctor (its probes run concurrently), not the server's other load."""
    profile = engines.get(ctx.engine)
    if profile.metrics is None and profile is not engines.UNKNOWN:
        obs: list[Obs] = []
        r = None
    else:
        r = await ctx.client.get("/metrics", limit=4 << 20)
    if r is None:
        pass
    elif not r.ok or "text/plain" not in (r.content_type or "text/plain"):
        detail = f"/metrics not available ({r.describe()[:80]})"
        if profile.metrics is not None and profile.metrics.enable_hint:
            detail += f": {profile.metrics.enable_hint} to see saturation"
        obs = [Obs("metrics.saturation", "skip", detail)]
    else:
        sat = M.read(ctx.engine, M.parse(r.text))
        if sat is None:
            obs = [Obs("metrics.saturation", "skip", "/metrics answers but has no engine metrics gpt-oss-doctor knows")]
        else:
            obs = []
            for p in M.assess(sat):
                status = {"pass": "pass", "warn": "warn", "info": "pass"}[p.status]
                when = " (before the doctor's probes)" if p.what in ("KV cache", "Waiting queue") else ""
                obs.append(Obs("metrics.saturation", status, f"{p.what}: {p.detail}{when}",
                               [f"GET /metrics ({sat.engine}), read before the doctor sent any probe"], fix=p.fix))
    ttft = await first_token_seconds(ctx) if ctx.model else None
    if ttft is not None:
        for p in M.assess(M.Saturation(ctx.engine), ttft_s=ttft):
            obs.append(Obs("metrics.ttft", "warn" if p.status == "warn" else "pass", p.detail,
                           ["POST /v1/chat/completions (stream, max_tokens 1), sent alone before the other probes"],
                           fix=p.fix))
    return obs


async def structured_output(ctx: Ctx) -> list[Obs]:
    body = _body_payload({
        "messages": [{"role": "user", "content": STRUCTURED_PROMPT}], "max_tokens": 512, "temperature": 0,
        "reasoning_effort": "low",
        "response_format": {"type": "json_schema", "json_schema": {"name": "capital", "schema": SCHEMA, "strict": True}},
    }, ctx)
    r = await ctx.client.post("/v1/chat/completions", body)
    where = "structured output (response_format json_schema)"
    if not r.ok:
        obs = http_failure("probe.structured_output", where, r)
        text = error_message(r.json(), r.text)
        for o in obs:
            o.error_text = text
            if r.status is not None and 400 <= r.status < 500 and r.status != 429:  # 429: busy, not a refusal
                o.status = "warn"
                o.detail = f"{where}: the server refused response_format (HTTP {r.status}): {text[:160]}"
        return obs
    obj = r.json_object() or {}
    msg = _message(obj) or {}
    content = msg.get("content") or ""
    finish = ((obj.get("choices") or [{}])[0] or {}).get("finish_reason")
    if HARMONY_MARKUP_RE.search(content):
        return [Obs("probe.structured_output", "fail", f"{where}: Harmony markup in the JSON answer "
                    f"({content[:80]!r}): the grammar constrained the Harmony channels, not only the final answer",
                    [content[:200]], error_text=content[:2000])]
    thought = msg.get("reasoning_content") or msg.get("reasoning") or ""
    if garbled(content) or (not content.strip() and isinstance(thought, str) and garbled(thought)):
        return [Obs("probe.structured_output", "skip", f"{where}: not judged: the model's output is not language "
                    "(broken weights, quantisation or kernels)", [(content or str(thought))[:200]])]
    if not content.strip():
        why = "the reasoning used up max_tokens" if finish == "length" else f"finish_reason {finish}"
        fix = ("gpt-oss reasons before it answers and the reasoning counts against max_tokens: give requests with "
               "response_format a larger max_tokens or reasoning_effort low") if finish == "length" else ""
        return [Obs("probe.structured_output", "warn", f"{where}: empty content ({why})", [json.dumps(obj)[:200]],
                    fix=fix)]
    try:
        data = json.loads(content)
    except (ValueError, RecursionError):
        return [Obs("probe.structured_output", "fail", f"{where}: the answer is not JSON: {content[:80]!r}",
                    [content[:200]], error_text=content[:2000])]
    if not (isinstance(data, dict) and isinstance(data.get("city"), str)) or set(data) - {"city"}:
        return [Obs("probe.structured_output", "fail", f"{where}: JSON that does not follow the schema: {content[:80]}",
                    [content[:200]])]
    return [Obs("probe.structured_output", "pass", f"{where}: {content[:60]} follows the schema")]
