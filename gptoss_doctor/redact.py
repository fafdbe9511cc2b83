"""The one redactor: API keys and Hugging Face tokens never reach any output, tracebacks included.

Secrets are the values of the variables that hold them (HF_TOKEN, OPENAI_API_KEY, …), any key the user passed on
the command line (registered with ``remember``), credentials inside URLs, Bearer headers, and token shapes that are
secrets wherever they appear (``hf_…``, ``sk-…``).
"""

from __future__ import annotations

import os
import re
from typing import Any

from gptoss_doctor import rx as _rx

SECRET_VARS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "OPENAI_API_KEY", "LITELLM_MASTER_KEY", "LITELLM_API_KEY",
               "ANTHROPIC_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY", "GITHUB_TOKEN")
SHAPES = [
    (_rx.compile(r"(?i)(bearer\s+)[A-Za-z0-9_\-.=/+]{6,}"), r"\1***"),
    # Basic credentials: user:password in base64 (a URL's user:password@ sent as a header, echoed back by a server)
    (_rx.compile(r"(?i)(basic\s+)([A-Za-z0-9+/]{4,}={0,2})"), lambda m: m.group(1) + "***" if _is_basic(m.group(2))
     else m.group(0)),
    (_rx.compile(r"//[^/@\s]*@"), "//***@"),  # user:password@ in URLs
    (_rx.compile(r"\bhf_[A-Za-z0-9]{20,}\b"), "hf_***"),
    (_rx.compile(r"\bsk-(?:proj-|live-|ant-)?[A-Za-z0-9_\-]{16,}\b"), "sk-***"),
]
_REMEMBERED: set[str] = set()


def _is_basic(value: str) -> bool:
    """Is ``value`` base64 of ``user:password`` (and not a word after "basic" in prose)?"""
    import base64
    import binascii

    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in raw


def remember(secret: str | None) -> None:
    """Register a secret given on the command line (an --api-key value) for every later redaction."""
    if secret and len(secret) >= 3:
        _REMEMBERED.add(secret)


def secrets() -> list[str]:
    vals = {os.environ.get(v, "") for v in SECRET_VARS} | _REMEMBERED
    return sorted((v for v in vals if v and len(v) >= 3), key=len, reverse=True)


def redact(obj: Any, extra: list[str] | None = None) -> Any:
    """``obj`` (text, or lists / dicts of it) without secrets."""
    known = sorted({*secrets(), *(s for s in (extra or []) if s and len(s) >= 3)}, key=len, reverse=True)
    return _walk(obj, known)


def _walk(obj: Any, known: list[str]) -> Any:
    if isinstance(obj, str):
        for s in known:
            obj = obj.replace(s, "***")
        for rx, rep in SHAPES:
            obj = rx.sub(rep, obj)
        return obj
    if isinstance(obj, list):
        return [_walk(x, known) for x in obj]
    if isinstance(obj, tuple):
        return tuple(_walk(x, known) for x in obj)
    if isinstance(obj, dict):
        return {k: _walk(v, known) for k, v in obj.items()}
    return obj


# secrets in launch commands (scan): flag values and KEY=value assignments, shown as <redacted>. A secret flag is any
# flag whose name ends in api-key, token, secret, password or master-key (--api-key, --admin-api-key, --hf-token,
# --client-secret; not --max-tokens or --tokenizer); a secret variable likewise, in any case (HF_TOKEN, hf_token),
# and Authorization (its value is a scheme and a credential: "Authorization=Bearer …").
_SECRET_NAME = r"(?:api[-_]?key|token|secret|password|passwd|master[-_]?key)"
SECRET_FLAG_RE = _rx.compile(rf"--[a-z0-9][a-z0-9_-]*?{_SECRET_NAME}|--{_SECRET_NAME}", re.I)
_VALUE = r"(?:bearer|basic|token)\s+[^\s\"']+|\"[^\"]*\"|'[^']*'|[^\s\"']+"
SECRET_ARG_RE = _rx.compile(rf"((?<![\w-])(?:{SECRET_FLAG_RE.pattern})(?:=|\s+))({_VALUE})", re.I)
SECRET_ASSIGN_RE = _rx.compile(rf"(\b(?:(?:[A-Za-z_][A-Za-z0-9_]*?)?{_SECRET_NAME}|authorization)=)({_VALUE})", re.I)


def is_secret_flag(arg: str) -> bool:
    """Is ``arg`` (``--admin-api-key``, ``--hf-token=…``) a flag whose value is a secret?"""
    return bool(SECRET_FLAG_RE.fullmatch(arg.partition("=")[0]))


def redact_command_line(text: str) -> str:
    """A launch line without secret values (flags such as --api-key, KEY=value assignments, URL credentials,
    Bearer headers and token shapes)."""
    text = SECRET_ARG_RE.sub(lambda m: m.group(1) + "<redacted>", text)
    return redact(SECRET_ASSIGN_RE.sub(lambda m: m.group(1) + "<redacted>", text))


def redact_argv(argv: list[str]) -> list[str]:
    out, hide = [], False
    for a in argv:
        if hide:
            out.append("<redacted>")
            hide = False
            continue
        hide = is_secret_flag(a) and "=" not in a
        out.append(redact_command_line(a))
    return out
