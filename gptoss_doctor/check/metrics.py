"""Read an engine's Prometheus ``/metrics`` for saturation: KV-cache use, waiting queue, preemptions, aborted
requests, prefix-cache hit rate. Pure functions over the text; ``check`` fetches it with its capped client.

Metric names, per engine (the engines' own documentation and exporters; each engine's profile lists them):
- vLLM (v1 engine): vllm:kv_cache_usage_perc (older: vllm:gpu_cache_usage_perc), vllm:num_requests_waiting,
  vllm:num_requests_running, vllm:num_preemptions_total, vllm:prefix_cache_queries_total / _hits_total,
  vllm:request_success_total{finished_reason="abort"}
- SGLang (--enable-metrics): sglang:token_usage, sglang:num_queue_reqs, sglang:num_running_reqs,
  sglang:cache_hit_rate, sglang:num_aborted_requests_total
- llama.cpp (llama-server --metrics): llamacpp:kv_cache_usage_ratio, llamacpp:requests_deferred,
  llamacpp:requests_processing
- TGI: tgi_queue_size, tgi_batch_current_size
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from gptoss_doctor import rx as _rx

MAX_LINES = 20000
LINE_RE = _rx.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]{0,2000}\})?\s+(\S+)")
LABEL_RE = _rx.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')

# thresholds (documented in the README): warn at or above
KV_WARN = 0.90
QUEUE_WARN = 1  # requests waiting while we looked
PREFIX_HIT_LOW = 0.10  # only reported with enough queries to mean something
PREFIX_MIN_QUERIES = 1000
TTFT_WARN_S = 5.0


@dataclass
class Sample:
    name: str
    labels: dict[str, str]
    value: float


def parse(text: str) -> list[Sample]:
    """Samples of a Prometheus text exposition (comments and malformed lines skipped; bounded)."""
    out: list[Sample] = []
    for n, line in enumerate(text.splitlines()):
        if n >= MAX_LINES:
            break
        if not line or line.startswith("#"):
            continue
        m = LINE_RE.match(line)
        if not m:
            continue
        try:
            value = float(m.group(3))
        except ValueError:
            continue
        if math.isnan(value):
            continue
        labels = dict(LABEL_RE.findall(m.group(2) or ""))
        out.append(Sample(m.group(1), labels, value))
    return out


def _total(samples: list[Sample], name: str, **match: str) -> float | None:
    vals = [s.value for s in samples if s.name == name and all(s.labels.get(k) == v for k, v in match.items())]
    return sum(vals) if vals else None


def _max(samples: list[Sample], name: str) -> float | None:
    vals = [s.value for s in samples if s.name == name]
    return max(vals) if vals else None


@dataclass
class Saturation:
    engine: str
    kv_cache_usage: float | None = None  # 0..1
    waiting: float | None = None
    running: float | None = None
    preemptions: float | None = None
    aborted: float | None = None
    prefix_hit_rate: float | None = None
    prefix_queries: float | None = None

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


def read(engine: str, samples: list[Sample]) -> Saturation | None:
    """The saturation figures of ``engine`` (or of whichever known engine's metrics are there) in ``samples``; None
    when no known metric is there. The metric names are in each engine's profile."""
    from gptoss_doctor import engines

    head = samples[:2000]
    spec, name = None, engine
    for p in engines.PROFILES:
        if p.metrics is not None and (p.name == engine or any(x.name.startswith(p.metrics.prefix) for x in head)):
            spec, name = p.metrics, p.name
            break
    if spec is None:
        return None
    s = Saturation(name)
    for metric in spec.kv_cache_usage:
        s.kv_cache_usage = _max(samples, metric)
        if s.kv_cache_usage is not None:
            break
    s.waiting = _total(samples, spec.waiting) if spec.waiting else None
    s.running = _total(samples, spec.running) if spec.running else None
    s.preemptions = _total(samples, spec.preemptions) if spec.preemptions else None
    s.aborted = _total(samples, spec.aborted[0], **spec.aborted[1]) if spec.aborted else None
    if spec.prefix_hit_rate:
        s.prefix_hit_rate = _max(samples, spec.prefix_hit_rate)
    elif spec.prefix_counters:
        q, h = _total(samples, spec.prefix_counters[0]), _total(samples, spec.prefix_counters[1])
        if q:
            s.prefix_queries, s.prefix_hit_rate = q, (h or 0.0) / q
    if all(v is None for k, v in asdict(s).items() if k != "engine"):
        return None
    return s


@dataclass
class Pressure:
    status: str  # pass | warn | info
    what: str
    detail: str
    fix: str = ""
    evidence: list[str] = field(default_factory=list)


def assess(sat: Saturation, ttft_s: float | None = None) -> list[Pressure]:
    """Findings about ``sat`` (and the first-token time of the doctor's own probes)."""
    from gptoss_doctor import engines

    spec = engines.get(sat.engine).metrics
    fixes = dict(spec.fixes) if spec else {}
    out: list[Pressure] = []
    if sat.kv_cache_usage is not None:
        pct = sat.kv_cache_usage * 100
        if sat.kv_cache_usage >= KV_WARN:
            out.append(Pressure("warn", "KV cache", f"KV cache {pct:.0f}% full (warn at {KV_WARN:.0%})", fixes.get("kv", "")))
        else:
            out.append(Pressure("pass", "KV cache", f"KV cache {pct:.0f}% in use"))
    if sat.waiting is not None:
        if sat.waiting >= QUEUE_WARN:
            out.append(Pressure("warn", "Waiting queue", f"{sat.waiting:g} request(s) waiting, {sat.running or 0:g} "
                                f"running", fixes.get("queue", "")))
        else:
            out.append(Pressure("pass", "Waiting queue", f"no request waiting ({sat.running or 0:g} running)"))
    if sat.preemptions:
        out.append(Pressure("warn", "Preemptions", f"{sat.preemptions:g} preemption(s) since start",
                            fixes.get("preempt", fixes.get("kv", ""))))
    if sat.aborted:
        out.append(Pressure("info", "Aborted requests", f"{sat.aborted:g} request(s) aborted since start (clients "
                            "that disconnected or timed out)"))
    if sat.prefix_hit_rate is not None and (sat.prefix_queries is None or sat.prefix_queries >= PREFIX_MIN_QUERIES):
        status = "info" if sat.prefix_hit_rate < PREFIX_HIT_LOW else "pass"
        out.append(Pressure(status, "Prefix cache", f"prefix-cache hit rate {sat.prefix_hit_rate:.0%}"
                            + (" (low: prompts share little; long agent histories usually share much)"
                               if status == "info" else "")))
    if ttft_s is not None:
        if ttft_s >= TTFT_WARN_S:
            out.append(Pressure("warn", "Time to first token", f"{ttft_s:.1f} s for a tiny request (warn at "
                                f"{TTFT_WARN_S:g} s): the server is saturated or still warming up", fixes.get("queue", "")))
        else:
            out.append(Pressure("pass", "Time to first token", f"{ttft_s * 1000:.0f} ms for a tiny request"))
    return out
