"""check, stage 4 (link): each finding gets the knowledge-base entries that explain it (by finding id and by
matching the server's own error text), their references, and the best fix among theirs and the doctor's."""

from __future__ import annotations

from typing import Any, Optional

from gptoss_doctor import engines
from gptoss_doctor.check.finding_ids import FINDING_IDS
from gptoss_doctor.check.finding_ids import TITLES
from gptoss_doctor.check.judge import builtin_fix
from gptoss_doctor.check.result import TargetResult
from gptoss_doctor.engines.profile import vtuple
from gptoss_doctor.results import Finding

_KB_CACHE: dict[str, Any] = {}


def _kb_entries() -> list:
    if "entries" not in _KB_CACHE:
        try:
            from gptoss_doctor import kb

            _KB_CACHE["entries"] = kb.load()
        except Exception as exc:  # noqa: BLE001 - a broken KB must not break the check
            _KB_CACHE["entries"] = []
            _KB_CACHE["error"] = str(exc)
    return _KB_CACHE["entries"]


def reset_kb_cache() -> None:
    """Forget the loaded knowledge base (tests point GPTOSS_DOCTOR_KNOWLEDGE elsewhere)."""
    _KB_CACHE.clear()


def kb_error() -> Optional[str]:
    """Why the knowledge base could not be loaded in this run, if it could not."""
    return _KB_CACHE.get("error")


KB_FIX_FIRST = {"probe.tools.stream_duplicated", "probe.flattened_channels", "probe.tools.no_parser"}

SYMPTOM_IDS = {"probe.tools.stream_duplicated", "probe.tools.name_leak", "probe.flattened_channels", "probe.harmony_leak",
               "probe.tools.no_parser", "probe.tools.invalid_json", "eos.local_generation_config", "eos.call_token",
               "eos.end_token", "eos.return_token", "probe.harmony_error", "probe.stream.error_chunk"}


def engine_ok(entry: Any, engine: str) -> bool:
    """Does a KB entry apply to this engine? ('harmony' entries apply to engines that embed openai-harmony.)"""
    if engine in ("unknown", ""):
        return True
    return engine in entry.engines or "any" in entry.engines or ("harmony" in entry.engines
                                                                 and engines.get(engine).embeds_harmony)


def match_errors(texts: list[str], engine: str) -> list:
    """Matcher results (best first) for server error texts; [] when the matcher is unavailable."""
    out, seen = [], set()
    try:
        from gptoss_doctor.explain.match import match_text
    except Exception:  # noqa: BLE001
        return []
    for t in texts[:3]:
        try:
            ms = match_text(t[:4000], engine=None if engine == "unknown" else engine, limit=5)
        except Exception:  # noqa: BLE001
            continue
        for m in ms:
            if m.entry.id not in seen and getattr(m, "confidence", "low") in ("high", "medium"):
                seen.add(m.entry.id)
                out.append(m)
    return out


def build_finding(fid: str, status: str, detail: str, evidence: list[str], errors: list[str], fix: str,
                  engine: str, target: TargetResult, kb_ids: Optional[list[str]] = None) -> Finding:
    f = Finding(id=fid, status=status, title=TITLES.get(fid, FINDING_IDS[fid]), detail=detail,
                evidence=evidence[:6])
    if status in ("pass", "skip"):
        return f
    if status == "error":  # the doctor could not finish this check: no KB guess, only our own hint
        f.fix = fix or ""
        return f
    entries = _kb_entries()
    matches = match_errors(errors, engine) if errors else []
    named = [e for e in entries if fid in e.findings]
    if status == "fail" and "is not language" in detail:
        # broken weights, quantisation or kernels: only the issues about garbage output are references (the chat
        # probe's other issues, such as an empty answer, are about a model that works)
        named = [e for e in named if "garbage-output" in e.classes]
    version = target.version or ""
    vshort = ".".join(str(x) for x in vtuple(version)[:3])

    def version_hit(e: Any) -> bool:
        return bool(vshort) and vshort in str((e.versions or {}).get("affected", ""))

    named_engine = [e for e in named if engine_ok(e, engine)]
    if fid == "engine.version":  # only entries that name this very version as affected
        named_engine = [e for e in named_engine if engine in e.engines and version_hit(e)]
    # the engine's own entries first (those naming this version first of all), then 'any' / 'harmony' ones
    named_engine.sort(key=lambda e: (not version_hit(e), engine not in e.engines))
    chosen, ids = [], set()
    # entries the probe itself named (what it saw has no error text to match), then the matcher's, then the rest
    probe_named = [e for k in kb_ids or [] for e in entries if e.id == k]
    ordered = probe_named + [m.entry for m in matches if fid in m.entry.findings or m.confidence == "high"] + named_engine
    if fid in SYMPTOM_IDS:  # the same symptom on another engine is still a useful reference
        ordered += named
    for e in ordered:
        if e.id not in ids:
            ids.add(e.id)
            chosen.append(e)
    f.kb = [e.id for e in chosen]
    f.references = list(dict.fromkeys(u for e in chosen for u in e.urls))
    if matches:
        f.evidence.append("matched: " + ", ".join(f"{m.entry.id} ({m.confidence})" for m in matches[:3]))
    high = next((m.entry for m in matches if m.confidence == "high"), None)
    names = [engine.lower(), engines.label(engine).lower()] + (["llama-server"] if engine == "llama.cpp" else [])
    others = [w for p in engines.PROFILES if p.name != engine for w in (p.name.lower(), p.label.lower())
              if w not in names]
    kb_fix = lambda e: e.fix_for(names, others)  # noqa: E731 - the fix line for this engine when the entry has several
    applicable = [e for e in chosen if engine_ok(e, engine)]
    exact = [e for e in named_engine if engine in e.engines] \
        if fid in KB_FIX_FIRST and fid not in engines.get(engine).own_fix_first else []
    if fix and engines.get(engine).is_proxy:  # the doctor's own proxy-aware fix beats any engine flag from the KB
        f.fix = fix
        return f
    f.fix = (kb_fix(high) if high else "") or (kb_fix(exact[0]) if exact else "") or fix or \
        builtin_fix(fid, engine, target) or (kb_fix(applicable[0]) if applicable else "")
    return f
