"""Typed results of ``scan``: launches found, findings about them, items skipped."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from gptoss_doctor.results import CommandResult

STATUSES = ("fail", "warn", "info", "pass")


@dataclass
class Launch:
    """One start of a serving engine, from a file line, a process or a container."""

    engine: str  # vllm | sglang | lmdeploy | llama.cpp | ollama | trtllm | litellm | tgi
    where: str  # "compose.yaml:12", "pid 4242", "container 3f2a…"
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    model: str | None = None
    image: str | None = None
    line_text: str = ""  # the launch as written (one line), for the corrected line
    source_kind: str = "file"  # file | process | container
    env_where: dict[str, str] = field(default_factory=dict)  # variable -> file:line where it was set
    repeated_entrypoint: str = ""  # "vllm serve" when the command repeats what the image's entrypoint runs

    @property
    def gpt_oss(self) -> bool:
        from gptoss_doctor.scan.launches import is_gpt_oss

        return is_gpt_oss(self.model) or any(is_gpt_oss(a) for a in self.argv) or is_gpt_oss(self.image)

    def to_json(self) -> dict:
        from gptoss_doctor.redact import redact_argv

        d = asdict(self)
        d["argv"] = redact_argv(self.argv)
        d["env"] = sorted(self.env)  # names only: values may be secrets
        d.pop("env_where")
        d.pop("repeated_entrypoint")
        d["gpt_oss"] = self.gpt_oss
        return d


@dataclass
class Finding:
    status: str  # fail | warn | info | pass
    id: str  # a stable rule id, e.g. "vllm.tool_parser_missing"
    title: str
    where: str
    detail: str = ""
    fix: str = ""  # what to do, in words
    corrected: str = ""  # the corrected line, where a line can be given
    references: list[str] = field(default_factory=list)
    kb: list[str] = field(default_factory=list)  # knowledge-base entry ids

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class Skipped:
    where: str
    reason: str

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class ScanResult(CommandResult):
    command = "scan"
    launches: list[Launch] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    host: dict = field(default_factory=dict)  # packages, gpus, model copies
    files_read: int = 0
    processes_read: int = 0
    verbose: bool = False  # how much the human report lists

    @property
    def problems(self) -> list[Finding]:
        return [f for f in self.findings if f.status in ("fail", "warn")]

    @property
    def exit_code(self) -> int:
        return 1 if self.problems else 0

    def to_json(self) -> dict:
        return {
            "ok": not self.problems,
            "summary": {"files": self.files_read, "processes": self.processes_read, "launches": len(self.launches),
                        "fail": sum(f.status == "fail" for f in self.findings),
                        "warn": sum(f.status == "warn" for f in self.findings),
                        "skipped": len(self.skipped)},
            "launches": [la.to_json() for la in self.launches],
            "findings": [f.to_json() for f in self.findings],
            "skipped": [s.to_json() for s in self.skipped],
            "host": self.host,
        }
