"""An incremental Server-Sent Events parser.

Bytes arrive in arbitrary pieces (a frame, a line or a UTF-8 character may be
split anywhere); ``SSEParser.feed`` returns the events completed so far.
Handles LF, CRLF and CR line ends, multi-line ``data:``, ``event:``, ``id:``,
comment lines (``: keep-alive``) and unknown fields, per the WHATWG spec; one
deviation: an ``error: ...`` line (llama-server's mid-stream error) becomes an
event named ``error``.
Lines are decoded only once complete, with invalid UTF-8 replaced.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


class SSELineTooLong(ValueError):
    """A single SSE line exceeded the parser's limit (a hostile or broken server)."""


@dataclass
class SSEEvent:
    data: str
    event: Optional[str] = None
    id: Optional[str] = None

    @property
    def is_done(self) -> bool:
        return self.data.strip() == "[DONE]"


class SSEParser:
    def __init__(self, max_line_bytes: int = 1 << 20):
        self._buf = bytearray()
        self._pending_cr = False  # the last byte fed was a CR: a following LF belongs to it
        self._data: list[str] = []
        self._event: Optional[str] = None
        self._id: Optional[str] = None
        self._has_field = False
        self.max_line_bytes = max_line_bytes
        self.comments = 0
        self._first = True

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Events completed by ``chunk``. Lines are cut with bytes.split (C speed), not byte by byte."""
        events: list[SSEEvent] = []
        if not chunk:
            return events
        if self._pending_cr:  # a CR ended the previous chunk: an LF right after it is part of that line end
            self._pending_cr = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
                if not chunk:
                    return events
        data = bytes(self._buf) + chunk if self._buf else chunk
        self._buf.clear()
        if b"\r" in data:
            if data.endswith(b"\r"):
                self._pending_cr = True
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = data.split(b"\n")
        tail = lines.pop()
        for raw in lines:
            self._line(raw, events)
        if tail:
            if len(tail) > self.max_line_bytes:
                raise SSELineTooLong(f"an SSE line is longer than {self.max_line_bytes} bytes")
            self._buf += tail
        return events

    def close(self) -> list[SSEEvent]:
        """End of stream: a final event without its blank line is dispatched (lenient)."""
        events: list[SSEEvent] = []
        if self._buf:
            self._line(bytes(self._buf), events)
            self._buf.clear()
        self._dispatch(events)
        return events

    def _line(self, raw: bytes, events: list[SSEEvent]) -> None:
        if self._first:
            self._first = False
            if raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
        line = raw.decode("utf-8", "replace")
        if line == "":
            self._dispatch(events)
            return
        if line.startswith(":"):
            self.comments += 1
            return
        if ":" in line:
            name, value = line.split(":", 1)
            if value.startswith(" "):
                value = value[1:]
        else:
            name, value = line, ""
        if name == "data":
            self._data.append(value)
            self._has_field = True
        elif name == "event":
            self._event = value
            self._has_field = True
        elif name == "error":
            # not an SSE field, but llama-server writes mid-stream errors as "error: {...}" lines
            self._data.append(value)
            self._event = "error"
            self._has_field = True
        elif name == "id":
            if "\0" not in value:
                self._id = value
            self._has_field = True
        # "retry" and unknown fields are ignored

    def _dispatch(self, events: list[SSEEvent]) -> None:
        if self._data:
            events.append(SSEEvent(data="\n".join(self._data), event=self._event or None, id=self._id))
        self._data = []
        self._event = None
        self._has_field = False


def parse_all(data: bytes) -> list[SSEEvent]:
    """Parse a complete stream at once (tests, small bodies)."""
    p = SSEParser()
    return p.feed(data) + p.close()
