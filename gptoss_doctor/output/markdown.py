"""The Markdown renderer: a report to paste into a GitHub issue (secrets redacted, untrusted text escaped)."""

from __future__ import annotations

from gptoss_doctor import __version__
from gptoss_doctor.check.report import heading
from gptoss_doctor.check.result import CheckReport
from gptoss_doctor.output.human import scan_summary
from gptoss_doctor.output.sink import Output
from gptoss_doctor.output.sink import markdown_code as code
from gptoss_doctor.output.sink import markdown_text as md
from gptoss_doctor.redact import redact
from gptoss_doctor.results import CommandResult, summarize, summary_line


def render(out: Output, result: CommandResult) -> None:
    if isinstance(result, CheckReport):
        out.stdout.write(check_report(result))
    elif result.command == "scan":
        out.stdout.write(scan_report(result) + "\n")
    else:
        raise TypeError(f"no Markdown report for {result.command}")
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
    comp = report.comparison
    if comp is not None:
        lines.append(f"#### Since {md(comp.path)} (saved {md(comp.saved_at)})")
        lines.append("")
        for t in comp.targets:
            if t.engine:
                lines.append(f"- ⚠️ engine: {md(t.engine[0])} → {md(t.engine[1])}")
            lines += [f"- ❌ new: {md(c['title'])} ({', '.join(code(x) for x in c['checks'])})" for c in t.new]
            lines += [f"- ✅ gone: {md(c['title'])}" for c in t.gone]
            lines += [f"- ⚠️ slower: {md(x)}" for x in t.slower]
            if not (t.engine or t.new or t.gone or t.slower):
                lines.append("- ✅ no change")
        lines.append("")
    from gptoss_doctor.output.human import cause_summary_line

    lines.append("**Summary:** " + cause_summary_line([c for r in results for c in r.causes],
                                                      summarize([f for r in results for f in r.checks])))
    return redact("\n".join(lines) + "\n", report.secrets)


def scan_report(res) -> str:
    status, line = scan_summary(res)
    lines = ["## gptoss-doctor scan", "", f"**{md(line)}**", ""]
    if res.findings:
        lines += ["| | finding | where | corrected |", "|---|---|---|---|"]
        for f in res.findings:
            lines.append(f"| {f.status} | {md(f.title)} | {md(f.where)} | {md(f.corrected) if f.corrected else ''} |")
        lines.append("")
        for f in res.findings:
            lines.append(f"- **{md(f.title)}** ({f.status}, {md(f.where)}): {md(f.detail)} Fix: {md(f.fix)}"
                         + "".join(f" <{u}>" for u in f.references[:2] if u.startswith("https://")))
        lines.append("")
    if res.skipped:
        lines += ["<details><summary>Skipped</summary>", ""]
        lines += [f"- {md(s.where)}: {md(s.reason)}" for s in res.skipped]
        lines += ["", "</details>", ""]
    return "\n".join(lines)
