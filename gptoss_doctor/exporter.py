"""exporter: ``check`` on a schedule for a fleet of gpt-oss servers, served as Prometheus metrics.

Schedule → check (``check.run.check_target``, ``--quick`` by default, a full check every ``full_every`` cycles and
on the first) → TTFT (``check.probes.extras.first_token_seconds``) → the latest state per target (``Fleet``) →
``/metrics`` through the official client library (``prometheus_client``, https://github.com/prometheus/client_python,
imported only here), which collects from that state on every scrape.

Causes are ``TargetResult.causes`` (``check.causes``): the series of one cause come from the latest full check,
updated by later quick checks (a quick check only runs discovery, so it cannot clear what the probes found). Every
label value that came from a server goes through the one redactor and has its control characters escaped.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from gptoss_doctor.output.sink import printable
from gptoss_doctor.redact import redact

PREFIX = "gptoss_doctor"
LABEL_CAP = 120  # characters of a label value taken from a server


def label(value: object) -> str:
    """A label value from a server or the knowledge base: redacted, control characters escaped, capped."""
    return printable(redact("" if value is None else str(value)))[:LABEL_CAP]


def cause_key(cause) -> str:
    """A stable name for one cause: its first knowledge-base entry, else its first check's id."""
    return cause.kb[0] if cause.kb else cause.check_ids[0]


@dataclass
class TargetState:
    """What the latest checks of one target found."""

    url: str
    up: Optional[bool] = None
    engine: str = ""
    version: str = ""
    model: str = ""
    causes: dict = field(default_factory=dict)  # cause key -> (status, title)
    ttft: Optional[float] = None
    duration: dict = field(default_factory=dict)  # mode -> seconds of the latest check
    last_run: dict = field(default_factory=dict)  # mode -> unix time the latest check ended
    runs: dict = field(default_factory=dict)  # mode -> checks made


class Fleet:
    """The latest state of every target, shared between the scheduler and the scrapes (one lock)."""

    def __init__(self, urls: list[str]):
        self.lock = threading.Lock()
        self.targets = {u: TargetState(u) for u in urls}
        self.cycle_seconds: Optional[float] = None
        self.cycle_end: Optional[float] = None

    def update(self, url: str, result, mode: str, ttft: Optional[float]) -> None:
        causes = {cause_key(c): (c.status, c.title) for c in result.causes}
        with self.lock:
            st = self.targets[url]
            st.up = bool(result.llm_server)
            st.engine, st.version, st.model = result.engine, result.version or "", result.model or ""
            if mode == "full" or not st.up:
                st.causes = causes  # a full check (or a target gone) says everything anew
            else:
                st.causes.update(causes)
            st.ttft = ttft if ttft is not None else (st.ttft if st.up else None)
            st.duration[mode] = result.seconds
            st.last_run[mode] = time.time()
            st.runs[mode] = st.runs.get(mode, 0) + 1

    def snapshot(self) -> list[TargetState]:
        import copy

        with self.lock:
            return [copy.deepcopy(s) for s in self.targets.values()]


class FleetCollector:
    """A prometheus_client custom collector: every scrape reads the fleet's latest state."""

    def __init__(self, fleet: Fleet):
        self.fleet = fleet

    def describe(self):
        return []  # collected on every scrape, nothing registered ahead

    def collect(self):
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        up = GaugeMetricFamily(f"{PREFIX}_target_up", "1 when the target answered as an LLM server at the latest "
                               "check, 0 when not", labels=["target"])
        info = GaugeMetricFamily(f"{PREFIX}_target_info", "Engine, version and model the latest check found "
                                 "(value 1)", labels=["target", "engine", "version", "model"])
        cause = GaugeMetricFamily(f"{PREFIX}_cause", "One series per problem found (value 1): cause is the "
                                  "knowledge-base entry (or check id), status fail, error or warn",
                                  labels=["target", "cause", "status", "title"])
        counts = GaugeMetricFamily(f"{PREFIX}_causes", "Problems found at the latest checks, by status",
                                   labels=["target", "status"])
        ttft = GaugeMetricFamily(f"{PREFIX}_ttft_seconds", "Seconds to the first streamed event of a one-token chat",
                                 labels=["target"])
        dur = GaugeMetricFamily(f"{PREFIX}_check_duration_seconds", "Seconds the latest check of this mode took "
                                "(all its probes)", labels=["target", "mode"])
        last = GaugeMetricFamily(f"{PREFIX}_last_run_timestamp_seconds", "Unix time the latest check of this mode "
                                 "ended", labels=["target", "mode"])
        runs = CounterMetricFamily(f"{PREFIX}_checks", "Checks made since the exporter started",
                                   labels=["target", "mode"])
        from gptoss_doctor.check.targets import public_url

        for st in self.fleet.snapshot():
            t = label(public_url(st.url))  # never a user:password of the targets file
            if st.up is None:
                continue  # not checked yet: no series rather than a false 0
            up.add_metric([t], 1.0 if st.up else 0.0)
            if st.up:
                info.add_metric([t, label(st.engine), label(st.version), label(st.model)], 1.0)
            for key, (status, title) in sorted(st.causes.items()):
                cause.add_metric([t, label(key), status, label(title)], 1.0)
            for status in ("fail", "error", "warn"):
                counts.add_metric([t, status], float(sum(s == status for s, _ in st.causes.values())))
            if st.ttft is not None:
                ttft.add_metric([t], st.ttft)
            for mode in st.last_run:
                dur.add_metric([t, mode], st.duration[mode])
                last.add_metric([t, mode], st.last_run[mode])
                runs.add_metric([t, mode], float(st.runs[mode]))
        yield from (up, info, cause, counts, ttft, dur, last, runs)
        cyc = GaugeMetricFamily(f"{PREFIX}_cycle_duration_seconds", "Seconds the latest cycle over all targets took")
        end = GaugeMetricFamily(f"{PREFIX}_cycle_timestamp_seconds", "Unix time the latest cycle ended")
        if self.fleet.cycle_seconds is not None:
            cyc.add_metric([], self.fleet.cycle_seconds)
            end.add_metric([], self.fleet.cycle_end)
        yield cyc
        yield end


