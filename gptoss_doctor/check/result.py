"""check's typed results: the options of one run, one result per target, the exit code across targets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from gptoss_doctor.errors import EXIT_AUTH, EXIT_OK, EXIT_PROBLEMS, EXIT_UNREACHABLE
from gptoss_doctor.results import CommandResult, Finding, summarize


@dataclass
class CheckOptions:
    api_key: Optional[str] = None
    timeout: float = 30.0
    model: Optional[str] = None
    model_dir: Optional[str] = None
    quick: bool = False
    deep: bool = False
    concurrency: int = 4
    request: Optional[object] = None  # check.request.UserRequest with --request: replayed instead of the probes


@dataclass
class TargetResult:
    url: str
    reachable: bool = False
    llm_server: bool = False
    engine: str = "unknown"
    version: Optional[str] = None
    engine_evidence: list[str] = field(default_factory=list)
    models: list = field(default_factory=list)  # discover.ModelInfo
    model: Optional[str] = None  # the model probed
    checks: list[Finding] = field(default_factory=list)
    auth_problem: bool = False
    health_failed: bool = False
    requests: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return self.code(strict=False)

    def code(self, strict: bool) -> int:
        if self.auth_problem:
            return EXIT_AUTH
        if not self.llm_server:
            return EXIT_UNREACHABLE
        counts = summarize(self.checks)
        if counts["fail"] or counts["error"] or (strict and counts["warn"]):
            return EXIT_PROBLEMS
        return EXIT_OK

    @property
    def causes(self) -> list:
        """The failing and warning checks grouped by cause (``check.causes``)."""
        from gptoss_doctor.check.causes import group

        return group(self.checks)

    def to_json(self) -> dict:
        from gptoss_doctor.check.causes import summary

        causes = self.causes
        return {
            "url": self.url, "reachable": self.reachable, "llm_server": self.llm_server,
            "engine": {"name": self.engine, "version": self.version, "evidence": self.engine_evidence},
            "models": [m.to_json() for m in self.models], "model": self.model,
            "checks": [f.to_json() for f in self.checks],
            "causes": [c.to_json() for c in causes],
            "summary": {**summarize(self.checks), "causes": summary(causes)},
            "requests": self.requests, "seconds": round(self.seconds, 3), "notes": self.notes,
        }


def exit_code(results: list[TargetResult], strict: bool = False) -> int:
    """Precedence across targets: 4 (auth) > 3 (unreachable) > 1 (problems) > 0."""
    codes = {r.code(strict) for r in results}
    for c in (EXIT_AUTH, EXIT_UNREACHABLE, EXIT_PROBLEMS):
        if c in codes:
            return c
    return EXIT_OK


@dataclass
class CheckReport(CommandResult):
    """All targets of one ``check`` run, with what the renderers need (secrets to keep out, the command line)."""

    command = "check"
    targets: list[TargetResult]
    strict: bool = False
    verbose: bool = False
    argv: str = ""
    secrets: list[str] = field(default_factory=list)
    comparison: Optional[object] = None  # check.baseline.Comparison with --compare

    @property
    def exit_code(self) -> int:
        code = exit_code(self.targets, self.strict)
        if code == EXIT_OK and self.comparison is not None and self.comparison.has_new_problems:
            return EXIT_PROBLEMS  # a problem that the baseline did not have
        return code

    @property
    def findings(self) -> list[Finding]:
        return [f for t in self.targets for f in t.checks]

    def to_json(self) -> dict:
        from gptoss_doctor.redact import redact

        from gptoss_doctor.check.causes import summary

        causes = summary([c for t in self.targets for c in t.causes])
        doc = {"ok": self.exit_code == 0, "targets": [t.to_json() for t in self.targets],
               "summary": {**summarize(self.findings), "causes": causes}, "exit_code": self.exit_code}
        if self.comparison is not None:
            doc["comparison"] = self.comparison.to_json()
        return redact(doc, self.secrets)
