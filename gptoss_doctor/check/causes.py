"""check, stage 4b (causes): the failing and warning checks grouped by the cause behind them.

One fault often fails several checks (lmdeploy's duplicated streamed arguments fail "Tool arguments JSON",
"Streamed tool call" and "Streamed argument fragments"; a stale generation_config.json fails the stop-token, parser
and tool-call checks). People read each ✗ as a problem of its own, so the report counts causes: checks that name
the same knowledge-base entry first, or that carry the same fix, are one cause, with those checks as its evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gptoss_doctor.results import Finding

_RANK = {"fail": 0, "error": 1, "warn": 2}


@dataclass
class Cause:
    """One cause: the checks that showed it, their worst status, and the one fix."""

    status: str  # fail | error | warn
    title: str
    checks: list[Finding] = field(default_factory=list)
    fix: str = ""
    references: list[str] = field(default_factory=list)
    kb: list[str] = field(default_factory=list)

    @property
    def check_ids(self) -> list[str]:
        return [f.id for f in self.checks]

    def to_json(self) -> dict:
        return {"status": self.status, "title": self.title, "checks": self.check_ids, "fix": self.fix,
                "references": self.references, "kb": self.kb}


# a failing check that explains others when both fail: the others are its consequences, not causes of their own
EXPLAINS = {
    # duplicated fragments make the joined streamed arguments differ from the non-streamed ones and break their JSON
    "probe.tools.stream_duplicated": ("probe.tools.stream", "probe.tools.invalid_json"),
    # generation ran past <|call|>: the parser error fails the tool call, its stream and ends it with an error chunk
    "eos.call_token": ("probe.harmony_error", "probe.tools.call", "probe.tools.stream", "probe.stream.error_chunk"),
    "probe.harmony_error": ("probe.tools.call", "probe.tools.stream", "probe.stream.error_chunk"),
}


def _explained_by(f: Finding, failing: dict[str, Finding]) -> Finding | None:
    for root_id, consequences in EXPLAINS.items():
        root = failing.get(root_id)
        if root is None or root is f or f.id not in consequences:
            continue
        if f.id == "probe.tools.invalid_json" and "non-streamed" in f.detail:
            continue  # arguments broken without streaming are a fault of their own
        return root
    return None


def _key(f: Finding) -> tuple:
    if f.kb:
        return ("kb", f.kb[0])
    if f.fix:
        return ("fix", f.fix)
    return ("check", f.id)


def group(checks: list[Finding]) -> list[Cause]:
    """Causes in the order their first check appears; a cause's status is the worst of its checks'."""
    causes: dict[tuple, Cause] = {}
    failing = {f.id: f for f in checks if f.status in _RANK}
    roots: dict[str, Finding] = {}
    for f in failing.values():
        root = _explained_by(f, failing)
        while root is not None and root.id not in roots and _explained_by(root, failing) is not None:
            root = _explained_by(root, failing)  # follow the chain to the first cause (eos -> parser error -> …)
        if root is not None:
            roots[f.id] = roots.get(root.id, root)
    # a root's cause is opened at the root's own place in the report, so its consequences listed before it join it
    order = sorted(failing.values(), key=lambda f: (checks.index(roots.get(f.id, f)), checks.index(f)))
    for f in order:
        key = _key(roots.get(f.id, f))
        c = causes.get(key)
        if c is None:
            title = f"{f.title}: {f.detail}" if f.detail else f.title
            if f.kb:
                from gptoss_doctor import kb

                try:
                    title = kb.get(f.kb[0]).title
                except Exception:  # noqa: BLE001 - an entry that vanished keeps the check's own words
                    pass
            causes[key] = c = Cause(f.status, title, [f], f.fix, list(f.references), list(f.kb))
        else:
            c.checks.append(f)
            if _RANK[f.status] < _RANK[c.status]:
                c.status = f.status
            c.references += [u for u in f.references if u not in c.references]
    for c in causes.values():
        c.checks.sort(key=checks.index)
    return sorted(causes.values(), key=lambda c: checks.index(c.checks[0]))


def summary(causes: list[Cause]) -> dict[str, int]:
    """{"fail": …, "error": …, "warn": …} counted in causes, not checks."""
    out = {s: 0 for s in _RANK}
    for c in causes:
        out[c.status] += 1
    return out
