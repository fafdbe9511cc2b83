"""check --request: the user's own failing request, read from a JSON body, a ``curl`` command line or one entry of
a HAR file. Everything in it is untrusted text: capped, parsed without running anything, and the Authorization
header (and any header whose name says key, token, secret or cookie) is never taken from it — the doctor's own
``--api-key`` is what goes to the server, and only to the target named on the command line."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional
from urllib.parse import urlsplit

from gptoss_doctor import rx as _rx
from gptoss_doctor.errors import UsageError

MAX_REQUEST = 8 << 20
SECRET_HEADER_RE = _rx.compile(r"authorization|api[-_]?key|token|secret|cookie|password", re.I)
CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
RESPONSES_PATHS = ("/v1/responses", "/responses")
DATA_FLAGS = ("-d", "--data", "--data-raw", "--data-binary", "--data-ascii", "--json")


@dataclass
class UserRequest:
    """The request to replay: which API, the path on the target, the JSON body, the headers it may carry."""

    api: str  # chat | responses
    path: str
    body: dict
    headers: dict[str, str] = field(default_factory=dict)
    source: str = ""  # "request.json", "curl command line", "HAR entry 3 of 12"
    dropped_headers: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """What will be sent, in one line (never a header value)."""
        b = self.body
        bits = [f"POST {self.path}", f"model {b.get('model')!r}" if b.get("model") else "no model (the served one)"]
        if self.api == "chat":
            bits.append(f"{len(b.get('messages') or [])} message(s)")
        else:
            bits.append("input " + ("text" if isinstance(b.get("input"), str) else f"{len(b.get('input') or [])} item(s)"))
        if b.get("tools"):
            bits.append(f"{len(b['tools'])} tool(s)")
        if b.get("response_format") or (isinstance(b.get("text"), dict) and b["text"].get("format")):
            bits.append("a response format")
        bits.append("sent twice: stream false, then stream true")
        if self.headers:
            bits.append("headers " + ", ".join(sorted(self.headers)))
        if self.dropped_headers:
            bits.append("not sent: " + ", ".join(sorted(self.dropped_headers)))
        return "; ".join(bits)


def _read(path: str) -> str:
    import sys

    if path == "-":
        data = sys.stdin.buffer.read(MAX_REQUEST + 1)
    else:
        from gptoss_doctor.fsread import Unreadable, read_capped

        if Path(path).is_dir():
            raise UsageError(f"{path} is a folder; give a request file (JSON body, curl command line or HAR)")
        try:
            data = read_capped(path, MAX_REQUEST)
        except Unreadable as exc:
            raise UsageError(f"{path}: {exc}") from None
    if len(data) > MAX_REQUEST:
        raise UsageError(f"{path} is larger than {MAX_REQUEST >> 20} MiB: not a request")
    if b"\0" in data[:8192]:
        raise UsageError(f"{path} is binary: not a request")
    return data.decode("utf-8", "replace")


def _kind(path: str, body: dict) -> tuple[str, str]:
    p = path.rstrip("/")
    if any(p.endswith(x) for x in RESPONSES_PATHS) or ("input" in body and "messages" not in body):
        return "responses", "/v1/responses" if not p.endswith(RESPONSES_PATHS) else p
    if any(p.endswith(x) for x in CHAT_PATHS) or "messages" in body:
        return "chat", "/v1/chat/completions" if not p.endswith(CHAT_PATHS) else p
    raise UsageError("the request is neither a chat completion (messages) nor a Responses request (input)",
                     hint="give the JSON body of a POST /v1/chat/completions or /v1/responses request")


def _body(text: str, where: str) -> dict:
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):
        raise UsageError(f"{where}: the request body is not JSON") from None
    if not isinstance(body, dict):
        raise UsageError(f"{where}: the request body is not a JSON object")
    return body


def _headers(pairs: list[tuple[str, str]], req: UserRequest) -> None:
    for k, v in pairs:
        k = k.strip()
        if not k or k.lower() in ("content-type", "content-length", "host", "accept", "accept-encoding", "connection",
                                  "user-agent"):
            continue
        if SECRET_HEADER_RE.search(k):
            req.dropped_headers.append(k)
            continue
        req.headers[k] = v.strip()[:1000]


def from_curl(text: str) -> UserRequest:
    joined = re.sub(r"\\\r?\n", " ", text)
    try:
        argv = shlex.split(joined, comments=False)
    except ValueError as exc:
        raise UsageError(f"cannot read the curl command line: {exc}") from None
    if not argv or argv[0] != "curl":
        raise UsageError("not a curl command line")
    url, data, pairs = None, None, []
    i = 1
    while i < len(argv):
        a = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if a in DATA_FLAGS or any(a.startswith(f + "=") for f in DATA_FLAGS if f.startswith("--")):
            val = nxt if a in DATA_FLAGS else a.split("=", 1)[1]
            if val is not None and val.startswith("@"):
                raise UsageError("the curl command reads its body from a file (@…): give that JSON file to --request")
            data = val
            i += 2 if a in DATA_FLAGS else 1
            continue
        if a in ("-H", "--header") and nxt is not None:
            k, _, v = nxt.partition(":")
            pairs.append((k, v))
            i += 2
            continue
        if a in ("-X", "--request", "-u", "--user", "-o", "--output", "--max-time", "-m", "--connect-timeout") and nxt:
            if a in ("-u", "--user"):
                pairs.append(("authorization", "basic"))  # credentials are never replayed
            i += 2
            continue
        if not a.startswith("-") and url is None:
            url = a
        i += 1
    if data is None:
        raise UsageError("the curl command line has no body (-d / --data / --json)")
    body = _body(data, "curl")
    path = urlsplit(url or "").path or ""
    api, path = _kind(path, body)
    req = UserRequest(api, path, body, source="curl command line")
    _headers(pairs, req)
    if url and urlsplit(url).netloc:
        req.notes.append(f"sent to the target given to check, not to {urlsplit(url).hostname} (the curl URL's host)")
    return req


def from_har(doc: dict) -> UserRequest:
    entries = ((doc.get("log") or {}).get("entries")) if isinstance(doc.get("log"), dict) else None
    if not isinstance(entries, list):
        raise UsageError("a HAR file needs log.entries")
    hits = []
    for n, e in enumerate(entries, 1):
        r = e.get("request") if isinstance(e, dict) else None
        if isinstance(r, dict) and str(r.get("method", "")).upper() == "POST":
            path = urlsplit(str(r.get("url") or "")).path.rstrip("/")
            if path.endswith(CHAT_PATHS + RESPONSES_PATHS):
                hits.append((n, r))
    if not hits:
        raise UsageError(f"no POST to /v1/chat/completions or /v1/responses among the HAR file's {len(entries)} entries")
    n, r = hits[0]
    text = ((r.get("postData") or {}).get("text")) if isinstance(r.get("postData"), dict) else None
    if not isinstance(text, str):
        raise UsageError(f"HAR entry {n} has no request body (postData.text)")
    body = _body(text, f"HAR entry {n}")
    api, path = _kind(urlsplit(str(r.get("url"))).path, body)
    req = UserRequest(api, path, body, source=f"HAR entry {n} of {len(entries)}")
    _headers([(str(h.get("name", "")), str(h.get("value", ""))) for h in r.get("headers") or [] if isinstance(h, dict)],
             req)
    if len(hits) > 1:
        req.notes.append(f"the HAR file has {len(hits)} such requests: the first ({n}) is replayed")
    return req


def read(path: str) -> UserRequest:
    """The request in ``path`` ('-' for stdin): a JSON body, a curl command line, or a HAR file."""
    text = _read(path).strip()
    where = "stdin" if path == "-" else Path(path).name
    if text.startswith("curl"):
        req = from_curl(text)
    else:
        doc = _body(text, where)
        if "log" in doc and isinstance(doc.get("log"), dict):
            req = from_har(doc)
        else:
            api, p = _kind("", doc)
            req = UserRequest(api, p, doc, source=where)
    req.body.pop("stream", None)
    req.body.pop("stream_options", None)
    return req
