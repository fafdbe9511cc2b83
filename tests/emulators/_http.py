"""Tiny real-socket HTTP/1.1 server used by every engine emulator (stdlib only).

Each emulator runs a ``ThreadingHTTPServer`` bound to 127.0.0.1:0 in a daemon
thread.  Handlers return :class:`Response` objects; streamed responses are
written with chunked transfer-encoding in small, irregular pieces (split inside
``data:`` and inside UTF-8 multibyte characters) with a flush per piece, so
clients are exercised against awkward TCP read boundaries.
"""
from __future__ import annotations

import email.utils
import http
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterable, Optional
from urllib.parse import parse_qs, urlsplit

MAX_BODY = 8 * 1024 * 1024

# Irregular piece sizes used to cut streamed bytes (cycled).
_PIECES = (3, 1, 7, 2, 13, 5, 1, 9, 4, 21, 6, 2, 11, 3, 17)


class Cut:
    """Yielded by a stream: drop the connection here, without the chunked terminator (a server whose handler raised
    mid-stream, e.g. the gpt-oss reference server when its python tool fails)."""


class Pause:
    """Yield from a stream generator to sleep (bounded, interruptible) mid-stream."""

    def __init__(self, seconds: float):
        self.seconds = seconds


@dataclass
class Request:
    method: str
    path: str  # without query string
    query: dict
    headers: dict  # lower-case keys
    body: bytes
    raw_path: str = ""
    _json: Any = field(default=None, repr=False)
    _json_done: bool = field(default=False, repr=False)

    def json(self) -> Any:
        """Parsed JSON body, or raises ValueError."""
        if not self._json_done:
            self._json = json.loads(self.body.decode("utf-8")) if self.body else None
            self._json_done = True
        return self._json

    def bearer(self) -> Optional[str]:
        auth = self.headers.get("authorization", "")
        if auth[:7].lower() == "bearer ":
            return auth[7:].strip()
        return None


@dataclass
class Response:
    status: int = 200
    headers: list = field(default_factory=list)  # list of (name, value)
    body: bytes = b""
    stream: Optional[Iterable] = None  # iterable of bytes | Pause
    reason: Optional[str] = None
    split: bool = True  # split streamed events into irregular pieces


