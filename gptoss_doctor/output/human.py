"""Human rendering of findings: grouped ✓ / ! / ✗ lines, the fix under each, one summary line."""

from __future__ import annotations

from gptoss_doctor.output.sink import Output
from gptoss_doctor.results import Finding, summarize, summary_line


def render_findings(out: Output, findings: list[Finding], *, heading: str | None = None, verbose: bool = False) -> None:
    """Print findings grouped under ``heading``; passing ones stay one line unless ``verbose``."""
    if heading:
        out.heading(heading)
    for f in findings:
        text = f.title if not f.detail or (f.status == "pass" and not verbose) else f"{f.title}: {f.detail}"
        out.mark(f.status, text, indent=2)
        if f.status in ("warn", "fail", "error") or verbose:
            for ev in f.evidence[:4]:
                out.detail("evidence: " + ev, indent=6)
            if f.fix:
                out.detail("fix: " + f.fix, indent=6)
            for ref in f.references[:3]:
                out.detail("see: " + ref, indent=6)


def render_summary(out: Output, findings: list[Finding], suffix: str = "") -> None:
    counts = summarize(findings)
    worst = "fail" if counts["fail"] or counts["error"] else "warn" if counts["warn"] else "pass"
    out.line()
    out.mark(worst, summary_line(counts) + suffix)
