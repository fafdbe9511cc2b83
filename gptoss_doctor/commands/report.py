"""``report``: a bug-report bundle (Markdown, or --json) for a gpt-oss serving issue, secrets redacted."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from gptoss_doctor.commands._options import JsonFlag
from gptoss_doctor.output.sink import Output

REPORT_HELP = """Write a bug-report bundle for a gpt-oss serving problem (Markdown; --json for one JSON document).

It lists the OS and Python, GPUs and drivers (nvidia-smi / rocm-smi), the versions of the serving stack (from
package metadata, nothing imported; ollama / llama-server --version), the gpt-oss copies in the Hugging Face cache
with their revision and stop tokens, and the running launches. --url adds a check summary (causes and fixes),
--error / --error-file an explain summary. Keys, tokens and URL credentials are redacted everywhere; read it
before you paste it.

  gptoss-doctor report > report.md

  gptoss-doctor report --url http://127.0.0.1:8000 --error-file vllm.log > report.md

Exit codes: 0 the bundle was written (what it found is inside), 2 usage.
"""


def register(app: typer.Typer) -> None:
    @app.command("report", help=REPORT_HELP, short_help="Write a bug-report bundle (Markdown or JSON), redacted.")
    def report_cmd(
        paths: Optional[List[Path]] = typer.Argument(None, help="Launch files or folders to include (scan reads them)."),
        url: Optional[str] = typer.Option(None, "--url", metavar="URL", help="Also check this server and add a summary."),
        api_key: Optional[str] = typer.Option(None, "--api-key", metavar="KEY", envvar="OPENAI_API_KEY", show_envvar=True,
                                              help="API key for --url (never printed)."),
        timeout: float = typer.Option(30.0, "--timeout", metavar="SECONDS", min=0.1, help="Seconds allowed per request of --url."),
        quick: bool = typer.Option(False, "--quick", help="--url: discovery only, no behavioural probes."),
        error: Optional[str] = typer.Option(None, "--error", metavar="TEXT", help="An error message to explain in the report."),
        error_file: Optional[Path] = typer.Option(None, "--error-file", metavar="PATH", help="A log file to explain in the report."),
        json_out: JsonFlag = False,
    ) -> None:
        from gptoss_doctor.entry import run_command

        def body(out: Output) -> int:
            from gptoss_doctor.errors import UsageError
            from gptoss_doctor.output import emit
            from gptoss_doctor.report import build

            if error is not None and error_file is not None:
                raise UsageError("choose one of --error and --error-file")
            if error is not None and not error.strip():
                raise UsageError("--error is empty: nothing to explain")
            if error_file is not None and not error_file.is_file():
                raise UsageError(f"no such file: {error_file}")
            missing = [p for p in (paths or []) if not p.exists()]
            if missing:
                raise UsageError(f"no such file or folder: {missing[0]}")
            with out.progress("collecting …") as update:
                res = build(list(paths or []), url=url, api_key=api_key or None, timeout=timeout, quick=quick,
                            error_text=error, error_file=error_file, progress=update)
            return emit(out, res, "markdown")

        run_command("report", json_out, body)
