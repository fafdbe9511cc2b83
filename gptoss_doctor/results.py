"""Typed results shared by the commands: one Finding shape, one status scale, and the base every command's result
derives from (its exit code inside, its JSON payload, rendered by ``gptoss_doctor.output``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import ClassVar


class Status(str, Enum):
    """What a command's exit code means (the documented exit codes)."""

    OK = "ok"  # 0
    PROBLEMS = "problems"  # 1
    USAGE = "usage"  # 2
    UNREACHABLE = "unreachable"  # 3
    AUTH = "auth"  # 4


_STATUS_OF_CODE = {0: Status.OK, 1: Status.PROBLEMS, 2: Status.USAGE, 3: Status.UNREACHABLE, 4: Status.AUTH}


class CommandResult:
    """A command's outcome: ``command`` names it in the JSON envelope, ``exit_code`` is what the process exits with,
    ``to_json()`` the payload under the envelope. Renderers dispatch on the subclass."""

    command: ClassVar[str] = ""

    @property
    def exit_code(self) -> int:
        raise NotImplementedError

    @property
    def status(self) -> Status:
        return _STATUS_OF_CODE.get(self.exit_code, Status.PROBLEMS)

    def to_json(self) -> dict:
        raise NotImplementedError


class InfoResult(CommandResult):
    """A result that reports and never fails (exit code 0): listings, lookups, a file already in place."""

    @property
    def exit_code(self) -> int:
        return 0

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