def dumps(obj: Any) -> bytes:
    """JSON the way FastAPI/pydantic, Go and C++ servers send it: compact-ish, raw UTF-8."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def json_response(obj: Any, status: int = 200, headers: Optional[list] = None,
                  content_type: str = "application/json") -> Response:
    return Response(status=status, headers=[("content-type", content_type)] + list(headers or []),
                    body=dumps(obj))


def text_response(text: str, status: int = 200, content_type: str = "text/plain; charset=utf-8",
                  headers: Optional[list] = None) -> Response:
    return Response(status=status, headers=[("content-type", content_type)] + list(headers or []),
                    body=text.encode("utf-8"))


def empty_response(status: int = 200, headers: Optional[list] = None) -> Response:
    return Response(status=status, headers=list(headers or []), body=b"")


def split_points(data: bytes, offset: int) -> list:
    """Irregular cut points; always cut inside the first 'data:' and inside the first multibyte char."""
    cuts = set()
    pos, i = 0, offset
    while True:
        pos += _PIECES[i % len(_PIECES)]
        i += 1
        if pos >= len(data):
            break
        cuts.add(pos)
    j = data.find(b"data:")
    if j >= 0:
        cuts.add(j + 2)
    for k, b in enumerate(data):
        if b >= 0xC0:  # lead byte of a multibyte UTF-8 sequence
            if k + 1 < len(data):
                cuts.add(k + 1)
            break
    return sorted(c for c in cuts if 0 < c < len(data))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self._conns: set = set()
        self._conns_lock = threading.Lock()

    def process_request_thread(self, request, client_address):
        with self._conns_lock:
            self._conns.add(request)
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._conns_lock:
                self._conns.discard(request)

    def handle_error(self, request, client_address):
        """Clients dropping connections is normal here; never spam stderr with tracebacks."""
        import sys
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, socket.timeout, OSError)):
            return
        super().handle_error(request, client_address)

    def close_connections(self) -> None:
        """Close kept-alive / in-flight client connections so nothing is served after stop()."""
        with self._conns_lock:
            conns = list(self._conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def make_handler(app: "HTTPApp"):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 15  # bounded: an idle keep-alive connection never blocks forever

        def log_message(self, format, *args):  # silence stderr
            pass

        def setup(self):
            super().setup()
            try:
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass

        def _read_body(self) -> bytes:
            te = self.headers.get("Transfer-Encoding", "")
            if "chunked" in te.lower():
                out = bytearray()
                while len(out) <= MAX_BODY:
                    line = self.rfile.readline(1024)
                    if not line:
                        break
                    size = int(line.split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        # trailers
                        while True:
                            t = self.rfile.readline(1024)
                            if t in (b"\r\n", b"\n", b""):
                                break
                        break
                    out += self.rfile.read(size)
                    self.rfile.readline(8)
                return bytes(out)
            try:
                n = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                n = 0
                self.close_connection = True
            if n <= 0:
                return b""
            if n > MAX_BODY:  # do not leave unread bytes on a kept-alive connection
                self.close_connection = True
            return self.rfile.read(min(n, MAX_BODY))

        def _handle(self):
            body = self._read_body()
            parts = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
            headers = {k.lower(): v for k, v in self.headers.items()}
            req = Request(method=self.command, path=parts.path or "/", query=query,
                          headers=headers, body=body, raw_path=self.path)
            app.record(req)
            gate = getattr(app, "serial_lock", None) if self.command == "POST" else None
            app.begin(req)
            if gate is not None:
                gate.acquire()  # one request at a time, like a server without batching
            try:
                try:
                    resp = app.handle(req)
                except Exception as exc:  # an emulator bug must not hang the client
                    resp = text_response(f"emulator error: {exc!r}", status=500)
                wait = app.delay_for(req)
                if wait > 0:
                    app.stopped.wait(wait)
                self._write(req, resp)
            finally:
                if gate is not None:
                    gate.release()
                app.end(req)

        def _send_head(self, resp: Response, chunked: bool, length: int):
            reason = resp.reason
            if reason is None:
                try:
                    reason = http.HTTPStatus(resp.status).phrase
                except ValueError:
                    reason = ""
            self.send_response_only(resp.status, reason)
            lower = app.lowercase_headers
            hdrs = []
            names = {n.lower() for n, _ in resp.headers}
            if app.server_header and "server" not in names:
                hdrs.append(("server", app.server_header))
            if app.send_date and "date" not in names:
                hdrs.append(("date", email.utils.formatdate(usegmt=True)))
            hdrs.extend(resp.headers)
            hdrs.extend(app.extra_headers(resp))
            if chunked:
                hdrs.append(("transfer-encoding", "chunked"))
            elif length >= 0:
                hdrs.append(("content-length", str(length)))
            else:
                hdrs.append(("connection", "close"))
            for name, value in hdrs:
                if not lower:
                    name = "-".join(p[:1].upper() + p[1:] for p in name.split("-"))
                self.send_header(name, value)
            self.end_headers()

        def _write(self, req: Request, resp: Response):
            head_only = req.method == "HEAD"
            try:
                if resp.stream is None:
                    self._send_head(resp, chunked=False, length=len(resp.body))
                    if not head_only and resp.body:
                        self.wfile.write(resp.body)
                    return
                chunked = self.request_version != "HTTP/1.0"
                if chunked:
                    self._send_head(resp, chunked=True, length=0)
                else:  # HTTP/1.0 client: body delimited by connection close
                    self.close_connection = True
                    self._send_head(resp, chunked=False, length=-1)
                if head_only:
                    if chunked:
                        self.wfile.write(b"0\r\n\r\n")
                    return
                offset = 0
                for item in resp.stream:
                    if app.stopped.is_set():
                        break
                    if isinstance(item, Cut):
                        self.wfile.flush()
                        self.close_connection = True
                        return
                    if isinstance(item, Pause):
                        app.stopped.wait(item.seconds)
                        continue
                    if not item:
                        continue
                    pieces = [item]
                    if resp.split:
                        cuts = split_points(item, offset)
                        pieces, prev = [], 0
                        for c in cuts + [len(item)]:
                            pieces.append(item[prev:c])
                            prev = c
                    offset += 1
                    for p in pieces:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(p), p) if chunked else p)
                        self.wfile.flush()
                    time.sleep(app.event_gap)
                if chunked:
                    self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, socket.timeout, OSError):
                self.close_connection = True

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_OPTIONS = do_PATCH = _handle

    return Handler


class HTTPApp:
    """Base for emulators: owns the socket server thread and the request log."""

    server_header: Optional[str] = "uvicorn"
    lowercase_headers: bool = True
    send_date: bool = True
    event_gap: float = 0.001
    delay: float = 0.0

    def __init__(self):
        self.requests: list = []
        self._lock = threading.Lock()
        self.stopped = threading.Event()
        self._server: Optional[_Server] = None
        self._thread: Optional[threading.Thread] = None
        self.url = ""

    # -- hooks -------------------------------------------------------------
    def begin(self, req: Request) -> None:
        """A request arrived (before any queueing); ``end`` when its answer is written."""

    def delay_for(self, req: Request) -> float:
        """Seconds to hold the answer to ``req`` back (a slow server)."""
        return self.delay

    def end(self, req: Request) -> None:
        """The answer to ``req`` is written (or the write failed)."""

    def handle(self, req: Request) -> Response:  # pragma: no cover - overridden
        return empty_response(404)

    def extra_headers(self, resp: Response) -> list:
        return []

    # -- request log ---------------------------------------------------------
    def record(self, req: Request) -> None:
        with self._lock:
            self.requests.append({"method": req.method, "path": req.path, "query": dict(req.query),
                                  "headers": dict(req.headers), "body": req.body})

    # -- lifecycle -----------------------------------------------------------
    def start(self, port: int = 0) -> "HTTPApp":
        self._server = _Server(("127.0.0.1", port), make_handler(self))
        port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{port}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.01},
                                        name=f"emulator-{port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopped.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server.close_connections()
        if self._thread is not None:
            self._thread.join(timeout=5)
