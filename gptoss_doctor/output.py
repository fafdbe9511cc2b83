"""The one output sink: data to stdout, diagnostics to stderr.

Rich is only imported when stdout (or stderr, for progress) is a terminal:
piped output is plain text, which keeps start-up fast for scripts that run the
doctor in a loop. Rich runs with markup, emoji and highlighting off so Harmony
text such as ``<|channel|>`` prints literally.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager
from typing import Any, Iterator

SCHEMA_VERSION = 1

UNICODE_MARKS = {"pass": "✓", "ok": "✓", "warn": "!", "fail": "✗", "error": "✗", "skip": "-", "info": "·"}
ASCII_MARKS = {"pass": "+", "ok": "+", "warn": "!", "fail": "x", "error": "x", "skip": "-", "info": "*"}
STYLES = {"pass": "green", "ok": "green", "warn": "yellow", "fail": "red", "error": "red", "skip": "dim", "info": "cyan"}


def _can_encode(stream: Any, text: str) -> bool:
    enc = getattr(stream, "encoding", None) or "ascii"
    try:
        text.encode(enc)
        return True
    except (UnicodeEncodeError, LookupError):
        return False


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Output:
    """Where every command writes. ``json_mode`` silences human output."""

    json_emitted = False  # set once any JSON document went to stdout in this process

    def __init__(self, json_mode: bool = False, *, stdout: Any = None, stderr: Any = None):
        self.json_mode = json_mode
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self.ascii = not _can_encode(self.stdout, "✓✗·")
        self.marks = ASCII_MARKS if self.ascii else UNICODE_MARKS
        self._rich = None
        self._rich_err = None
        self.color = _isatty(self.stdout) and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"

    # -- rich consoles, created on first use ---------------------------------
    def _console(self):
        if self._rich is None:
            from rich.console import Console

            self._rich = Console(file=self.stdout, markup=False, emoji=False, highlight=False, soft_wrap=True)
        return self._rich

    def _err_console(self):
        if self._rich_err is None:
            from rich.console import Console

            self._rich_err = Console(file=self.stderr, markup=False, emoji=False, highlight=False, soft_wrap=True)
        return self._rich_err

    def _safe(self, text: str) -> str:
        if self.ascii and not _can_encode(self.stdout, text):
            enc = getattr(self.stdout, "encoding", None) or "ascii"
            return text.encode(enc, "replace").decode(enc, "replace")
        return text

    # -- human output (stdout) ------------------------------------------------
    def line(self, text: str = "", style: str | None = None) -> None:
        if self.json_mode:
            return
        text = self._safe(text)
        if self.color:
            self._console().print(text, style=style)
        else:
            self.stdout.write(text + "\n")

    def heading(self, text: str) -> None:
        self.line(text, style="bold")

    def mark(self, status: str, text: str, indent: int = 0) -> None:
        """A ✓ / ! / ✗ line."""
        mark = self.marks.get(status, "?")
        pad = " " * indent
        if self.json_mode:
            return
        if self.color:
            from rich.text import Text

            t = Text(pad)
            t.append(mark, style=STYLES.get(status))
            t.append(" " + self._safe(text))
            self._console().print(t)
        else:
            self.stdout.write(f"{pad}{mark} {self._safe(text)}\n")

    def detail(self, text: str, indent: int = 4, style: str | None = None) -> None:
        """Indented continuation lines (evidence, fix steps)."""
        for chunk in str(text).splitlines() or [""]:
            self.line(" " * indent + chunk, style=style)

    def table(self, headers: list[str], rows: list[list[str]]) -> None:
        """A plain aligned table; identical on a terminal and in a pipe."""
        if self.json_mode:
            return
        cells = [[self._safe(str(c)) for c in r] for r in rows]
        widths = [len(h) for h in headers]
        for r in cells:
            for i, c in enumerate(r):
                widths[i] = max(widths[i], len(c))
        fmt = lambda r: "  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip()  # noqa: E731
        self.line(fmt(headers), style="bold")
        for r in cells:
            self.line(fmt(r))

    # -- diagnostics (stderr) -------------------------------------------------
    def note(self, text: str) -> None:
        """A diagnostic line on stderr (shown in JSON mode too)."""
        self.stderr.write(text + "\n")
        self.stderr.flush()

    @contextmanager
    def progress(self, description: str) -> Iterator[Any]:
        """A live status line on stderr when it is a terminal; else nothing.

        Yields a callable ``update(text)``.
        """
        if self.json_mode or not _isatty(self.stderr):
            yield lambda text: None
            return
        status = self._err_console().status(description)
        status.start()
        try:
            yield lambda text: status.update(text)
        finally:
            status.stop()

    # -- machine output -------------------------------------------------------
    def json(self, command: str, payload: dict) -> None:
        """Print the one versioned JSON document for ``command``."""
        doc = {"schema_version": SCHEMA_VERSION, "command": command}
        doc.update(payload)
        self.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
        self.stdout.flush()
        Output.json_emitted = True
