"""The defensive HTTP layer: caps, deadlines, tolerant decoding, error classes, redirects and the API key."""

from __future__ import annotations

import asyncio
import socket
import time


from gptoss_doctor.net import http as H
from tests.hostile import closed_port, hostile, recorder, redirecting


def run(coro):
    return asyncio.run(coro)


async def _get(url, path="/v1/models", **kw):
    async with H.Client(url, **kw) as c:
        return await c.get(path)


def test_refused_is_classified():
    r = run(_get(f"http://127.0.0.1:{closed_port()}", timeout=2))
    assert r.error == H.REFUSED and not r.answered


def test_dns_failure_is_classified():
    r = run(_get("http://no-such-host.invalid", timeout=3))
    assert r.error == H.DNS, r.error_message


def test_tls_error_is_classified():
    """An https:// client meeting a plain-HTTP server (which answers the ClientHello with text)."""
    import threading

    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(4)
    port = lsock.getsockname()[1]

    def serve():
        conn, _ = lsock.accept()
        conn.recv(1024)
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        conn.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        r = run(_get(f"https://127.0.0.1:{port}", timeout=3))
    finally:
        t.join(timeout=3)
        lsock.close()
    assert r.error == H.TLS, r.error_message


def test_total_deadline_beats_slow_drip():
    with hostile("slow_drip") as srv:
        t = time.monotonic()
        r = run(_get(srv.url, timeout=1))
        assert time.monotonic() - t < 3
    assert r.error == H.TIMEOUT and r.status == 200  # headers came, the body never finished


def test_blackhole_times_out():
    with hostile("blackhole") as srv:
        r = run(_get(srv.url, timeout=0.5))
    assert r.error == H.TIMEOUT and not r.answered


def test_gigabyte_body_is_capped_not_buffered():
    with hostile("gigabyte") as srv:
        t = time.monotonic()
        r = run(_get(srv.url, timeout=5))
        assert time.monotonic() - t < 5
    assert r.truncated and r.error == H.TOO_LARGE
    assert len(r.body) == H.JSON_LIMIT
    assert r.json() is None  # never parses a truncated body


def test_invalid_utf8_and_non_object_json():
    with hostile("invalid_utf8") as srv:
        r = run(_get(srv.url))
    assert r.ok and "\ufffd" in r.text
    assert r.json_object()["data"][0]["id"] == "openai/gpt-oss-20b"
    with hostile("not_object") as srv:
        r = run(_get(srv.url))
    assert r.ok and r.json() == [1, 2, 3] and r.json_object() is None
    with hostile("html") as srv:
        r = run(_get(srv.url))
    assert r.ok and r.json() is None and r.content_type == "text/html"


def test_endless_sse_is_bounded_in_events():
    async def go(url):
        async with H.Client(url, timeout=10, sse_max_events=300) as c:
            return await c.stream("/v1/chat/completions", {"stream": True})

    with hostile("endless_sse") as srv:
        res = run(go(srv.url))
    assert res.ended == "max_events" and len(res.events) == 300 and not res.done


def test_endless_sse_is_bounded_in_seconds():
    async def go(url):
        async with H.Client(url, timeout=10, sse_max_events=10 ** 9, sse_max_bytes=10 ** 12) as c:
            return await c.stream("/v1/chat/completions", {"stream": True}, seconds=0.5)

    with hostile("endless_sse") as srv:
        t = time.monotonic()
        res = run(go(srv.url))
        assert time.monotonic() - t < 3
    assert res.ended == "timeout" and res.events  # what arrived is kept


def test_reset_mid_stream():
    async def go(url):
        async with H.Client(url, timeout=5) as c:
            return await c.stream("/v1/chat/completions", {"stream": True})

    with hostile("reset_mid_stream") as srv:
        res = run(go(srv.url))
    assert res.ended == "reset" and len(res.events) == 3


def test_cross_host_redirect_is_not_followed_and_key_not_sent():
    with recorder(host="localhost") as other:
        with redirecting(lambda: other.url) as srv:
            r = run(_get(srv.url, api_key="sk-secret-123", timeout=3))
            assert srv.requests[0]["headers"].get("authorization") == "Bearer sk-secret-123"
        assert r.status == 307 and r.redirect_to.startswith(other.url)
        assert all("authorization" not in q["headers"] for q in other.requests)
        assert not other.requests  # never followed at all


def test_same_origin_redirect_is_followed_with_the_key():
    with redirecting(lambda: "", same_origin_path="/api") as srv:
        r = run(_get(srv.url, api_key="sk-secret-123", timeout=3))
        assert r.ok and r.json_object()["data"]
        assert [q["path"] for q in srv.requests] == ["/v1/models", "/api/v1/models"]
        assert all(q["headers"].get("authorization") == "Bearer sk-secret-123" for q in srv.requests)


def test_classify_plain_exceptions():
    assert H.classify(ConnectionRefusedError(111, "Connection refused"))[0] == H.REFUSED
    assert H.classify(socket.gaierror(-2, "Name or service not known"))[0] == H.DNS
    assert H.classify(asyncio.TimeoutError())[0] == H.TIMEOUT
    assert H.classify(ConnectionResetError(104, "Connection reset by peer"))[0] == H.RESET
