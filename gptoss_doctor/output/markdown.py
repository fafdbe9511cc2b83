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
    elif result.command == "report":
        out.stdout.write(bundle_report(result))
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


def _wrap(text: str, width: int = 80) -> list[str]:
    """One Markdown list item (or paragraph) wrapped at ``width`` columns; continuation lines indented to stay in
    the item. Words are never broken (a long URL or code span keeps its line)."""
    import textwrap

    lead = "  " if text.startswith("- ") else ""
    return textwrap.wrap(text, width, subsequent_indent=lead, break_long_words=False, break_on_hyphens=False) or [""]


def bundle_report(res) -> str:
    """``report``: the bug-report bundle, every value from the host, a server or a log escaped, lines wrapped at 80
    columns, the whole text through the one redactor."""
    from gptoss_doctor.harmony.tokens import SPECIAL_IDS
    from gptoss_doctor.report import REPORT_SCHEMA

    doc = res.to_json()  # already redacted
    s = doc["system"]
    L: list[str] = ["## gptoss-doctor report", ""]
    add = lambda text: L.extend(_wrap(text))  # noqa: E731
    add(f"gptoss-doctor {md(s.get('gptoss_doctor', __version__))} · report schema {REPORT_SCHEMA}")
    L += ["", "### System", ""]
    add(f"- OS: {md(s.get('os', '?'))} ({md(s.get('platform', '?'))}, {md(s.get('machine', '?'))})")
    add(f"- Python: {md(s.get('python', '?'))} ({md(s.get('python_implementation', '?'))})")
    L += ["", "### GPUs and drivers", ""]
    g = doc["gpus"]
    for x in g.get("nvidia", []):
        add(f"- NVIDIA GPU {md(x.get('index', '?'))}: {md(x.get('name', '?'))}, compute capability "
            f"{md(x.get('compute_cap', '?'))}, driver {md(x.get('driver', '?'))}, {md(x.get('memory_mib', '?'))} MiB")
    for x in g.get("amd", []):
        add(f"- AMD {md(x.get('card', '?'))}: " + ", ".join(f"{md(k)}: {md(v)}" for k, v in x.items() if k != "card"))
    for n in g.get("notes", []):
        add(f"- not available: {md(n)}")
    L += ["", "### Serving stack", ""]
    have = [f"{k} {v}" for k, v in doc["packages"].items() if v]
    add("- installed: " + (", ".join(code(h) for h in have) if have else "none of them"))
    absent = [k for k, v in doc["packages"].items() if not v]
    if absent:
        add("- not installed: " + ", ".join(md(a) for a in absent))
    for name, b in doc["binaries"].items():
        if b.get("version"):
            add(f"- {md(name)}: {code(b['version'])} ({code(b.get('path') or '')})")
        else:
            add(f"- {md(name)}: not available ({md(b.get('reason', ''))})")
    L += ["", "### gpt-oss copies (Hugging Face cache)", ""]
    if not doc["model_copies"]:
        add("- none found")
    for c in doc["model_copies"]:
        if c.get("eos_token_id") is None:
            add(f"- {code(c['repo'])} revision {code(c['revision'])}: {md(c.get('reason', ''))}")
            continue
        verdict = ("includes `<|call|>`" if c.get("call_token_stops")
                   else "no `<|call|>`: a stale generation\\_config.json, see `gptoss-doctor fix-config`")
        add(f"- {code(c['repo'])} revision {code(c['revision'])}: stop tokens "
            + ", ".join(f"`{t}`" if t in SPECIAL_IDS else code(t) for t in c["stop_tokens"]) + f" ({verdict})")
    L += ["", "### Launches", ""]
    if not doc["launches"]:
        add("- no running gpt-oss serving process or container found")
    for la in doc["launches"]:
        add(f"- {md(la.get('engine', '?'))} at {md(la.get('where', '?'))}: {code(la.get('line_text') or ' '.join(la.get('argv', [])))}")
    for f in doc["launch_findings"]:
        add(f"- {md(f['status'])}: {md(f['title'])} ({md(f['where'])}). Fix: {md(f['fix'])}"
            + "".join(f" <{u}>" for u in f["references"][:2] if u.startswith("https://")))
    if doc["check"] is not None:
        c = doc["check"]
        L += ["", f"### Check of {code(c['url'])}", ""]
        add(f"- engine: {md(c['engine'])} {md(c.get('version') or '?')}, model {code(c.get('model') or '?')}, "
            f"{'discovery only' if c['quick'] else 'full check'}, exit code {c['exit_code']}")
        if not c["llm_server"]:
            add("- the server could not be checked: not reachable or not an LLM server")
        if not c["causes"] and c["llm_server"]:
            add("- no problem found")
        for cause in c["causes"]:
            add(f"- {md(cause['status'])}: {md(cause['title'])} (seen by {', '.join(code(x) for x in cause['checks'])})")
            if cause["fix"]:
                add(f"- fix: {md(cause['fix'])}")
            for u in cause["references"][:3]:
                if u.startswith("https://"):
                    add(f"- see: <{u}>")
    if doc["explain"] is not None:
        e = doc["explain"]
        L += ["", "### The error, explained", ""]
        n = e["input"].get("lines", 0)
        add(f"- read {n} line{'s' if n != 1 else ''}; raised by: {md(e['origin'])} ({md(e['origin_detail'])})")
        for msg in e["errors"]:
            add(f"- error: {code(msg)}")
        for m in e["matches"]:
            add(f"- known issue ({md(m['confidence'])}): {md(m['title'])}")
            for fx in m["fixes"][:2]:
                add(f"- fix: {md(fx)}")
            for u in m["references"][:2]:
                if u.startswith("https://"):
                    add(f"- see: <{u}>")
    if doc["notes"]:
        L += ["", "<details><summary>Not read</summary>", ""]
        for n in doc["notes"]:
            add(f"- {md(n)}")
        L += ["", "</details>"]
    return redact("\n".join(L) + "\n", res.secrets)
