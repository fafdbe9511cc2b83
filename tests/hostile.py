"""Hostile and broken HTTP servers on real sockets (127.0.0.1, port 0) for robustness tests of ``check``.

    with hostile("endless_sse") as srv:
        srv.url, srv.requests  # requests: [{"method", "path", "headers", "body"}]

Each server speaks just enough HTTP/1.1 (one request per connection, then close)
to misbehave in one precise way. Streams stop when the server is stopped.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
import time
from typing import Callable, Iterator, Optional

MODELS = {"object": "list", "data": [{"id": "openai/gpt-oss-20b", "object": "model", "created": 1754400000,
                                      "owned_by": "vllm", "root": "openai/gpt-oss-20b", "parent": None,
                                      "max_model_len": 131072}]}
CHUNK = ("data: " + json.dumps({"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "openai/gpt-oss-20b",
                                "choices": [{"index": 0, "delta": {"content": "la "}, "finish_reason": None}]}) + "\n\n").encode()


class Conn:
    def __init__(self, server: "HostileServer", sock: socket.socket, method: str, path: str, headers: dict, body: bytes):
        self.server, self.sock, self.method, self.path, self.headers, self.body = server, sock, method, path, headers, body

    @property
    def stopped(self) -> bool:
        return self.server.stopped.is_set()

    def json_body(self) -> dict:
        try:
            obj = json.loads(self.body or b"{}")
            return obj if isinstance(obj, dict) else {}
        except ValueError:
            return {}

    def head(self, status: int = 200, headers: Optional[dict] = None, length: Optional[int] = None) -> None:
        lines = [f"HTTP/1.1 {status} X", "Connection: close", "Server: hostile"]
        for k, v in (headers or {}).items():
            lines.append(f"{k}: {v}")
        if length is not None:
            lines.append(f"Content-Length: {length}")
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    def send(self, body: bytes, status: int = 200, content_type: str = "application/json", headers: Optional[dict] = None) -> None:
        self.head(status, {"Content-Type": content_type, **(headers or {})}, len(body))
        self.sock.sendall(body)

    def json(self, obj, status: int = 200) -> None:
        self.send(json.dumps(obj).encode(), status)

    def reset(self) -> None:
        """Abort the connection with a TCP RST."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()


Handler = Callable[[Conn], None]


class HostileServer:
    def __init__(self, handler: Handler, host: str = "127.0.0.1"):
        self.handler = handler
        self.requests: list[dict] = []
        self.stopped = threading.Event()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(64)
        self._sock.settimeout(0.1)
        self.port = self._sock.getsockname()[1]
        self.url = f"http://{host}:{self.port}"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._threads: list[threading.Thread] = []

    def start(self) -> "HostileServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopped.set()
        self._thread.join(timeout=5)
        for t in self._threads:
            t.join(timeout=2)
        self._sock.close()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                sock, _ = self._sock.accept()
            except (socket.timeout, OSError):
                continue
            t = threading.Thread(target=self._one, args=(sock,), daemon=True)
            self._threads.append(t)
            t.start()

    def _one(self, sock: socket.socket) -> None:
        sock.settimeout(5)
        try:
            greeting = getattr(self.handler, "greeting", None)
            if greeting:  # protocols whose server speaks first (SSH, SMTP …)
                sock.sendall(greeting)
            data = b""
            while b"\r\n\r\n" not in data and len(data) < 65536:
                chunk = sock.recv(4096)
                if not chunk:
                    return
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path = lines[0].split(" ")[:2]
            headers = {}
            for line in lines[1:]:
                k, _, v = line.partition(":")
                headers[k.strip().lower()] = v.strip()
            n = int(headers.get("content-length") or 0)
            while len(body) < n:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                body += chunk
            self.requests.append({"method": method, "path": path, "headers": headers, "body": body})
            self.handler(Conn(self, sock, method, path.split("?")[0], headers, body))
        except (OSError, ValueError):
            pass
        finally:
            try:
                sock.close()
            except OSError:
                pass


# -- behaviours ---------------------------------------------------------------------------------

