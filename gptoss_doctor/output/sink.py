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

import re

from gptoss_doctor import rx as _rx

UNICODE_MARKS = {"pass": "✓", "ok": "✓", "warn": "!", "fail": "✗", "error": "✗", "skip": "-", "info": "·"}
# control characters (C0, DEL, C1) and the bidi overrides that can reorder a line: never sent raw to a terminal
_BEYOND_C0 = "\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069"
CONTROL_RE = _rx.compile(f"[\x00-\x1f{_BEYOND_C0}]")
# what json.dumps(ensure_ascii=False) leaves raw (it escapes C0 itself), plus the Unicode line separators
JSON_UNSAFE_RE = _rx.compile(f"[{_BEYOND_C0}\u2028\u2029]")
# what an ASCII-only terminal gets instead of the typography the doctor itself uses
ASCII_FALLBACK = str.maketrans({"·": "*", "—": "--", "–": "-", "…": "...", "→": "->", "←": "<-", "≥": ">=", "≤": "<=",
                                "“": '"', "”": '"', "‘": "'", "’": "'", "✓": "+", "✗": "x", "×": "x", "•": "*"})


def printable(text: str) -> str:
    """Text from a server, a log or the Hub made safe for a terminal: control characters shown as escapes
    (ESC as \\x1b, CR as \\r, a newline as \\n), so nothing can clear the screen, retitle the window, or
    overwrite a line. The one place every human-output path goes through."""
    return CONTROL_RE.sub(lambda m: repr(m.group(0))[1:-1] if m.group(0) != "\t" else " ", str(text))


MD_SPECIAL_RE = _rx.compile(r"([\\`*_{}\[\]()#+!|~<>])")


def markdown_text(text: str) -> str:
    """Untrusted text inside a Markdown report: printable, HTML-escaped, Markdown syntax escaped, one line."""
    t = printable(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return MD_SPECIAL_RE.sub(lambda m: "\\" + m.group(1) if m.group(1) not in "<>" else m.group(1), t)


def markdown_code(text: str) -> str:
    """Untrusted text shown as code: a code span, with backticks and angle brackets neutralised too (a report is
    pasted into pages that may treat a stray </details> or <img> as HTML even near code)."""
    t = printable(text).replace("`", "'").replace("<", "\u2039").replace(">", "\u203a")
    return f"`{t}`"


def terminal_width(stream: Any) -> int | None:
    """The width to wrap at: the terminal's, or COLUMNS when set; None (no wrapping) for pipes."""
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) >= 20:
        return int(env)
    if _isatty(stream):
        try:
            return max(20, os.get_terminal_size(stream.fileno()).columns)
        except (OSError, ValueError, AttributeError):
            return 80
    return None
ASCII_MARKS = {"pass": "+", "ok": "+", "warn": "!", "fail": "x", "error": "x", "skip": "-", "info": "*"}
STYLES = {"pass": "green", "ok": "green", "warn": "yellow", "fail": "red", "error": "red", "skip": "dim", "info": "cyan"}


