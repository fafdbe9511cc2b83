"""check --save / --compare: a saved report as a baseline, and what changed since ("did this upgrade break tool
calling?"): engine or version, problems that are new, problems that are gone, a slower time to first token.

A problem is a cause (``check.causes``): the same knowledge-base entry, or the same set of checks, is the same
problem in both reports. Baselines are the ``--json`` document plus ``saved_at``; reading one is capped and
validated like any other untrusted file.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from gptoss_doctor.errors import UsageError

MAX_BASELINE = 8 << 20
SLOWER = 2.0  # a time to first token this many times the baseline's (and 500 ms more) is "slower"


@dataclass
class TargetChange:
    url: str
    baseline_url: str
    engine: Optional[tuple[str, str]] = None  # (before, after) "vLLM 0.11.0"
    new: list[dict] = field(default_factory=list)  # causes (the JSON of check.causes.Cause)
    gone: list[dict] = field(default_factory=list)
    slower: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"url": self.url, "baseline_url": self.baseline_url,
                "engine": list(self.engine) if self.engine else None,
                "new": self.new, "gone": self.gone, "slower": self.slower}


@dataclass
class Comparison:
    path: str
    saved_at: str
    targets: list[TargetChange] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)  # targets with no counterpart in the baseline

    @property
    def has_new_problems(self) -> bool:
        return any(t.new for t in self.targets)

    def to_json(self) -> dict:
        return {"baseline": self.path, "saved_at": self.saved_at, "new_problems": self.has_new_problems,
                "targets": [t.to_json() for t in self.targets], "unmatched": self.unmatched}


def save(doc: dict, path: Path) -> None:
    """Write ``doc`` (a check --json payload) with ``saved_at`` atomically to ``path``; an existing file is replaced
    only when it is a saved check report, and a symbolic link is replaced, never followed."""
    if path.is_dir():
        raise UsageError(f"{path} is a folder; give a file name for the baseline")
    if path.exists() and not path.is_symlink():
        try:
            old = _read(path)
        except UsageError:
            raise UsageError(f"{path} exists and is not a saved check report: not overwritten",
                             hint="give another file name") from None
        del old
    payload = {"schema_version": 1, "command": "check", **doc,
               "saved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    from gptoss_doctor.fixconfig.durable import write_durable

    write_durable(path, (json.dumps(payload, indent=1, ensure_ascii=True) + "\n").encode())


def _read(path: Path) -> dict:
    from gptoss_doctor.fsread import Unreadable, read_capped

    try:
        raw = read_capped(path, MAX_BASELINE)
    except Unreadable as exc:
        raise UsageError(f"the baseline {path}: {exc}") from None
    try:
        doc = json.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        raise UsageError(f"{path} is not JSON: not a saved check report") from None
    if not (isinstance(doc, dict) and doc.get("command") == "check" and doc.get("schema_version") == 1
            and isinstance(doc.get("targets"), list)):
        raise UsageError(f"{path} is not a saved check report (save one with: gptoss-doctor check URL --save FILE)")
    return doc


def load(path: Path) -> dict:
    return _read(path)


def _key(cause: dict) -> tuple:
    kb = cause.get("kb") or []
    return ("kb", kb[0]) if kb else ("checks", tuple(sorted(cause.get("checks") or [])))


def _ttft_ms(target: dict) -> Optional[float]:
    for c in target.get("checks") or []:
        if isinstance(c, dict) and c.get("id") == "metrics.ttft" and c.get("status") in ("pass", "warn"):
            m = re.match(r"\s*([\d.]+)\s*(ms|s)\b", str(c.get("detail") or ""))
            if m:
                return float(m.group(1)) * (1 if m.group(2) == "ms" else 1000)
    return None


def _engine(target: dict) -> str:
    e = target.get("engine") or {}
    from gptoss_doctor import engines

    return " ".join(x for x in (engines.label(str(e.get("name") or "unknown")), str(e.get("version") or "")) if x)


def _causes_of(checks: list) -> list[dict]:
    from gptoss_doctor.check.causes import group
    from gptoss_doctor.results import STATUSES, Finding

    keys = ("id", "status", "title", "detail", "fix", "references", "evidence", "kb")
    found = [Finding(**{k: c[k] for k in keys if k in c}) for c in checks
             if isinstance(c, dict) and c.get("status") in STATUSES and isinstance(c.get("id"), str)
             and isinstance(c.get("title"), str)]
    return [c.to_json() for c in group(found)]


def compare(baseline: dict, current: list[dict], path: str) -> Comparison:
    """What changed from ``baseline`` (a saved report) to ``current`` (the targets' JSON of this run)."""
    base_targets = [t for t in baseline.get("targets") or [] if isinstance(t, dict)]
    by_url = {str(t.get("url")): t for t in base_targets}
    comp = Comparison(path=path, saved_at=str(baseline.get("saved_at") or "?"))
    for t in current:
        old = by_url.get(t["url"])
        if old is None and len(base_targets) == 1 and len(current) == 1:
            old = base_targets[0]  # one server before, one now: the same service moved (a new port, a new host)
        if old is None:
            comp.unmatched.append(t["url"])
            continue
        ch = TargetChange(url=t["url"], baseline_url=str(old.get("url")))
        before, after = _engine(old), _engine(t)
        if before != after:
            ch.engine = (before, after)
        old_list = old.get("causes")
        if not isinstance(old_list, list):  # saved before causes were reported: group its checks the same way
            old_list = _causes_of(old.get("checks") or [])
        old_causes = {_key(c): c for c in old_list if isinstance(c, dict) and c.get("status") != "warn"}
        new_causes = {_key(c): c for c in t.get("causes") or [] if c.get("status") != "warn"}
        ch.new = [c for k, c in new_causes.items() if k not in old_causes]
        ch.gone = [c for k, c in old_causes.items() if k not in new_causes]
        a, b = _ttft_ms(old), _ttft_ms(t)
        if a is not None and b is not None and b >= a * SLOWER and b - a >= 500:
            ch.slower.append(f"time to first token {a:.0f} ms -> {b:.0f} ms")
        comp.targets.append(ch)
    return comp
