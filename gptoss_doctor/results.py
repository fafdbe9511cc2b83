"""Typed results shared by the commands: one Finding shape, one status scale."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

STATUSES = ("pass", "warn", "fail", "skip", "error")


@dataclass
class Finding:
    """One check's outcome. ``references`` are the URLs of matched KB entries."""

    id: str
    status: str  # one of STATUSES
    title: str
    detail: str = ""
    fix: str = ""
    references: list[str] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    kb: list[str] = field(default_factory=list)  # knowledge-base entry ids

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"bad status {self.status!r}")

    def to_json(self) -> dict:
        return asdict(self)


def summarize(findings: list[Finding]) -> dict[str, int]:
    counts = {s: 0 for s in STATUSES}
    for f in findings:
        counts[f.status] += 1
    return counts


_WORDS = {"pass": ("passed", "passed"), "warn": ("warning", "warnings"), "fail": ("failed", "failed"),
          "skip": ("skipped", "skipped"), "error": ("error", "errors")}


def summary_line(counts: dict[str, int]) -> str:
    """"3 passed, 1 warning, 2 failed" (zero counts left out)."""
    parts = [f"{counts[s]} {_WORDS[s][counts[s] != 1]}" for s in STATUSES if counts.get(s)]
    return ", ".join(parts) if parts else "nothing checked"
