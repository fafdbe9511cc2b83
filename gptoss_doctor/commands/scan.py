"""``scan``: launch files, running processes and containers, host versions, GPUs and model copies, offline."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from gptoss_doctor.commands._options import JsonFlag

from gptoss_doctor.output.sink import Output

SCAN_HELP = """Scan how gpt-oss is launched here, read-only and offline.

With PATHs: docker-compose files, Kubernetes manifests and Helm values, Dockerfiles, shell scripts, systemd units,
.env files, litellm configs and model folders under them. With no PATH: this host's running processes and
containers, installed engine versions, GPUs and the Hugging Face cache. Every finding names the file and line (or
process / container), the corrected line and the known issues it rests on. Secrets are reported, never shown.

  gptoss-doctor scan ./deploy

  gptoss-doctor scan --json
"""

MARK = {"fail": "fail", "warn": "warn", "info": "info", "pass": "pass"}


def _md(text: str) -> str:
    from gptoss_doctor.output.sink import markdown_text

    return markdown_text(text)


def _printable(text: str) -> str:
    from gptoss_doctor.output.sink import printable

    return printable(text)


def render_human(out: Output, res, verbose: bool = False) -> None:
    if res.launches:
        out.heading(f"Launches ({len(res.launches)})")
        for la in res.launches:
            tag = "gpt-oss" if la.gpt_oss else "other model"
            out.detail(f"{la.engine:9} {_printable(la.model or '(model not named)')}  [{tag}]  {_printable(la.where)}", 2)
        out.line()
    if res.findings:
        out.heading("Findings")
        for f in res.findings:
            out.mark(MARK.get(f.status, "info"), _printable(f.title), indent=2)
            out.detail("where: " + _printable(f.where), 6)
            if f.detail:
                out.detail("why: " + _printable(f.detail), 6)
            if f.fix:
                out.detail("fix: " + _printable(f.fix), 6)
            if f.corrected:
                out.detail("corrected: " + _printable(f.corrected), 6)
            for url in f.references[: (None if verbose else 2)]:
                out.detail("see: " + url, 6)
        out.line()
    if res.skipped and (verbose or len(res.skipped) <= 8):
        out.heading("Skipped")
        for s in res.skipped:
            out.mark("skip", f"{_printable(s.where)}: {_printable(s.reason)}", indent=2)
        out.line()
    elif res.skipped:
        out.note(f"{len(res.skipped)} items skipped (use --verbose or --json to list them)")
    host = res.host
    if host:
        pk = host.get("packages") or {}
        out.heading("Host")
        out.detail("packages: " + (", ".join(f"{k} {v}" for k, v in sorted(pk.items())) or "no engine or Harmony "
                                   "library in this Python environment"), 2)
        gpus = host.get("gpus") or []
        out.detail("GPUs: " + (", ".join(f"{g['name']} (compute {g['compute_cap']})" for g in gpus) or "none seen"), 2)
        copies = host.get("model_copies") or []
        out.detail(f"gpt-oss copies in the Hugging Face cache: {len(copies)}", 2)
        out.line()


def summary_line(res) -> tuple[str, str]:
    fails = sum(f.status == "fail" for f in res.findings)
    warns = sum(f.status == "warn" for f in res.findings)
    where = f"{res.files_read} file{'s' if res.files_read != 1 else ''}"
    if res.processes_read:
        where += f", {res.processes_read} processes"
    where += f", {len(res.launches)} launch{'es' if len(res.launches) != 1 else ''}"
    if not fails and not warns:
        return "pass", f"nothing to fix: {where} scanned"
    return ("fail" if fails else "warn"), f"{fails} problem{'s' if fails != 1 else ''} and {warns} warning" \
        f"{'s' if warns != 1 else ''} in {where}"


def render_markdown(res) -> str:
    status, line = summary_line(res)
    lines = ["## gptoss-doctor scan", "", f"**{_md(line)}**", ""]
    if res.findings:
        lines += ["| | finding | where | corrected |", "|---|---|---|---|"]
        for f in res.findings:
            lines.append(f"| {f.status} | {_md(f.title)} | {_md(f.where)} | {_md(f.corrected) if f.corrected else ''} |")
        lines.append("")
        for f in res.findings:
            lines.append(f"- **{_md(f.title)}** ({f.status}, {_md(f.where)}): {_md(f.detail)} Fix: {_md(f.fix)}"
                         + "".join(f" <{u}>" for u in f.references[:2] if u.startswith("https://")))
        lines.append("")
    if res.skipped:
        lines += ["<details><summary>Skipped</summary>", ""]
        lines += [f"- {_md(s.where)}: {_md(s.reason)}" for s in res.skipped]
        lines += ["", "</details>", ""]
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    @app.command("scan", help=SCAN_HELP)
    def scan_cmd(
        paths: Optional[List[Path]] = typer.Argument(None, help="Files or folders to scan (default: this host)."),
        json_out: JsonFlag = False,
        markdown: bool = typer.Option(False, "--markdown", help="Print a Markdown report."),
        processes: Optional[bool] = typer.Option(None, "--processes/--no-processes",
                                                 help="Scan running processes and containers (default: only without PATH)."),
        host: bool = typer.Option(True, "--host/--no-host", help="Check installed versions, GPUs and the HF cache."),
        verbose: bool = typer.Option(False, "--verbose", "-v", help="List every reference and skipped item."),
    ) -> None:
        from gptoss_doctor.entry import run_command

        def body(out: Output) -> int:
            from gptoss_doctor.errors import UsageError
            from gptoss_doctor.scan import scan

            if json_out and markdown:
                raise UsageError("choose one of --json and --markdown")
            given = list(paths or [])
            missing = [p for p in given if not p.exists()]
            if missing:
                raise UsageError(f"no such file or folder: {missing[0]}")
            res = scan(given, processes=processes, host=host)
            if out.json_mode:
                out.json("scan", res.to_json())
            elif markdown:
                out.stdout.write(render_markdown(res) + "\n")
            else:
                render_human(out, res, verbose)
                status, line = summary_line(res)
                out.mark(status, line)
            return res.exit_code

        run_command("scan", json_out, body)
