"""``report``: a bug-report bundle for gpt-oss serving problems — collect (``collect.py``: host, GPUs, stack
versions, model copies, launches) → optional ``check`` and ``explain`` summaries → one ``ReportResult``, rendered
as Markdown (``output/markdown.py``) or JSON. Everything leaves through the one redactor (``redact.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from gptoss_doctor.results import CommandResult

REPORT_SCHEMA = 1  # the "report" object's own layout version (the envelope has schema_version)


@dataclass
class ReportResult(CommandResult):
    """The bundle: each section collected for real, or None with the reason in ``unavailable``."""

    command = "report"
    system: dict = field(default_factory=dict)
    gpus: dict = field(default_factory=dict)
    packages: dict = field(default_factory=dict)
    binaries: dict = field(default_factory=dict)
    model_copies: list = field(default_factory=list)
    launches: list = field(default_factory=list)  # scan's Launch.to_json()
    launch_findings: list = field(default_factory=list)  # scan's findings about them
    notes: list = field(default_factory=list)  # what could not be read, and why
    check: Optional[dict] = None  # --url: a check summary
    explain: Optional[dict] = None  # --error / --error-file: an explain summary
    secrets: list = field(default_factory=list)  # values to keep out of every format (an --api-key, URL password)

    @property
    def exit_code(self) -> int:
        return 0  # a bundle was written; what it found is inside it (documented)

    def to_json(self) -> dict:
        from gptoss_doctor.redact import redact, redact_command_line

        launches = [{**la, "line_text": redact_command_line(la.get("line_text", ""))} for la in self.launches]
        doc = {"ok": True, "report_schema": REPORT_SCHEMA, "system": self.system, "gpus": self.gpus,
               "packages": self.packages, "binaries": self.binaries, "model_copies": self.model_copies,
               "launches": launches, "launch_findings": self.launch_findings, "notes": self.notes,
               "check": self.check, "explain": self.explain}
        return redact(doc, self.secrets)


def check_summary(url: str, api_key: Optional[str], timeout: float, quick: bool) -> tuple[dict, list[str]]:
    """A ``check`` of ``url`` reduced to what a report needs (engine, version, model, causes with their fixes and
    links, counts); and the secrets it involved (the key, a URL password)."""
    from urllib.parse import urlsplit

    from gptoss_doctor.check import run as pipeline
    from gptoss_doctor.check import targets as target_urls
    from gptoss_doctor.check.causes import summary
    from gptoss_doctor.check.result import CheckOptions, exit_code
    from gptoss_doctor.redact import remember

    base, notes = target_urls.normalize_url(url)
    secrets = [s for s in (api_key, urlsplit(base).password) if s]
    for s in secrets:
        remember(s)
    [t] = pipeline.run([(base, notes)], CheckOptions(api_key=api_key, timeout=timeout, quick=quick))
    causes = t.causes
    return {
        "url": target_urls.public_url(base), "reachable": t.reachable, "llm_server": t.llm_server,
        "engine": t.engine, "version": t.version, "model": t.model, "quick": quick,
        "causes": [c.to_json() for c in causes], "summary": summary(causes),
        "checks": len(t.checks), "exit_code": exit_code([t]), "notes": t.notes,
    }, secrets


def explain_summary(text: Optional[str], file: Optional[Path], top: int = 3) -> dict:
    """An ``explain`` of the pasted error (offline: no download, no network) reduced to the errors read and the
    best-matching known issues with their fixes and links."""
    from gptoss_doctor import explain

    kw = dict(allow_download=False, limit=top)
    if file is not None:
        with open(file, "rb") as fh:
            ex = explain.explain_stream(fh, **kw)
    else:
        ex = explain.explain_text(text or "", **kw)
    doc = ex.to_json()
    return {
        "origin": doc["origin"], "origin_detail": doc["origin_detail"],
        "errors": [e.get("message", "")[:300] for e in doc["errors"][:5]],
        "input": doc["input"],
        "matches": [{"id": m["id"], "title": m["title"], "confidence": m["confidence"], "fixes": m["fixes"][:3],
                     "references": m["references"][:3]} for m in doc["matches"][:top]],
    }


def build(paths: list[Path], *, url: Optional[str] = None, api_key: Optional[str] = None, timeout: float = 30.0,
          quick: bool = False, error_text: Optional[str] = None, error_file: Optional[Path] = None,
          progress=lambda text: None) -> ReportResult:
    from gptoss_doctor.report import collect

    res = ReportResult()
    progress("reading the host …")
    res.system = collect.system()
    res.gpus = collect.gpus()
    res.packages = collect.packages()
    res.binaries = collect.binaries()
    res.model_copies, notes = collect.model_copies()
    res.notes += notes
    progress("reading running launches …")
    sc = collect.launches(paths)
    res.launches = [la.to_json() for la in sc.launches]
    res.launch_findings = [{"status": f.status, "id": f.id, "title": f.title, "where": f.where, "fix": f.fix,
                            "references": f.references[:3]} for f in sc.findings]
    res.notes += [f"{s.where}: {s.reason}" for s in sc.skipped]
    if url:
        progress(f"checking {url} …")
        res.check, res.secrets = check_summary(url, api_key, timeout, quick)
    if error_text is not None or error_file is not None:
        progress("explaining the error …")
        res.explain = explain_summary(error_text, error_file)
    return res
