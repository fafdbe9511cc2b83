"""The single entry point every command body runs through: it applies the one exception → (kind, message, hint,
exit code) table (``errors.describe_exception``), keeps the --json promise of one document on stdout even on
failure, and shows tracebacks only with --debug (redacted)."""

from __future__ import annotations

import os
import sys
from typing import Callable

import typer

from gptoss_doctor import settings
from gptoss_doctor.errors import describe_exception
from gptoss_doctor.output.sink import Output

EXIT_INTERNAL = 70


def run_command(command: str, json_mode: bool, body: Callable[[Output], int]) -> None:
    """Run a command body; turn every failure into one line (or one JSON document) and an exit code."""
    out = Output(json_mode)
    try:
        code = body(out)
    except KeyboardInterrupt:
        import warnings

        # the probes a Ctrl-C cut short are coroutines that will never run: no warning for each at exit
        warnings.filterwarnings("ignore", message=r"coroutine .* was never awaited", category=RuntimeWarning)
        out.note("interrupted")
        if json_mode:
            out.json(command, {"ok": False, "error": {"kind": "interrupted", "message": "interrupted", "exit_code": 130}})
        raise typer.Exit(130)
    except (typer.Exit, typer.Abort):
        raise
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly
        silence_stdout()
        raise typer.Exit(0)
    except Exception as exc:  # the exception-to-message table lives in errors.describe_exception
        if settings.debug():
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
            try:
                out.json(command, {"ok": False, "error": {"kind": kind, "message": message, "hint": hint,
                                                          "exit_code": code}})
            except OSError:  # stdout itself failed (a full disk, /dev/full): the line on stderr is the report
                silence_stdout()
        raise typer.Exit(code)
    raise typer.Exit(code or 0)


def silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot raise again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


