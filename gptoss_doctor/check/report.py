"""check, stage 5 (report): how a target is named in every format (its heading). The results themselves are
``result.CheckReport``; ``gptoss_doctor.output`` renders them (human, JSON, Markdown)."""

from __future__ import annotations

from gptoss_doctor import engines
from gptoss_doctor.check.result import TargetResult


def heading(r: TargetResult) -> str:
    bits = [r.url]
    if r.llm_server:
        eng = engines.label(r.engine)
        bits.append(eng + (f" {r.version}" if r.version else ""))
        if r.model:
            bits.append(r.model)
    elif r.reachable:
        bits.append("no LLM server")
    else:
        bits.append("unreachable")
    return " · ".join(bits)