EVIL = "gpt-oss-20b\x1b[2J\x1b]0;pwned\x07\r\x1b[K\u2713 all good\n## Injected </details><img src=x onerror=alert(1)>"


_BOMB: list[bytes] = []


def _bomb() -> bytes:
    """256 MiB of zeros, gzip-compressed once (~250 KiB on the wire)."""
    if not _BOMB:
        import zlib

        z = zlib.compressobj(6, zlib.DEFLATED, 31)
        block = b"\0" * (1 << 20)
        _BOMB.append(b"".join(z.compress(block) for _ in range(256)) + z.flush())
    return _BOMB[0]


def ssh_banner(c: Conn) -> None:
    """An SSH server on the port: its banner at connect, then silence."""
    c.server.stopped.wait(30)


ssh_banner.greeting = b"SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13\r\n"


def huge_headers(c: Conn) -> None:
    """A response whose headers are larger than any client accepts."""
    try:
        c.sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Junk: " + b"a" * (2 << 20) + b"\r\n\r\n{}")
    except OSError:
        pass


def redirect_loop(c: Conn) -> None:
    """Every path redirects to itself."""
    c.head(302, {"Location": c.path}, 0)


def gzip_bomb(c: Conn) -> None:
    """Every path: a JSON content type, Content-Encoding gzip, and a body that inflates to 256 MiB."""
    body = _bomb()
    c.head(200, {"Content-Type": "application/json", "Content-Encoding": "gzip"}, len(body))
    try:
        c.sock.sendall(body)
    except OSError:
        pass


def fast_endless_sse(c: Conn) -> None:
    """Valid chat chunks as fast as the socket takes them, never [DONE]."""
    c.head(200, {"Content-Type": "text/event-stream"})
    block = CHUNK * 512
    while not c.stopped:
        try:
            c.sock.sendall(block)
        except OSError:
            return


def evil_names(c: Conn) -> None:
    """A server whose model id and error texts carry terminal escapes, a newline, Markdown and HTML."""
    if c.path == "/v1/models":
        c.json({"object": "list", "data": [{"id": EVIL, "object": "model", "owned_by": "vllm",
                                            "max_model_len": 131072}]})
    elif c.path == "/version":
        c.json({"version": "0.11.0\x1b[31m"})
    elif c.path in ("/v1/chat/completions", "/v1/responses"):
        c.json({"error": {"message": "boom \x1b[2J\x1b]0;title\x07 <script>x</script>", "type": "x", "code": 500}}, 500)
    else:
        c.json({"detail": "Not Found"}, 404)


C1_NAME = "gpt-oss-20b\u009b2J\u009d0;pwned\u0007\u202etxt.exe\u2066x\u0085y"


def c1_names(c: Conn) -> None:
    """A server whose model id carries C1 controls (U+009B CSI, U+009D OSC, U+0085 NEL) and bidi overrides, which
    8-bit terminals obey as ESC sequences do."""
    if c.path == "/v1/models":
        c.json({"object": "list", "data": [{"id": C1_NAME, "object": "model", "owned_by": "vllm",
                                            "max_model_len": 131072}]})
    elif c.path == "/version":
        c.json({"version": "0.11.0\u009b31m\u202e"})
    else:
        c.json({"detail": "Not Found"}, 404)


def _llm_or(fn: Handler) -> Handler:
    """A server whose discovery is a plain vLLM-like one; ``fn`` handles the chat/responses requests."""
    def handler(c: Conn) -> None:
        if c.path == "/v1/models":
            c.json(MODELS)
        elif c.path == "/version":
            c.json({"version": "0.11.0"})
        elif c.path == "/health":
            c.send(b"", 200)
        elif c.path in ("/v1/chat/completions", "/v1/responses"):
            fn(c)
        else:
            c.json({"error": {"message": "Not Found", "type": "Not Found", "param": None, "code": 404}}, 404)
    return handler


def endless_sse(c: Conn) -> None:
    if not c.json_body().get("stream"):
        c.json({"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi", "reasoning": "r"},
                             "finish_reason": "stop"}]})
        return
    c.head(200, {"Content-Type": "text/event-stream"})
    while not c.stopped:
        c.sock.sendall(CHUNK * 20)
        time.sleep(0.001)