def _can_encode(stream: Any, text: str) -> bool:
    """Can ``stream`` show ``text`` (✓ ✗ …) in its encoding?"""
    try:
        text.encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


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
        self.ascii = not _can_encode(self.stdout, "✓✗·—…")
        self.marks = ASCII_MARKS if self.ascii else UNICODE_MARKS
        self.width = terminal_width(self.stdout)
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
        text = printable(text)
        if self.ascii and not _can_encode(self.stdout, text):
            text = text.translate(ASCII_FALLBACK)
            enc = getattr(self.stdout, "encoding", None) or "ascii"
            return text.encode(enc, "replace").decode(enc, "replace")
        return text

    def _wrap(self, text: str, hang: int, width: int | None = None) -> list[str]:
        """Physical lines of ``text`` at the terminal width (``width``: another stream's), broken at word
        boundaries, continuation lines indented by ``hang`` (long URLs and paths are kept whole rather than cut)."""
        width = width or self.width
        if not width or len(text) <= width:
            return [text]
        import textwrap

        lead = len(text) - len(text.lstrip(" "))
        indent = min(hang, width // 2)
        # a word wider than the line (a server's one-word JSON) is cut into line-wide pieces, unless it is a URL or
        # a path, kept whole so it stays usable; two pieces never fit on one line, so no space shows between them
        room = max(1, width - max(indent, lead))
        words = [" ".join(w[i:i + room] for i in range(0, len(w), room))
                 if len(w) > room and not w.startswith(("http://", "https://", "/", "~/", "./")) else w
                 for w in text.lstrip(" ").split(" ")]
        lines = textwrap.wrap(" ".join(words), width, initial_indent=" " * lead,
                              subsequent_indent=" " * indent, break_long_words=False, break_on_hyphens=False)
        return lines or [text]

    # -- human output (stdout) ------------------------------------------------
    def line(self, text: str = "", style: str | None = None, hang: int | None = None) -> None:
        if self.json_mode:
            return
        text = self._safe(text)
        lead = len(text) - len(text.lstrip(" "))
        for part in self._wrap(text, lead + 2 if hang is None else hang):
            if self.color:
                self._console().print(part, style=style)
            else:
                self.stdout.write(part + "\n")

    def heading(self, text: str) -> None:
        self.line(text, style="bold")

    def mark(self, status: str, text: str, indent: int = 0) -> None:
        """A ✓ / ! / ✗ line."""
        mark = self.marks.get(status, "?")
        pad = " " * indent
        if self.json_mode:
            return
        parts = self._wrap(f"{pad}{mark} {self._safe(text)}", indent + 2)
        if self.color:
            from rich.text import Text

            t = Text(pad)
            t.append(mark, style=STYLES.get(status))
            t.append(parts[0][len(pad) + len(mark):])
            self._console().print(t)
            for part in parts[1:]:
                self._console().print(part)
        else:
            for part in parts:
                self.stdout.write(part + "\n")

    def detail(self, text: str, indent: int = 4, style: str | None = None) -> None:
        """An indented continuation line (evidence, fix step); wrapped lines hang under its first word."""
        text = str(text)
        m = re.match(r"[a-z ()-]{2,30}: ", text)
        self.line(" " * indent + text, style=style, hang=indent + (len(m.group(0)) if m else 2))

    def table(self, headers: list[str], rows: list[list[str]]) -> None:
        """A plain aligned table. When it is wider than the terminal and its columns before the last take more than
        half the line, each row becomes its first cell on a line of its own and the other cells on the next line
        (wrapped, indented), instead of every row wrapping; otherwise only the last column wraps."""
        if self.json_mode:
            return
        cells = [[self._safe(str(c)) for c in r] for r in rows]
        widths = [len(h) for h in headers]
        for r in cells:
            for i, c in enumerate(r):
                widths[i] = max(widths[i], len(c))
        lead = sum(widths[:-1]) + 2 * (len(widths) - 1)
        if self.width and lead + widths[-1] > self.width and lead > self.width // 2 and len(headers) > 1:
            sep = " * " if self.ascii else " · "
            k = 1  # the leading columns that fit on the row's first line (at least the first)
            while k < len(widths) - 1 and sum(widths[:k + 1]) + 2 * k <= self.width - 10:
                k += 1
            head = lambda r: "  ".join(c.ljust(widths[i]) for i, c in enumerate(r[:k])).rstrip()  # noqa: E731
            self.line(head(headers), style="bold")
            self.line("  " + sep.join(headers[k:]), style="bold")
            for r in cells:
                self.line(head(r))
                self.line("  " + sep.join(c for c in r[k:] if c), hang=4)
            return
        fmt = lambda r: "  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip()  # noqa: E731
        self.line(fmt(headers), style="bold")
        for r in cells:
            self.line(fmt(r))

    # -- diagnostics (stderr) -------------------------------------------------
    def note(self, text: str) -> None:
        """A diagnostic line on stderr (shown in JSON mode too), wrapped at the terminal width (or COLUMNS) with the
        continuation lines under the text after its "error: " / "hint: " label."""
        text = printable(text)
        m = re.match(r"[a-z ]{2,12}: ", text)
        self.stderr.write("\n".join(self._wrap(text, len(m.group(0)) if m else 2, terminal_width(self.stderr)))
                          + "\n")
        self.stderr.flush()

    @contextmanager
    def progress(self, description: str) -> Iterator[Any]:
        """A live status line on stderr when it is a terminal; else nothing.

        Yields a callable ``update(text)``.
        """
        if self.json_mode or not _isatty(self.stderr):
            yield lambda text: None
            return
        status = self._err_console().status(self._safe(description), spinner="line" if self.ascii else "dots")
        status.start()
        try:
            yield lambda text: status.update(self._safe(text))  # every update: it carries server text
        finally:
            status.stop()

    # -- machine output -------------------------------------------------------
    def json(self, command: str, payload: dict) -> None:
        """Print the one versioned JSON document for ``command``."""
        doc = {"schema_version": SCHEMA_VERSION, "command": command}
        doc.update(payload)
        text = json.dumps(doc, ensure_ascii=False, indent=2)
        # DEL, C1 (U+009B is a CSI) and bidi overrides can only stand inside strings: as \uXXXX escapes the document
        # stays valid and lossless, and a terminal showing it is not driven by them
        self.stdout.write(JSON_UNSAFE_RE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text) + "\n")
        self.stdout.flush()
        Output.json_emitted = True
