"""A defensive async HTTP layer for probing servers we do not trust.

Every request has a total deadline (not only httpx's per-read timeout, which a
slow-drip server defeats), bodies are streamed and capped (JSON 1 MiB; SSE
bounded in events, bytes and seconds), bytes are decoded tolerantly, JSON is
parsed without raising, and redirects are handled by hand: same-origin
redirects are followed (with the API key), a redirect to another origin is
reported and never followed, so the key cannot leak to another host.

Network failures are classified (dns / refused / tls / timeout / reset / ...)
so ``check`` can tell the user which one it was.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import ssl
import sys
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Optional
from urllib.parse import urljoin, urlsplit

if "httpx" not in sys.modules:
    # httpx's __init__ imports its optional CLI (click, rich, pygments: ~100 ms) when it can; a None
    # entry makes that import fail fast, and httpx falls back to a stub. Undone right after.
    _had_main = "httpx._main" in sys.modules
    sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    import httpx

    if not _had_main and sys.modules.get("httpx._main") is None:
        del sys.modules["httpx._main"]
else:
    import httpx

from gptoss_doctor import __version__
from gptoss_doctor.net.sse import SSEEvent, SSELineTooLong, SSEParser

JSON_LIMIT = 1 << 20  # 1 MiB
SSE_MAX_EVENTS = 5000
SSE_MAX_BYTES = 8 << 20
MAX_REDIRECTS = 3
REDIRECT_CODES = (301, 302, 303, 307, 308)

# error kinds (map to finding ids reach.<kind> where one exists)
DNS, REFUSED, TLS, TIMEOUT, RESET, CONNECT, INVALID_URL, TOO_LARGE, OTHER = (
    "dns", "refused", "tls", "timeout", "reset", "connect", "invalid_url", "too_large", "other")


def origin(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    scheme = (parts.scheme or "http").lower()
    port = parts.port or (443 if scheme == "https" else 80)
    return scheme, (parts.hostname or "").lower(), port


def is_loopback(url: str) -> bool:
    """The URL names this machine through its loopback interface (localhost, 127.0.0.0/8, ::1): only then are the
    files on this machine the ones the server reads."""
    import ipaddress

    host = origin(url)[1].strip("[]")
    if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _chain(exc: BaseException) -> list[BaseException]:
    seen, out = set(), []
    cur: Optional[BaseException] = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        out.append(cur)
        cur = cur.__cause__ or cur.__context__
    return out


def classify(exc: BaseException) -> tuple[str, str]:
    """(kind, one-line message) for a network exception."""
    chain = _chain(exc)
    text = " | ".join(str(e) for e in chain if str(e)) or type(exc).__name__
    low = text.lower()
    # the innermost message names the real cause ("[Errno 111] Connect call failed ...")
    inner = next((str(e) for e in reversed(chain) if str(e)), type(exc).__name__)
    first = inner.splitlines()[0][:300]
    if isinstance(exc, (asyncio.TimeoutError, httpx.TimeoutException)) or any(
            isinstance(e, (asyncio.TimeoutError, TimeoutError, socket.timeout)) for e in chain):
        return TIMEOUT, "timed out" + (f" ({first})" if str(exc) else "")
    if isinstance(exc, (httpx.UnsupportedProtocol, httpx.InvalidURL)):
        return INVALID_URL, first
    if any(isinstance(e, socket.gaierror) for e in chain) or any(s in low for s in (
            "name or service not known", "nodename nor servname", "temporary failure in name resolution",
            "no address associated", "getaddrinfo failed", "name does not resolve", "errno -2", "errno -3", "errno -5")):
        return DNS, "host name does not resolve: " + first
    if any(isinstance(e, ConnectionRefusedError) for e in chain) or "connection refused" in low or "errno 111" in low \
            or "actively refused" in low:
        return REFUSED, "connection refused: " + first
    if any(isinstance(e, ssl.SSLError) for e in chain) or "ssl" in low or "certificate" in low or "tls" in low:
        return TLS, "TLS error: " + first
    if "buffer too long" in low or "header" in low and ("too large" in low or "too long" in low or "exceed" in low):
        # h11 refuses an oversized response head: the client refused it, the server did not close anything
        return OTHER, "the server's response headers are too large (the client refused to read them)"
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)) or any(
            isinstance(e, (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)) for e in chain) \
            or "reset" in low or "disconnected" in low or "incomplete" in low:
        return RESET, "connection closed by the server: " + first
    if isinstance(exc, (httpx.ConnectError, OSError)):
        return CONNECT, "cannot connect: " + first
    return OTHER, f"{type(exc).__name__}: {first}"


def decode(data: bytes) -> str:
    return data.decode("utf-8", "replace")


@dataclass
class _Exchange:
    """What every request records, streamed or not: where it went, what came back, how it failed."""

    method: str
    url: str
    status: Optional[int] = None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""  # capped; for a stream only a non-SSE answer's body (an error JSON, HTML …)
    error: Optional[str] = None  # a kind from classify(), or TOO_LARGE
    error_message: str = ""
    redirect_to: Optional[str] = None  # a cross-origin Location that was not followed
    elapsed: float = 0.0

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()


@dataclass
class Response(_Exchange):
    truncated: bool = False  # body hit the size cap (the rest was never read)
    _json: Any = field(default=None, repr=False)
    _json_done: bool = field(default=False, repr=False)

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300 and not self.error

    @property
    def answered(self) -> bool:
        """An HTTP response arrived (whatever its status)."""
        return self.status is not None

    @property
    def text(self) -> str:
        return decode(self.body)

    def json(self) -> Any:
        """The parsed body, or None when it is not (complete, valid) JSON. Never raises."""
        if not self._json_done:
            self._json_done = True
            self._json = None
            if self.body and not self.truncated:
                try:
                    self._json = json.loads(decode(self.body))
                except (ValueError, RecursionError):
                    self._json = None
        return self._json

    def json_object(self) -> Optional[dict]:
        data = self.json()
        return data if isinstance(data, dict) else None

    def snippet(self, n: int = 200) -> str:
        t = " ".join(self.text.split())
        return t[:n] + ("…" if len(t) > n else "")

    def describe(self) -> str:
        if self.error:
            return self.error_message or self.error
        if self.redirect_to:
            return f"HTTP {self.status}: redirect to {self.redirect_to} (another origin: not followed)"
        return f"HTTP {self.status}" + (f": {self.snippet(160)}" if self.body else "")


@dataclass
class StreamResult(_Exchange):
    """What a streamed (SSE) request produced, however it ended."""

    events: list[SSEEvent] = field(default_factory=list)
    done: bool = False  # saw data: [DONE]
    ended: str = ""  # done | eof | max_events | max_bytes | timeout | reset | line_too_long | error | not_sse
    bytes_read: int = 0
    last_event_at: float = 0.0  # time.monotonic() of the last event: a timed-out stream still delivering is slow

    def still_streaming(self, within: float = 5.0, max_rate: float = 100.0) -> bool:
        """Did the stream time out while events were still arriving at a generation's pace (a slow server, neither a
        stalled one nor an endless flood)?"""
        rate = len(self.events) / max(self.elapsed, 1e-3)
        return (self.ended == "timeout" and len(self.events) > 1 and rate < max_rate
                and time.monotonic() - self.last_event_at < within)

    def as_response(self) -> Response:
        return Response(self.method, self.url, self.status, self.headers, self.body, error=self.error,
                        error_message=self.error_message, redirect_to=self.redirect_to, elapsed=self.elapsed)


class UnsupportedEncoding(Exception):
    """The server compressed its answer with an encoding the doctor did not ask for and does not read."""


async def decoded_chunks(r: Any, limit: int):
    """The body's bytes, decompressed here (not by httpx) so that at most ``limit`` decompressed bytes ever exist:
    a gzip bomb stops at the cap instead of inflating in memory. We ask for identity; gzip/deflate are tolerated."""
    import zlib

    enc = (r.headers.get("content-encoding") or "identity").strip().lower()
    if enc in ("", "identity"):
        async for chunk in r.aiter_raw():
            yield chunk
        return
    if enc not in ("gzip", "x-gzip", "deflate"):
        raise UnsupportedEncoding(f"the answer is compressed with {enc[:20]!r}, which was not asked for")
    d = zlib.decompressobj(zlib.MAX_WBITS | 32 if enc != "deflate" else zlib.MAX_WBITS)
    produced = 0
    async for chunk in r.aiter_raw():
        data = chunk
        while data:
            room = limit + 1 - produced
            if room <= 0:
                return
            out = d.decompress(data, room)
            produced += len(out)
            if out:
                yield out
            data = d.unconsumed_tail
        if d.eof:
            return


class Client:
    """One target's HTTP client. Use as ``async with Client(url, ...) as c``."""

    def __init__(self, base_url: str, *, api_key: Optional[str] = None, timeout: float = 10.0,
                 json_limit: int = JSON_LIMIT, sse_max_events: int = SSE_MAX_EVENTS,
                 sse_max_bytes: int = SSE_MAX_BYTES, verify: bool = True):
        self.base_url = base_url.rstrip("/")
        self.origin = origin(self.base_url)
        self.api_key = api_key
        self.timeout = float(timeout)
        self.json_limit = json_limit
        self.sse_max_events = sse_max_events
        self.sse_max_bytes = sse_max_bytes
        self.requests = 0
        self.seen_headers: dict[str, str] = {}  # headers worth keeping from any answer (x-litellm-version …)
        self._stream_seconds: Optional[float] = None
        self._gate: Optional[asyncio.Semaphore] = None  # set by one_at_a_time()
        self.log: list[tuple[str, str, Optional[int], float]] = []  # (method, path, status, seconds)
        # Only same-origin requests are ever sent, so a plain-http target never needs a CA bundle
        # (loading it costs ~20 ms per client).
        if self.origin[0] == "http":
            verify = False
        self._client = httpx.AsyncClient(
            follow_redirects=False, verify=verify,
            timeout=httpx.Timeout(self.timeout, connect=min(self.timeout, 5.0)),
            headers={"User-Agent": f"gptoss-doctor/{__version__}", "Accept-Encoding": "identity"},
            limits=httpx.Limits(max_connections=32, max_keepalive_connections=16),
        )

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        try:
            await self._client.aclose()
        except Exception:  # noqa: BLE001 - closing a broken connection must not fail the check
            pass

    def one_at_a_time(self) -> None:
        """Send one request at a time from now on, each deadline starting when it is sent: a slow server that
        answers requests one after another must not have its queue counted as timeouts."""
        if self._gate is None:
            self._gate = asyncio.Semaphore(1)

    @contextlib.asynccontextmanager
    async def _turn(self) -> AsyncIterator[None]:
        if self._gate is None:
            yield
        else:
            async with self._gate:
                yield

    KEPT_HEADERS = ("x-litellm-version",)

    def _keep(self, headers: dict) -> None:
        for k in self.KEPT_HEADERS:
            if k in headers and k not in self.seen_headers:
                self.seen_headers[k] = str(headers[k])[:40]

    def url(self, path: str) -> str:
        return self.base_url + (path if path.startswith("/") else "/" + path)

    extra_headers: dict = {}  # set per client for check --request: the user's own (non-secret) headers

    def _headers(self, url: str, auth: bool, extra: Optional[dict] = None) -> dict:
        h = {**self.extra_headers, **(extra or {})}
        if auth and self.api_key and origin(url) == self.origin:
            h["Authorization"] = f"Bearer {self.api_key}"
        return h

    # -- plain requests ---------------------------------------------------------------------------
    async def get(self, path: str, *, auth: bool = True, limit: Optional[int] = None,
                  timeout: Optional[float] = None) -> Response:
        return await self.request("GET", path, auth=auth, limit=limit, timeout=timeout)

    async def post(self, path: str, body: Any, *, auth: bool = True, limit: Optional[int] = None,
                   timeout: Optional[float] = None) -> Response:
        return await self.request("POST", path, json_body=body, auth=auth, limit=limit, timeout=timeout)

    async def request(self, method: str, path: str, *, json_body: Any = None, auth: bool = True,
                      limit: Optional[int] = None, timeout: Optional[float] = None) -> Response:
        async with self._turn():
            return await self._timed_request(method, path, json_body, auth, limit, timeout)

    async def _timed_request(self, method: str, path: str, json_body: Any, auth: bool, limit: Optional[int],
                             timeout: Optional[float]) -> Response:
        url = self.url(path)
        resp = Response(method, url)
        t0 = time.monotonic()
        self.requests += 1
        try:
            await asyncio.wait_for(self._request(resp, method, url, json_body, auth, limit or self.json_limit),
                                   timeout=timeout or self.timeout)
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - every failure becomes a classified result
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            resp.error, resp.error_message = classify(exc)
            if resp.error == TIMEOUT:
                resp.error_message = f"no complete answer within {timeout or self.timeout:g} s"
        resp.elapsed = time.monotonic() - t0
        self.log.append((method, path, resp.status, resp.elapsed))
        return resp

    def _redirect(self, url: str, status: int, headers: dict) -> tuple[Optional[str], Optional[str]]:
        """(same-origin URL to follow, other-origin URL to report) for a redirect; (None, None) otherwise.

        The one place that decides where a redirect may go: the API key only ever travels to the target's origin.
        """
        if status not in REDIRECT_CODES or "location" not in headers:
            return None, None
        target = urljoin(url, headers["location"])
        return (target, None) if origin(target) == self.origin else (None, target)

    @contextlib.asynccontextmanager
    async def _follow(self, into: Any, method: str, url: str, content: Optional[bytes], auth: bool,
                      extra: Optional[dict], see_other_get: bool = False) -> AsyncIterator[Any]:
        """Open ``url``, following same-origin redirects only; yields the final httpx response, or None when the
        answer redirects to another origin (``into.redirect_to``) or too often (``into.error``). Status, URL and
        headers of each hop are recorded on ``into`` (a Response or a StreamResult)."""
        for _hop in range(MAX_REDIRECTS + 1):
            async with self._client.stream(method, url, content=content, headers=self._headers(url, auth, extra)) as r:
                into.url, into.status = url, r.status_code
                into.headers = {k.lower(): v for k, v in r.headers.items()}
                self._keep(into.headers)
                follow, away = self._redirect(url, r.status_code, into.headers)
                if away:
                    into.redirect_to = away
                    yield None
                    return
                if not follow:
                    yield r
                    return
                url = follow
                if see_other_get and r.status_code == 303:
                    method, content, extra = "GET", None, None
        into.error, into.error_message = OTHER, f"more than {MAX_REDIRECTS} redirects"
        yield None

    async def _request(self, resp: Response, method: str, url: str, json_body: Any, auth: bool, limit: int) -> None:
        content = None if json_body is None else json.dumps(json_body).encode()
        extra = {"Content-Type": "application/json"} if content is not None else None
        async with self._follow(resp, method, url, content, auth, extra, see_other_get=True) as r:
            if r is None:
                return
            buf = bytearray()
            async for chunk in decoded_chunks(r, limit):
                room = limit - len(buf)
                if len(chunk) > room:
                    buf += chunk[:room]
                    resp.truncated = True
                    break
                buf += chunk
            resp.body = bytes(buf)
            if resp.truncated:
                resp.error = TOO_LARGE
                resp.error_message = f"the answer is larger than {limit // 1024} KiB (stopped reading)"

    # -- streaming ----------------------------------------------------------------------------------
    async def stream(self, path: str, body: Any, *, auth: bool = True, seconds: Optional[float] = None,
                     max_events: Optional[int] = None, until: Optional[Callable[[SSEEvent], bool]] = None) -> StreamResult:
        """POST ``body`` and read an SSE answer, bounded in events, bytes and seconds."""
        async with self._turn():
            return await self._timed_stream(path, body, auth, seconds, max_events, until)

    async def _timed_stream(self, path: str, body: Any, auth: bool, seconds: Optional[float],
                            max_events: Optional[int], until: Optional[Callable[[SSEEvent], bool]]) -> StreamResult:
        url = self.url(path)
        res = StreamResult("POST", url)
        seconds = seconds or self.timeout
        t0 = time.monotonic()
        self.requests += 1
        self._stream_seconds = seconds
        try:
            await asyncio.wait_for(self._stream(res, url, body, auth, max_events or self.sse_max_events, until), timeout=seconds)
        except asyncio.CancelledError:
            raise
        except SSELineTooLong as exc:
            res.ended, res.error, res.error_message = "line_too_long", OTHER, str(exc)
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            kind, msg = classify(exc)
            res.error, res.error_message = kind, msg
            res.ended = {TIMEOUT: "timeout", RESET: "reset"}.get(kind, "error")
            if kind == TIMEOUT:
                res.error_message = f"the stream did not end within {seconds:g} s ({len(res.events)} events read)"
        res.elapsed = time.monotonic() - t0
        self.log.append(("POST", path, res.status, res.elapsed))
        return res

    async def _stream(self, res: StreamResult, url: str, body: Any, auth: bool, max_events: int,
                      until: Optional[Callable[[SSEEvent], bool]]) -> None:
        content = json.dumps(body).encode()
        extra = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        async with self._follow(res, "POST", url, content, auth, extra) as r:
            if r is None:
                res.ended = "redirect" if res.redirect_to else "error"
                return
            if not (200 <= r.status_code < 300) or "event-stream" not in res.content_type:
                # an error JSON, HTML, or a non-streamed answer: keep a capped body
                buf = bytearray()
                async for chunk in decoded_chunks(r, self.json_limit):
                    buf += chunk[: self.json_limit - len(buf)]
                    if len(buf) >= self.json_limit:
                        break
                res.body = bytes(buf)
                res.bytes_read = len(buf)
                res.ended = "not_sse"
                return
            parser = SSEParser()
            deadline = time.monotonic() + (self._stream_seconds or self.timeout)
            async for chunk in decoded_chunks(r, self.sse_max_bytes):
                res.bytes_read += len(chunk)
                if time.monotonic() > deadline:  # a fast, endless stream must not outlive its deadline
                    raise asyncio.TimeoutError()
                for ev in parser.feed(chunk):
                    res.events.append(ev)
                    res.last_event_at = time.monotonic()
                    if ev.is_done:
                        res.done = True
                        res.ended = "done"
                        return
                    if until is not None and until(ev):
                        res.ended = "until"
                        return
                    if len(res.events) >= max_events:
                        res.ended = "max_events"
                        return
                if res.bytes_read >= self.sse_max_bytes:
                    res.ended = "max_bytes"
                    return
            for ev in parser.close():
                res.events.append(ev)
                if ev.is_done:
                    res.done = True
            res.ended = "done" if res.done else "eof"
            return