def slow_stream(c: Conn) -> None:
    """A slow CPU server: plain answers at once, streams at three chunks a second for 20 seconds."""
    if not c.json_body().get("stream"):
        c.json({"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi", "reasoning": "r"},
                             "finish_reason": "stop"}]})
        return
    c.head(200, {"Content-Type": "text/event-stream"})
    for _ in range(60):
        if c.stopped:
            return
        try:
            c.sock.sendall(CHUNK)
        except OSError:
            return
        time.sleep(0.33)


def endless_line(c: Conn) -> None:
    """An SSE stream that is one never-ending line (no newline ever)."""
    if not c.json_body().get("stream"):
        c.json({"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi", "reasoning": "r"},
                             "finish_reason": "stop"}]})
        return
    c.head(200, {"Content-Type": "text/event-stream"})
    c.sock.sendall(b"data: ")
    while not c.stopped:
        try:
            c.sock.sendall(b"x" * 65536)
        except OSError:
            return


def gigabyte(c: Conn) -> None:
    """Every path: a 1 GiB body, streamed lazily (never materialised)."""
    c.head(200, {"Content-Type": "application/json"}, 1 << 30)
    block = b"[" + b"1," * 32768
    sent = 0
    c.sock.sendall(b"[")
    while sent < (1 << 30) and not c.stopped:
        try:
            c.sock.sendall(block)
        except OSError:
            return
        sent += len(block)


def gigabyte_chat(c: Conn) -> None:
    gigabyte(c)


def invalid_utf8(c: Conn) -> None:
    if c.path == "/v1/models":
        c.send(b'{"object":"list","data":[{"id":"openai/gpt-oss-20b","object":"model","owned_by":"vllm",'
               b'"max_model_len":131072,"note":"bad \xff\xfe\xc3 bytes"}]}')
    elif c.path == "/version":
        c.send(b'{"version":"0.11.0\xff"}')
    elif c.path == "/v1/chat/completions":
        if c.json_body().get("stream"):
            c.head(200, {"Content-Type": "text/event-stream"})
            c.sock.sendall(b'data: {"choices":[{"index":0,"delta":{"content":"caf\xc3"}}]}\n\n'
                           b'data: {"choices":[{"index":0,"delta":{"content":"\xa9 \xff"},"finish_reason":"stop"}]}\n\n'
                           b"data: [DONE]\n\n")
        else:
            c.send(b'{"choices":[{"index":0,"message":{"role":"assistant","content":"hello \xff\xfe world",'
                   b'"reasoning":"r\xc3"},"finish_reason":"stop"}]}')
    else:
        c.send(b"\xff\xfe\xfd not found", 404, "text/plain")


def not_object(c: Conn) -> None:
    bodies = {"/v1/models": b"[1, 2, 3]", "/version": b'"0.11.0"', "/health": b"null"}
    c.send(bodies.get(c.path, b"42"), 200)


def html(c: Conn) -> None:
    c.send(b"<!doctype html><html><head><title>Welcome to nginx!</title></head><body>hi</body></html>", 200,
           "text/html; charset=utf-8")


def slow_drip(c: Conn) -> None:
    """Headers at once, then one byte every 0.2 s, forever."""
    c.head(200, {"Content-Type": "application/json"}, 1 << 20)
    while not c.stopped:
        try:
            c.sock.sendall(b" ")
        except OSError:
            return
        time.sleep(0.2)


def blackhole(c: Conn) -> None:
    """Accept, read the request, never answer."""
    while not c.stopped:
        time.sleep(0.05)


def reset_mid_stream(c: Conn) -> None:
    if not c.json_body().get("stream"):
        c.json({"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi", "reasoning": "r"},
                             "finish_reason": "stop"}]})
        return
    c.head(200, {"Content-Type": "text/event-stream"})
    c.sock.sendall(CHUNK * 3 + b'data: {"choices":[{"index":0,"delta":{"content":"tru')
    time.sleep(0.05)
    c.reset()


