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
            from gptoss_doctor.output import emit
            from gptoss_doctor.scan import scan

            if json_out and markdown:
                raise UsageError("choose one of --json and --markdown")
            given = list(paths or [])
            missing = [p for p in given if not p.exists()]
            if missing:
                raise UsageError(f"no such file or folder: {missing[0]}")
            res = scan(given, processes=processes, host=host)
            res.verbose = verbose
            return emit(out, res, "markdown" if markdown else "human")

        run_command("scan", json_out, body)
