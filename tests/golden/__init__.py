"""Golden documents: the JSON (and a few human/markdown outputs) the CLI printed before the layout changed.

``assert_golden(name, text)`` compares a normalised output with ``tests/golden/<name>``. Set
``GPTOSS_DOCTOR_GOLDEN_UPDATE=1`` to rewrite the files after an intended change (review the diff); a missing file
is a failure, never silently created.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
KNOWLEDGE = HERE / "knowledge"  # a frozen copy of some entries: goldens must not move when the KB grows

_PORT = re.compile(r"(127\.0\.0\.1|localhost):\d+")
_TIME = re.compile(r"\b\d+(?:\.\d+)? ?(?:ms|s)\b")
_SHA = re.compile(r"\b[0-9a-f]{40}\b")
_IDS = [(re.compile(r'(\\"id\\":\\")(?:chatcmpl-|resp_|msg_|call_)?(?:[0-9a-f]{16,}|[0-9a-f-]{36})'), r"\1<id>"),  # ids quoted in evidence
        (re.compile(r'(\\"created\\":)\d+'), r"\1<time>"),
        (re.compile(r"(\('127\.0\.0\.1', )\d+\)"), r"\1PORT)"),
        (re.compile(r"/[^\s\"']*/(o200k_base\.tiktoken)"), r"<vocab>/\1")]  # where ../shared sits on this machine


def normalise(text: str, subs: dict[str, str] | None = None) -> str:
    for old, new in (subs or {}).items():
        text = text.replace(old, new)
    text = _PORT.sub(r"\1:PORT", text)
    text = _SHA.sub("<sha>", text)
    for rx, repl in _IDS:
        text = rx.sub(repl, text)
    return _TIME.sub("<t>", text)


def normalise_json(doc: object, subs: dict[str, str] | None = None) -> str:
    def walk(x):
        if isinstance(x, dict):
            return {k: (0 if k in ("seconds", "elapsed", "ms") and isinstance(v, (int, float)) else walk(v))
                    for k, v in x.items()}
        if isinstance(x, list):
            return [walk(v) for v in x]
        return x

    return normalise(json.dumps(walk(doc), indent=1, ensure_ascii=False, sort_keys=True), subs) + "\n"


def assert_golden(name: str, text: str) -> None:
    path = HERE / name
    if os.environ.get("GPTOSS_DOCTOR_GOLDEN_UPDATE") == "1":
        path.write_text(text, encoding="utf-8")
        return
    assert path.is_file(), f"golden file {name} is missing (GPTOSS_DOCTOR_GOLDEN_UPDATE=1 writes it)"
    want = path.read_text(encoding="utf-8")
    if text != want and os.environ.get("GPTOSS_DOCTOR_GOLDEN_KEEP"):
        path.with_suffix(path.suffix + ".new").write_text(text, encoding="utf-8")
    assert text == want, f"{name} changed; if intended, rerun with GPTOSS_DOCTOR_GOLDEN_UPDATE=1 and review the diff"
