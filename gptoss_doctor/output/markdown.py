"""The Markdown renderer: a report to paste into a GitHub issue (secrets redacted, untrusted text escaped)."""

from __future__ import annotations

from gptoss_doctor import __version__
from gptoss_doctor.check.report import heading
from gptoss_doctor.check.result import CheckReport
from gptoss_doctor.output.sink import Output
from gptoss_doctor.output.sink import markdown_code as code
from gptoss_doctor.output.sink import markdown_text as md
from gptoss_doctor.redact import redact
from gptoss_doctor.results import CommandResult, summarize, summary_line


def render(out: Output, result: CommandResult) -> None:
    if not isinstance(result, CheckReport):
        raise TypeError(f"no Markdown report for {result.command}")
    out.stdout.write(check_report(result))
    out.stdout.flush()


def check_report(report: CheckReport) -> str:
    """A report to paste into an issue. Everything a server said goes through the one Markdown escaper."""
    results, argv_line = report.targets, report.argv

    marks = {"pass": "✅", "warn": "⚠️", "fail": "❌", "error": "❌", "skip": "➖"}
    lines = ["### gptoss-doctor check report", "", f"gptoss-doctor {__version__} · {code(argv_line)}", ""]
    for r in results:
        lines.append(f"#### {md(heading(r))}")
        lines.append("")
        if r.models:
            lines.append("Models: " + ", ".join(f"{code(m.id)} (context {m.max_model_len or '?'}"
                                                 f"{', gpt-oss' if m.gpt_oss else ''})" for m in r.models[:5]))
            lines.append("")
        lines.append("| | check | result |")
        lines.append("|---|---|---|")
        for f in r.checks:
            lines.append(f"| {marks.get(f.status, '?')} | `{f.id}` | {md(f.detail or '')} |")
        problems = [f for f in r.checks if f.status in ("fail", "error", "warn")]
        if problems:
            lines.append("")
            lines.append("<details><summary>Evidence, fixes and references</summary>")
            lines.append("")
            for f in problems:
                lines.append(f"- **{f.id}** ({f.status}): {md(f.detail)}")
                for ev in f.evidence[:4]:
                    lines.append(f"  - evidence: {code(ev)}")
                if f.fix:
                    lines.append(f"  - fix: {md(f.fix)}")
                for ref in f.references[:5]:
                    lines.append(f"  - see: {ref if ref.startswith('https://') else md(ref)}")
            lines.append("")
            lines.append("</details>")
        lines.append("")
    lines.append("**Summary:** " + summary_line(summarize([f for r in results for f in r.checks])))
    return redact("\n".join(lines) + "\n", report.secrets)
