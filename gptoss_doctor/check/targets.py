"""check: the targets as the user typed them, made into base URLs (and shown without credentials)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from gptoss_doctor.errors import UsageError


def normalize_url(raw: str) -> tuple[str, list[str]]:
    """A base URL from user input; notes say what was assumed. Malformed -> UsageError."""
    notes: list[str] = []
    s = raw.strip()
    raw = re.sub(r"^([A-Za-z][A-Za-z0-9+.-]*://)?[^/@\s]*@", r"\1***@", s)  # what messages may show
    if not s or any(c.isspace() for c in s):
        raise UsageError(f"malformed URL {raw!r}", hint="use http://HOST:PORT")
    if "://" not in s:
        s = "http://" + s
        notes.append(f"no scheme in {raw!r}: assuming http://")
    try:
        parts = urlsplit(s)
    except ValueError as exc:  # e.g. "Invalid IPv6 URL" for http://[bad
        raise UsageError(f"malformed URL {raw!r}: {exc}", hint="use http://HOST:PORT") from None
    if parts.scheme not in ("http", "https"):
        raise UsageError(f"unsupported URL scheme in {raw!r}", hint="use http:// or https://")
    try:
        port = parts.port
    except ValueError:
        raise UsageError(f"malformed URL {raw!r}: bad port", hint="use http://HOST:PORT") from None
    if not parts.hostname:
        raise UsageError(f"malformed URL {raw!r}: no host", hint="use http://HOST:PORT")
    try:  # a host name must be encodable: bytes that are not UTF-8, or an invalid IDN, are a usage error
        parts.hostname.encode("idna")
        s.encode("utf-8")
    except (UnicodeError, ValueError):
        shown = raw.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        raise UsageError(f"malformed URL {shown!r}: the host name is not valid", hint="use http://HOST:PORT") from None
    del port
    path = parts.path.rstrip("/")
    for suffix in ("/chat/completions", "/models", "/responses", "/completions"):
        if path.endswith("/v1" + suffix):
            path = path[: -len(suffix)]
    if path.endswith("/v1"):
        path = path[:-3]
        notes.append("dropped the trailing /v1 (the doctor adds the paths itself)")
    return urlunsplit((parts.scheme, parts.netloc, path, "", "")), notes


def public_url(url: str) -> str:
    """The URL without user:password."""
    parts = urlsplit(url)
    if parts.username or parts.password:
        netloc = parts.hostname or ""
        if parts.port:
            netloc += f":{parts.port}"
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return url
