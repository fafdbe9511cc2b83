"""The incremental SSE parser: any split point, any line ending, comments, event names, bad bytes."""

from __future__ import annotations

import json

import pytest

from gptoss_doctor.net.sse import SSELineTooLong, SSEParser, parse_all

# A realistic vLLM tool-call stream (server_apis.md section 1.6) plus a comment, an event name,
# a multi-line data field and non-ASCII text (split inside multibyte characters below).
CHUNKS = [
    {"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
    {"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"reasoning": "Météo à Paris — 😊"}}]},
    {"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"tool_calls": [
        {"id": "chatcmpl-tool-1", "type": "function", "index": 0, "function": {"name": "get_weather", "arguments": "{\"city\":"}}]}}]},
    {"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "function": {"arguments": "\"Paris\"}"}}]}, "finish_reason": "tool_calls"}]},
]


def stream_bytes(eol: str) -> bytes:
    parts = [": keep-alive" + eol]
    for c in CHUNKS:
        parts.append("data: " + json.dumps(c, ensure_ascii=False) + eol + eol)
    parts.append("event: response.output_text.delta" + eol + "data: line one" + eol + "data: line two" + eol + eol)
    parts.append("id: 7" + eol + "retry: 100" + eol + "unknown: x" + eol + "data:no-space" + eol + eol)
    parts.append("data: [DONE]" + eol + eol)
    return "".join(parts).encode("utf-8")


def expected():
    out = [json.dumps(c, ensure_ascii=False) for c in CHUNKS]
    return out + ["line one\nline two", "no-space", "[DONE]"]


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_whole_stream(eol):
    events = parse_all(stream_bytes(eol))
    assert [e.data for e in events] == expected()
    assert events[len(CHUNKS)].event == "response.output_text.delta"
    assert events[len(CHUNKS) + 1].id == "7"
    assert events[-1].is_done


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_split_at_every_byte_offset(eol):
    data = stream_bytes(eol)
    want = expected()
    for cut in range(1, len(data)):
        p = SSEParser()
        got = p.feed(data[:cut]) + p.feed(data[cut:]) + p.close()
        assert [e.data for e in got] == want, f"split at {cut}"


def test_byte_by_byte_and_three_way_splits():
    data = stream_bytes("\r\n")
    p = SSEParser()
    got = []
    for i in range(len(data)):
        got += p.feed(data[i:i + 1])
    got += p.close()
    assert [e.data for e in got] == expected()
    for a in range(1, len(data), 37):
        for b in range(a + 1, len(data), 53):
            p = SSEParser()
            got = p.feed(data[:a]) + p.feed(data[a:b]) + p.feed(data[b:]) + p.close()
            assert [e.data for e in got] == expected()


def test_comments_counted_and_event_without_data_dropped():
    p = SSEParser()
    events = p.feed(b": ping\n\n: ping\n\nevent: lonely\n\ndata: x\n\n")
    assert [e.data for e in events] == ["x"]
    assert events[0].event is None  # the lonely event name does not leak into the next event
    assert p.comments == 2


def test_invalid_utf8_is_replaced_not_raised():
    events = parse_all(b'data: {"content":"caf\xc3"}\n\ndata: \xff\xfe\n\n')
    assert events[0].data == '{"content":"caf\ufffd"}'
    assert events[1].data == "\ufffd\ufffd"


def test_bom_is_dropped_and_last_event_without_blank_line_is_kept():
    events = parse_all(b"\xef\xbb\xbfdata: a\n\ndata: b")
    assert [e.data for e in events] == ["a", "b"]


def test_llama_cpp_error_line_becomes_an_error_event():
    events = parse_all(b'data: {"a":1}\n\nerror: {"code":500,"message":"Failed to parse input"}\n\n')
    assert events[1].event == "error"
    assert json.loads(events[1].data)["code"] == 500


def test_endless_line_is_bounded():
    p = SSEParser(max_line_bytes=1000)
    with pytest.raises(SSELineTooLong):
        for _ in range(100):
            p.feed(b"x" * 100)
