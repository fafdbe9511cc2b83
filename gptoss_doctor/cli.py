"""The Typer application: the root options, the console-script entry point, and the command groups
(``gptoss_doctor.commands``) each run needs, mounted when it starts. Commands never import this module; they run
through ``entry.run_command``.
"""

from __future__ import annotations

import sys
from typing import Optional

import typer

from gptoss_doctor import __version__, settings
from gptoss_doctor.entry import silence_stdout
from gptoss_doctor.errors import EXIT_USAGE
from gptoss_doctor.output.sink import Output

EPILOG = """Examples:

\b
  gptoss-doctor check http://127.0.0.1:8000
  gptoss-doctor explain "HarmonyError: Unexpected token 12606"
  journalctl -u vllm | gptoss-doctor explain -
  gptoss-doctor decode 200006 17360 200008
  gptoss-doctor fix-config --dry-run

Exit codes: 0 ok, 1 problems found, 2 usage, 3 unreachable, 4 authentication.
"""

app = typer.Typer(
    name="gptoss-doctor",
    help="Diagnose gpt-oss / Harmony serving problems: probe servers, explain errors, refresh stale model files.",
    epilog=EPILOG,
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"gptoss-doctor {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks (also GPTOSS_DOCTOR_DEBUG=1)."),
) -> None:
    """Diagnose gpt-oss / Harmony serving problems."""
    if debug:
        settings.set_debug()


_MOUNTED: set = set()  # command modules mounted on ``app`` in this process


def main(argv: Optional[list[str]] = None) -> None:
    """Console-script entry point."""
    for stream in (sys.stdout, sys.stderr):
        try:  # never die on a character the terminal cannot encode
            stream.reconfigure(errors="replace")
        except (AttributeError, ValueError):
            pass
    args = sys.argv[1:] if argv is None else argv
    from gptoss_doctor import commands

    commands.register(app, commands.needed(args), _MOUNTED)
    try:
        app(args=args, prog_name="gptoss-doctor")
    except BrokenPipeError:
        silence_stdout()
        sys.exit(0)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        # A usage error caught by the parser: keep the --json promise of one document on stdout.
        if code == EXIT_USAGE and "--json" in args and not Output.json_emitted:
            cmd = next((a for a in args if not a.startswith("-")), "")
            Output(True).json(cmd, {"ok": False, "error": {"kind": "usage", "message": "invalid usage (see stderr)", "exit_code": EXIT_USAGE}})
        sys.exit(code)
