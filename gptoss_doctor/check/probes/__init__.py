"""check, stage 2 (probe): small real requests to the gpt-oss model, judged for known failure signatures. One
module per area: ``common`` (requests, observations, content checks), ``chat``, ``tools``, ``responses``, ``builtin``
(the Responses API's built-in python tool), ``extras``
(structured output, /metrics). Each probe returns ``Obs`` observations (finding id, status, detail, evidence, and any
server error text for the matcher); ``judge`` merges them into findings and ``link`` attaches the knowledge base."""

from __future__ import annotations

import asyncio
from typing import Any, Optional

from gptoss_doctor import engines, settings
from gptoss_doctor.check.probes.common import HARMONY_ERROR_RE, Ctx, Obs, _short
from gptoss_doctor.check.probes.chat import chat, chat_stream
from gptoss_doctor.check.probes.tools import chat_two_turn, compare_stream, tools, tools_stream
from gptoss_doctor.check.probes.responses import responses_plain, responses_stream, responses_two_turn

__all__ = ["HARMONY_ERROR_RE", "Ctx", "Obs", "chat", "guard", "run_all"]  # what the other stages use


async def run_all(ctx: Ctx, deep: bool, chat_obs: Optional[list[Obs]] = None,
                  saturation_obs: Optional[list[Obs]] = None) -> list[Obs]:
    """Every probe, concurrently where independent (``chat_obs``: the plain chat already run on its own;
    ``saturation_obs``: /metrics and the first-token time, taken before any probe was in flight)."""
    profile = engines.get(ctx.engine)
    if not profile.chat_api:
        return await responses_only(ctx, deep, profile.only_responses or f"{profile.label} serves no chat API")
    tools_task = asyncio.ensure_future(tools(ctx))
    stream_task = asyncio.ensure_future(tools_stream(ctx))
    from gptoss_doctor.check.probes import extras as probe_extras

    jobs = [_done(chat_obs) if chat_obs is not None else chat(ctx), chat_stream(ctx),
            probe_extras.structured_output(ctx),
            _done(saturation_obs) if saturation_obs is not None else probe_extras.saturation(ctx)]
    if deep:
        from gptoss_doctor.check.probes.builtin import builtin_tools

        jobs += [responses_stream(ctx), responses_two_turn(ctx), builtin_tools(ctx)]

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
           "probe.responses", "probe.responses.tool_output", "probe.responses.builtin_tools"]
    results = await asyncio.gather(*(guard(job, fid) for job, fid in zip([tool_chain(), *jobs], ids)))
    return [o for group in results for o in group]

# what a server without chat completions cannot be asked: one skip each, with the reason
CHAT_ONLY = ("probe.chat", "probe.tools.call", "probe.stream.framing", "probe.structured_output",
             "metrics.saturation")


async def responses_only(ctx: Ctx, deep: bool, why: str) -> list[Obs]:
    """An engine that serves only the Responses API: its probes run without --deep (they are all it has; the
    built-in python tool still needs --deep), the chat-completions ones are skips that say why."""
    jobs = [responses_plain(ctx), responses_stream(ctx), responses_two_turn(ctx)]
    if deep:
        from gptoss_doctor.check.probes.builtin import builtin_tools

        jobs.append(builtin_tools(ctx))
    ids = ["probe.responses", "probe.responses", "probe.responses.tool_output", "probe.responses.builtin_tools"]
    results = await asyncio.gather(*(guard(job, fid) for job, fid in zip(jobs, ids)))
    return [Obs(fid, "skip", why) for fid in CHAT_ONLY] + [o for group in results for o in group]


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
