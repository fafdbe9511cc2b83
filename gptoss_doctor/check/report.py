"""check, stage 5 (report): the results as one JSON payload, a heading per target, a Markdown report."""

from __future__ import annotations

from gptoss_doctor import engines
from gptoss_doctor.check.result import TargetResult, exit_code
from gptoss_doctor.results import summarize


def payload(results: list[TargetResult], strict: bool) -> dict:
    allf = [f for r in results for f in r.checks]
    code = exit_code(results, strict)
    return {"ok": code == 0, "targets": [r.to_json() for r in results], "summary": summarize(allf), "exit_code": code}


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


def render_markdown(results: list[TargetResult], argv_line: str) -> str:
    """A report to paste into an issue. Everything a server said goes through the one Markdown escaper."""
    from gptoss_doctor import __version__
    from gptoss_doctor.output.sink import markdown_code as code
    from gptoss_doctor.output.sink import markdown_text as md

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
    from gptoss_doctor.results import summary_line

    lines.append("**Summary:** " + summary_line(summarize([f for r in results for f in r.checks])))
    return "\n".join(lines) + "\n"