def echo_key(c: Conn) -> None:
    """Echoes the Authorization header back in every error (a leak the doctor must redact)."""
    auth = c.headers.get("authorization", "")
    if c.path == "/v1/models":
        c.json(MODELS)
    else:
        c.json({"error": {"message": f"bad request, you sent {auth}", "type": "BadRequestError", "code": 500}}, 500)


def bad_tokenizer(c: Conn) -> None:
    """A vLLM-like server whose tokenizer splits the Harmony specials into ordinary BPE pieces."""
    if c.path == "/tokenize":
        c.json({"count": 9, "max_model_len": 131072, "tokens": [27, 91, 5236, 91, 29, 27, 91, 4631, 91]})
    elif c.path == "/detokenize":
        c.json({"prompt": ""})
    else:
        _llm_or(lambda cc: cc.json({"error": "no"}, 500))(c)


def reset_always(c: Conn) -> None:
    """Read the request, then abort the connection (no answer at all)."""
    c.reset()


def llama_no_jinja(c: Conn) -> None:
    """llama-server started without --jinja: requests with tools fail (HTTP 500)."""
    if c.path == "/v1/models":
        c.json({"object": "list", "data": [{"id": "gpt-oss-20b", "object": "model", "owned_by": "llamacpp",
                                            "meta": {"n_ctx_train": 131072}}]})
    elif c.path == "/v1/chat/completions" and c.json_body().get("tools"):
        c.json({"error": {"code": 500, "message": "tools param requires --jinja flag", "type": "server_error"}}, 500)
    elif c.path == "/v1/chat/completions":
        c.json({"choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello!", "reasoning_content": "r"},
                             "finish_reason": "stop"}]})
    else:
        c.json({"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}}, 404)


BEHAVIOURS: dict[str, Handler] = {
    "llama_no_jinja": llama_no_jinja,
    "reset_always": reset_always,
    "bad_tokenizer": bad_tokenizer,
    "endless_sse": _llm_or(endless_sse),
    "endless_line": _llm_or(endless_line),
    "gigabyte": gigabyte,
    "gigabyte_chat": _llm_or(gigabyte_chat),
    "invalid_utf8": invalid_utf8,
    "not_object": not_object,
    "html": html,
    "slow_drip": slow_drip,
    "slow_stream": _llm_or(slow_stream),
    "blackhole": blackhole,
    "reset_mid_stream": _llm_or(reset_mid_stream),
    "echo_key": echo_key,
    "evil_names": evil_names,
    "c1_names": c1_names,
    "gzip_bomb": gzip_bomb,
    "ssh_banner": ssh_banner,
    "huge_headers": huge_headers,
    "redirect_loop": redirect_loop,
    "fast_endless_sse": _llm_or(fast_endless_sse),
}


@contextlib.contextmanager
def hostile(behaviour: str, host: str = "127.0.0.1") -> Iterator[HostileServer]:
    srv = HostileServer(BEHAVIOURS[behaviour], host=host).start()
    try:
        yield srv
    finally:
        srv.stop()


@contextlib.contextmanager
def redirecting(to_url_of: Callable[[], str], same_origin_path: Optional[str] = None) -> Iterator[HostileServer]:
    """Redirects every request: to another server (``to_url_of()`` + path), or within itself to ``same_origin_path``."""
    def handler(c: Conn) -> None:
        if same_origin_path is not None:
            if c.path.startswith(same_origin_path):
                inner = c.path[len(same_origin_path):] or "/"
                return _llm_or(lambda cc: cc.json({"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"},
                                                                "finish_reason": "stop"}]}))(
                    Conn(c.server, c.sock, c.method, inner, c.headers, c.body))
            c.head(307, {"Location": same_origin_path + c.path}, 0)
            return
        c.head(307, {"Location": to_url_of() + c.path}, 0)

    srv = HostileServer(handler).start()
    try:
        yield srv
    finally:
        srv.stop()


@contextlib.contextmanager
def recorder(host: str = "localhost") -> Iterator[HostileServer]:
    """A server on another host name that records headers and answers like vLLM."""
    srv = HostileServer(_llm_or(lambda c: c.json({"choices": []})), host=host).start()
    try:
        yield srv
    finally:
        srv.stop()


def closed_port() -> int:
    """A port that refuses connections (bound, then closed)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port
