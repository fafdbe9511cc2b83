"""The Typer application. Commands are thin: they parse options, call the logic
modules, and hand results to the output sink. Heavy imports happen inside the
command functions so ``gptoss-doctor --help`` and ``explain`` start fast.
"""

from __future__ import annotations

import os
import sys
from typing import Callable, Optional

import typer

from gptoss_doctor import __version__
from gptoss_doctor.errors import EXIT_USAGE, describe_exception
from gptoss_doctor.output.sink import Output

EPILOG = """Examples:

\b
  gptoss-doctor check http://127.0.0.1:8000
  gptoss-doctor explain "openai_harmony.HarmonyError: Unexpected token 12606 while expecting start token 200006"
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

EXIT_INTERNAL = 70


def _debug_enabled() -> bool:
    return os.environ.get("GPTOSS_DOCTOR_DEBUG", "") not in ("", "0", "false", "no")


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
        os.environ["GPTOSS_DOCTOR_DEBUG"] = "1"


def run_command(command: str, json_mode: bool, body: Callable[[Output], int]) -> None:
    """Run a command body; turn every failure into one line (or one JSON document) and an exit code."""
    out = Output(json_mode)
    try:
        code = body(out)
    except KeyboardInterrupt:
        out.note("interrupted")
        if json_mode:
            out.json(command, {"ok": False, "error": {"kind": "interrupted", "message": "interrupted", "exit_code": 130}})
        raise typer.Exit(130)
    except (typer.Exit, typer.Abort):
        raise
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly
        _silence_stdout()
        raise typer.Exit(0)
    except Exception as exc:  # the exception-to-message table lives in errors.describe_exception
        if _debug_enabled():
            import traceback

            from gptoss_doctor.redact import redact

            # a traceback quotes exception messages, which may quote a server echoing a token: redact it too
            sys.stderr.write(redact(traceback.format_exc()))
        err = describe_exception(exc)
        if err is None:
            from gptoss_doctor.redact import redact

            kind, message, code = "internal", redact(f"internal error: {type(exc).__name__}: {exc}"), EXIT_INTERNAL
            hint = "this is a bug in gptoss-doctor; run with --debug for the traceback and report it"
        else:
            kind, message, code, hint = err.kind, err.message, err.exit_code, err.hint
        out.note(f"error: {message}")
        if hint:
            out.note(f"hint: {hint}")
        if json_mode:
            out.json(command, {"ok": False, "error": {"kind": kind, "message": message, "hint": hint, "exit_code": code}})
        raise typer.Exit(code)
    raise typer.Exit(code or 0)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot raise again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _register_commands() -> None:
    from gptoss_doctor.commands import COMMAND_MODULES

    for register in COMMAND_MODULES():
        register(app)


_register_commands()


def main(argv: Optional[list[str]] = None) -> None:
    """Console-script entry point."""
    for stream in (sys.stdout, sys.stderr):
        try:  # never die on a character the terminal cannot encode
            stream.reconfigure(errors="replace")
        except (AttributeError, ValueError):
            pass
    args = sys.argv[1:] if argv is None else argv
    try:
        app(args=args, prog_name="gptoss-doctor")
    except BrokenPipeError:
        _silence_stdout()
        sys.exit(0)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        # A usage error caught by the parser: keep the --json promise of one document on stdout.
        if code == EXIT_USAGE and "--json" in args and not Output.json_emitted:
            cmd = next((a for a in args if not a.startswith("-")), "")
            Output(True).json(cmd, {"ok": False, "error": {"kind": "usage", "message": "invalid usage (see stderr)", "exit_code": EXIT_USAGE}})
        sys.exit(code)