@dataclass
class Schedule:
    interval: float = 60.0  # seconds between cycle starts
    full_every: int = 10  # a full check every N cycles (and on the first)
    concurrency: int = 4
    jitter: float = 0.0  # each target's start is delayed by up to this many seconds
    timeout: float = 30.0
    api_key: Optional[str] = None


async def check_one(url: str, full: bool, sched: Schedule):
    """One check of ``url`` and its TTFT (None when it could not be measured)."""
    from gptoss_doctor.check.probes.common import Ctx
    from gptoss_doctor.check.probes.extras import first_token_seconds
    from gptoss_doctor.check.result import CheckOptions
    from gptoss_doctor.check.run import check_target
    from gptoss_doctor.net.http import Client

    res = await check_target(url, CheckOptions(api_key=sched.api_key, timeout=sched.timeout, quick=not full))
    ttft = None
    if res.llm_server and res.model:
        client = Client(url, api_key=sched.api_key, timeout=sched.timeout)
        try:
            ttft = await first_token_seconds(Ctx(client, res.model, res.engine, version=res.version))
        except Exception:  # noqa: BLE001 - a failed TTFT is a missing sample, not a failed exporter
            ttft = None
        finally:
            await client.aclose()
    return res, ttft


async def cycle(fleet: Fleet, urls: list[str], number: int, sched: Schedule) -> None:
    full = number % max(1, sched.full_every) == 0
    mode = "full" if full else "quick"
    sem = asyncio.Semaphore(max(1, sched.concurrency))
    t0 = time.monotonic()

    async def one(url: str) -> None:
        if sched.jitter > 0:
            await asyncio.sleep(random.uniform(0, sched.jitter))
        async with sem:
            res, ttft = await check_one(url, full, sched)
        fleet.update(url, res, mode, ttft)

    await asyncio.gather(*(one(u) for u in urls))
    with fleet.lock:
        fleet.cycle_seconds, fleet.cycle_end = time.monotonic() - t0, time.time()


async def run_forever(fleet: Fleet, urls: list[str], sched: Schedule, stop: threading.Event,
                      cycles: Optional[int] = None, on_cycle: Callable[[int], None] = lambda n: None) -> None:
    n = 0
    while not stop.is_set() and (cycles is None or n < cycles):
        started = time.monotonic()
        await cycle(fleet, urls, n, sched)
        on_cycle(n)
        n += 1
        if cycles is not None and n >= cycles:
            break
        wait = max(0.0, sched.interval - (time.monotonic() - started))
        while wait > 0 and not stop.is_set():
            await asyncio.sleep(min(wait, 0.2))
            wait -= 0.2


def registry(fleet: Fleet):
    from prometheus_client import CollectorRegistry

    reg = CollectorRegistry(auto_describe=False)
    reg.register(FleetCollector(fleet))
    return reg


def exposition(fleet: Fleet) -> str:
    from prometheus_client import generate_latest

    return generate_latest(registry(fleet)).decode("utf-8")


def serve(fleet: Fleet, host: str, port: int):
    """Start the /metrics server (a daemon thread); the server, to read its port and shut it down."""
    from prometheus_client import start_http_server

    server, _thread = start_http_server(port, addr=host, registry=registry(fleet))
    return server
