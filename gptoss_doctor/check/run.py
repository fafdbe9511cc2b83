"""check: the pipeline for each target — discover (engine, models, stop tokens) → probe (small requests) → judge
(findings) → link (knowledge base) — with every request of a phase concurrent, and targets checked concurrently up
to ``concurrency``. ``report`` renders the results."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Callable, Optional
from urllib.parse import urlsplit

from gptoss_doctor import engines, settings
from gptoss_doctor.check import discover as E
from gptoss_doctor.check import probes as P
from gptoss_doctor.check.judge import (
    Collector, judge_context, judge_engine, judge_eos, judge_health, judge_models, judge_structured_leak,
    judge_hidden_parser, judge_proxy_backend, judge_ran_past_call, judge_same_refusal, judge_unoffered_tool_call,
    proxy_backend_fault,
)
from gptoss_doctor.check.link import build_finding
from gptoss_doctor.check.result import CheckOptions, TargetResult
from gptoss_doctor.check.targets import public_url


async def check_target(url: str, opts: CheckOptions, notes: Optional[list[str]] = None,
                       progress: Optional[Callable[[str], None]] = None) -> TargetResult:
    from gptoss_doctor.net.http import Client

    t0 = time.monotonic()
    res = TargetResult(url=public_url(url), notes=list(notes or []))
    col = Collector()
    parts = urlsplit(url)
    client = Client(url, api_key=opts.api_key, timeout=opts.timeout)
    if parts.username and not opts.api_key:
        client.api_key = None
    try:
        await _check(client, res, col, opts, progress or (lambda text: None))
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - one odd server must not take the other targets down
        if settings.debug():
            raise
        col.add("engine.identified", "error", f"internal error while checking this server: {type(exc).__name__}: "
                f"{str(exc)[:200]} (a bug in gptoss-doctor: run with --debug and report it)")
    finally:
        await client.aclose()
    res.requests = client.requests
    res.health_failed = col.health_failed
    for fid, status, detail, evidence, errors, fix, kb_ids in col.merged():
        res.checks.append(build_finding(fid, status, detail, evidence, errors, fix, res.engine, res, kb_ids))
    res.seconds = time.monotonic() - t0
    return res


async def _check(client, res: TargetResult, col: Collector, opts: CheckOptions,
                 progress: Callable[[str], None]) -> None:
    where = public_url(client.base_url)
    progress(f"{where}: discovering the engine …")
    d = await E.discover(client)
    res.reachable, res.llm_server = d.reachable, d.llm_server
    res.engine, res.version, res.engine_evidence = d.engine, d.version, d.engine_evidence
    res.models = d.models
    if not d.reachable:
        r = d.network_error
        kind = r.error if r is not None else "other"
        banner = await _banner(client.base_url) if kind == "timeout" else None
        if banner:
            # silence after a banner of another protocol is not an overloaded HTTP server
            col.add("reach.not_llm", "fail", f"the port speaks another protocol, not HTTP (it greets with "
                    f"{banner!r})", [f"first bytes from {where}: {banner!r}"],
                    fix="point the doctor at the HTTP port of the OpenAI-compatible server")
            res.reachable, res.llm_server = True, False
            return
        fid = {"dns": "reach.dns", "refused": "reach.refused", "tls": "reach.tls", "timeout": "reach.timeout",
               "reset": "reach.reset"}.get(kind, "reach.refused" if kind == "connect" else "reach.reset")
        col.add(fid, "fail", r.error_message if r is not None else "no answer", [f"GET {where}/v1/models"])
        res.llm_server = False
        return
    if d.redirect_to:
        col.add("reach.redirect", "fail", f"the server redirects to another host, port or scheme: {d.redirect_to} "
                "(not followed; the API key was not sent there)", [f"Location: {d.redirect_to}"])
        return
    if not d.llm_server and "redirects" in (d.responses["/v1/models"].error_message or ""):
        col.add("reach.redirect", "fail", "the server redirects in a loop (" + d.responses["/v1/models"].error_message
                + " on the same host)", [f"GET /v1/models -> {d.responses['/v1/models'].describe()}"[:200]],
                fix="fix the redirect configuration of the server or the proxy in front of it")
        return
    if not d.llm_server:
        m = d.responses["/v1/models"]
        root = d.responses["/"]
        ev = [f"GET /v1/models -> {m.describe()}"[:200]]
        if root.answered:
            ev.append(f"GET / -> HTTP {root.status} {root.content_type or ''} {root.snippet(80)}"[:200])
        server = next((x.headers.get("server") for x in d.responses.values() if x.headers.get("server")), None)
        if server:
            ev.append(f"Server: {server[:80]}")
        col.add("reach.not_llm", "fail", "the URL answers HTTP but not as an OpenAI-compatible LLM server "
                "(no JSON model list at /v1/models)", ev)
        return
    # authentication
    if d.auth_status:
        res.auth_problem = True
        where = d.auth_path
        if opts.api_key:
            fix = engines.get(d.engine).fixes.get("auth.rejected") or \
                "check the key the server was started with (--api-key)"
            col.add("auth.required", "fail", f"the API key was rejected (HTTP {d.auth_status} on {where})",
                    [d.responses[where].snippet(160)], fix=fix)
        else:
            col.add("auth.required", "fail", f"the server requires an API key (HTTP {d.auth_status} on {where})",
                    [d.responses[where].snippet(160)])
    else:
        col.add("auth.required", "pass", "API key accepted" if opts.api_key else "no API key needed")
    judge_health(d, col)
    judge_engine(d, col)
    if d.auth_status:
        return
    model = judge_models(d, col, opts)
    res.model = model
    gpt = bool(model and d.model(model) and d.model(model).gpt_oss)
    jobs: list = [P.guard(E.enrich(client, d, model), "models.context"),
                  _tokenizer_guarded(client, d, model)]
    ctx = P.Ctx(client=client, model=model or "", engine=d.engine, gpt_oss=gpt, version=d.version,
                override_model=bool(opts.model))
    if opts.request is not None:  # the user's own request instead of the doctor's small ones
        from gptoss_doctor.check.probes.replay import replay

        asked = opts.request.body.get("model")
        served = [m.id for m in d.models]
        if asked and served and asked not in served and not opts.model:
            col.add("models.listed", "warn", f"your request names the model {asked!r}, which this server does not "
                    f"serve (served: {', '.join(served[:5])}): it is sent as given",
                    fix=f"replay it against the served model with --model {served[0]}, or fix the model name in "
                        "the client")

        jobs.append(replay(ctx, opts.request))
    elif model and not opts.quick and not engines.get(d.engine).chat_api:
        jobs.append(P.run_all(ctx, opts.deep))  # an engine that serves only the Responses API
    elif model and not opts.quick:
        # the server's own load first, while none of the doctor's requests is in flight (its probes run
        # concurrently, and a small --max-num-seqs would queue them: that queue is the doctor's, not the server's)
        from gptoss_doctor.check.probes import extras as probe_extras

        before = await P.guard(probe_extras.saturation(ctx), "metrics.saturation")
        jobs.append(P.run_all(ctx, opts.deep, chat_obs=await _first_chat(client, ctx, col, opts),
                              saturation_obs=before))
    progress(f"{where}: {engines.label(d.engine)} {d.version or ''} — "
             + ("tokenizer and stop tokens …" if opts.quick or not model else f"probing {model} …"))
    out = await asyncio.gather(*jobs)
    late = client.seen_headers.get("x-litellm-version")
    if d.engine == "litellm" and not d.version and late:
        # LiteLLM puts its version on every completion (x-litellm-version), not on its discovery endpoints
        d.version = late
        d.engine_evidence.append(f"x-litellm-version: {late} (on a completion)")
    if d.version != res.version:  # found after discovery (LiteLLM's /openapi.json, a completion header)
        res.version = d.version
        col.obs.pop("engine.identified", None)
        col.obs.pop("engine.version", None)
        judge_engine(d, col)
    if isinstance(out[0], list):  # enrich() failed inside: its error observation
        col.extend(out[0])
    proxy_fault = None
    if len(out) > 2:
        obs = out[2]
        col.extend(obs)
        judge_structured_leak(col, d.engine)
        judge_unoffered_tool_call(col)
        judge_same_refusal(col, d.engine)
        judge_ran_past_call(col)
        judge_hidden_parser(col)
        judge_proxy_backend(col, d, model)
        proxy_fault = proxy_backend_fault(d, obs)
        if proxy_fault:
            detail, fix, text = proxy_fault
            col.health_failed = True
            col.add("health", "fail", detail, [text[:200]], error_text=text[:2000], fix=fix)
        elif any(o.evidence and any("HTTP 401" in e or "HTTP 403" in e for e in o.evidence) for o in obs):
            res.auth_problem = True
            col.add("auth.required", "fail", "a probe was refused with HTTP 401/403")
        chat_down = [o for o in obs if o.id == "probe.chat" and o.status == "fail" and not P.HARMONY_ERROR_RE.search(
            o.error_text) and re.search(r"HTTP 5\d\d|no models? (?:are )?loaded|model is not loaded|loading model",
                                         o.detail, re.I)]
        if chat_down and not col.health_failed:
            col.health_failed = True
            col.add("health", "fail", "the health endpoint is OK but a plain chat fails: " + chat_down[0].detail,
                    error_text=chat_down[0].error_text)
    if col.health_failed:
        # one root cause, one failure: requests refused by a dead engine are not judged separately
        for fid, group in col.obs.items():
            for o in group:
                if fid.startswith("probe.") and fid != "probe.harmony_error" and o.status in ("fail", "error", "warn") \
                        and o.http_status is not None and (o.http_status >= 500 or o.http_status in (404, 429)
                                                           or (proxy_fault is not None and o.http_status >= 400)):
                    # behind a proxy whose backend refuses every request (its key, a cooldown), any refusal is that
                    why = "the proxy's backend refused it, see health" if proxy_fault else "the engine is unhealthy"
                    # the refusal is quoted once, under health: here only what was refused and the status
                    short = re.sub(r"(HTTP \d{3}\)?).*", r"\1", o.detail, flags=re.S)
                    o.status, o.detail = "skip", f"not judged, {why} ({short})"
                    o.evidence, o.error_text, o.fix = [], "", ""
    tok = out[1]
    if tok.status == "error" and col.health_failed:
        tok.status, tok.detail = "skip", f"not judged, the engine is unhealthy ({tok.detail})"
    if tok.status == "pass" and not gpt and model and d.model(model):
        # the name does not say gpt-oss, but the tokenizer is Harmony's: it is a gpt-oss checkpoint
        d.model(model).gpt_oss = True
        col.obs.pop("models.gpt_oss", None)
        col.add("models.gpt_oss", "pass", f"{model} has the Harmony tokenizer (gpt-oss under another name)")
        gpt = True
    if gpt or tok.status == "pass":
        col.add("tokenizer.special_tokens", tok.status, tok.detail, tok.evidence)
    if d.backends:
        res.engine_evidence.append("backend: " + "; ".join(d.backends[:3]))
        for o in col.obs.get("engine.identified", []):
            o.detail += " in front of " + "; ".join(d.backends[:3]) + " (check that backend directly too)"
    judge_context(d, col, model)
    judge_eos(d, col, opts, model, gpt)
    for fid, keys in (("probe.reasoning", ("reasoning_parser",)), ("probe.harmony_leak", ("reasoning_parser",)),
                      ("probe.flattened_channels", ("reasoning_parser",)),
                      ("probe.tools.no_parser", ("tool_call_parser",)), ("probe.tools.call", ("tool_call_parser",)),
                      ("models.context", ("context_length",))):
        for o in col.obs.get(fid, []):
            if o.status in ("fail", "warn"):
                o.evidence.extend(d.config_evidence[k] for k in keys if k in d.config_evidence)
    if opts.quick:
        col.add("probe.chat", "skip", "--quick: behavioural probes skipped")


# a plain chat slower than this share of --timeout (and at least this many seconds) marks a slow server
SLOW_SHARE, SLOW_MIN_S = 0.25, 1.0


async def _first_chat(client, ctx, col: Collector, opts: CheckOptions) -> list:
    """Run the plain chat alone and time it: a server that answers it slowly (CPU, a small GPU, one request at a
    time) gets the remaining probes one at a time, each with the full --timeout, and slowness is reported as
    slowness instead of as timeouts of every concurrent probe."""
    t0 = time.monotonic()
    obs = await P.guard(P.chat(ctx), "probe.chat")
    took = time.monotonic() - t0
    answered = any(o.status in ("pass", "warn") for o in obs)
    if answered and took >= max(SLOW_MIN_S, SLOW_SHARE * opts.timeout):
        client.one_at_a_time()
        col.add("probe.latency", "warn", f"a plain chat took {took:.1f} s with --timeout {opts.timeout:g} s: the "
                "server is slow or answers one request at a time, so the other probes were sent one at a time",
                [f"POST /v1/chat/completions answered in {took:.1f} s"],
                fix="nothing is broken by this; on slow hardware raise --timeout, or check the server's load "
                    "(see Saturation) if it is usually faster")
    return obs


async def _banner(base_url: str, wait: float = 1.5) -> str | None:
    """The first bytes a port sends unasked (SSH, SMTP, FTP, Redis greet first; HTTP servers never do)."""
    from urllib.parse import urlsplit

    parts = urlsplit(base_url)
    if parts.scheme != "http" or not parts.hostname:
        return None
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(parts.hostname, parts.port or 80), wait)
    except (OSError, asyncio.TimeoutError):
        return None
    try:
        data = await asyncio.wait_for(reader.read(64), wait)
    except (OSError, asyncio.TimeoutError):
        data = b""
    finally:
        writer.close()
    text = data.decode("latin-1").split("\r")[0].split("\n")[0].strip()
    return text[:60] if text and not text.startswith("HTTP/") else None


async def _tokenizer_guarded(client, d, model):
    try:
        return await E.tokenizer_check(client, d, model)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001
        if settings.debug():
            raise
        return E.TokenizerCheck("error", f"internal error: {type(exc).__name__}: {exc} (a bug in gptoss-doctor)")


async def run_targets(urls: list[tuple[str, list[str]]], opts: CheckOptions,
                      progress: Optional[Callable[[str], None]] = None) -> list[TargetResult]:
    sem = asyncio.Semaphore(max(1, opts.concurrency))
    done = 0

    async def one(url: str, notes: list[str]) -> TargetResult:
        nonlocal done
        async with sem:
            r = await check_target(url, opts, notes, progress)
            done += 1
            if progress and len(urls) > 1:
                progress(f"{done}/{len(urls)} targets checked")
            return r

    return list(await asyncio.gather(*(one(u, n) for u, n in urls)))


def run(urls: list[tuple[str, list[str]]], opts: CheckOptions,
        progress: Optional[Callable[[str], None]] = None) -> list[TargetResult]:
    return asyncio.run(run_targets(urls, opts, progress))
