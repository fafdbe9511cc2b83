"""The human renderer: grouped ✓ / ! / ✗ lines with the fix under each and a one-line summary, for every command
result (``render`` dispatches on the result's command)."""

from __future__ import annotations

from gptoss_doctor.output.sink import Output, printable
from gptoss_doctor.results import CommandResult, Finding, summarize, summary_line


def render_findings(out: Output, findings: list[Finding], *, heading: str | None = None, verbose: bool = False) -> None:
    """Print findings grouped under ``heading``; passing ones stay one line unless ``verbose``."""
    if heading:
        out.heading(heading)
    for f in findings:
        text = f.title if not f.detail or (f.status == "pass" and not verbose) else f"{f.title}: {f.detail}"
        out.mark(f.status, text, indent=2)
        if f.status in ("warn", "fail", "error") or verbose:
            for ev in f.evidence[:4]:
                out.detail("evidence: " + ev, indent=6)
            if f.fix:
                out.detail("fix: " + f.fix, indent=6)
            for ref in f.references[:3]:
                out.detail("see: " + ref, indent=6)


def render_summary(out: Output, findings: list[Finding], suffix: str = "") -> None:
    counts = summarize(findings)
    worst = "fail" if counts["fail"] or counts["error"] else "warn" if counts["warn"] else "pass"
    out.line()
    out.mark(worst, summary_line(counts) + suffix)


# -- check --------------------------------------------------------------------------------------------------

def check(out: Output, report) -> None:
    """Each target under its heading, one line per check; checks that share a cause are one ✗ (or !) with those
    checks as its evidence and the fix and links once; the summary counts causes, not checks."""
    from gptoss_doctor.check.causes import group
    from gptoss_doctor.check.report import heading
    from gptoss_doctor.redact import redact

    secrets = report.secrets
    all_causes = []
    for i, r in enumerate(report.targets):
        if i:
            out.line()
        # details on every line; evidence of passing checks only with --verbose
        findings = [Finding(**{k: redact(v, secrets) for k, v in f.to_json().items()}) for f in r.checks]
        causes = group(findings)
        all_causes += causes
        out.heading(redact(heading(r), secrets))
        lead = {id(c.checks[0]): c for c in causes if len(c.checks) > 1}
        member = {id(f) for c in lead.values() for f in c.checks[1:]}
        for f in findings:
            if id(f) in member:
                continue
            if id(f) in lead:
                _render_cause(out, lead[id(f)])
                continue
            if f.status in ("pass", "skip") and not report.verbose:
                f.evidence = []
            render_findings(out, [f], verbose=True)
        if r.models and len(r.models) > 1:
            out.detail("models: " + ", ".join(m.id for m in r.models[:8]), indent=2)
    suffix = ""
    if len(report.targets) > 1:
        bad = sum(1 for r in report.targets if r.code(report.strict))
        suffix = f" across {len(report.targets)} targets" + (f" ({bad} with problems)" if bad else "")
    if report.comparison is not None:
        _render_comparison(out, report.comparison, secrets)
    counts = summarize(report.findings)
    worst = "fail" if counts["fail"] or counts["error"] else "warn" if counts["warn"] else "pass"
    if worst == "pass" and report.comparison is not None and report.comparison.has_new_problems:
        worst = "fail"
    out.line()
    out.mark(worst, cause_summary_line(all_causes, counts) + suffix)


def _render_comparison(out: Output, comp, secrets) -> None:
    """What changed since the saved baseline: engine, new problems (✗), problems gone (✓), slower (!)."""
    from gptoss_doctor.redact import redact

    out.line()
    out.heading(redact(f"Since {comp.path} (saved {comp.saved_at})", secrets))
    for t in comp.targets:
        if t.url != t.baseline_url:
            out.detail(redact(f"{t.url} compared with {t.baseline_url}", secrets), indent=2)
        if t.engine:
            out.mark("warn", f"Engine: {t.engine[0]} -> {t.engine[1]}", indent=2)
        for c in t.new:
            out.mark("fail", "new: " + c["title"], indent=2)
            out.detail("seen by: " + ", ".join(c["checks"]), indent=6)
            if c.get("fix"):
                out.detail("fix: " + c["fix"], indent=6)
        for c in t.gone:
            out.mark("pass", "gone: " + c["title"], indent=2)
        for s in t.slower:
            out.mark("warn", "slower: " + s, indent=2)
        if not (t.engine or t.new or t.gone or t.slower):
            out.mark("pass", "no change: same engine, no new problem, none gone, not slower", indent=2)
    for u in comp.unmatched:
        out.mark("skip", f"{u}: not in the baseline", indent=2)


def _render_cause(out: Output, c) -> None:
    """One cause seen by several checks: its title, the checks, their details as evidence, the fix once."""
    out.mark(c.status, c.title, indent=2)
    out.detail("seen by: " + ", ".join(f.title for f in c.checks), indent=6)
    shown: list[str] = []
    for f in c.checks:
        for line in ([f"{f.title}: {f.detail}"] if f.detail else []) + \
                [e for e in f.evidence if not e.startswith("matched: ")][:1]:
            if len(shown) < 6 and line not in shown:
                out.detail("evidence: " + line, indent=6)
                shown.append(line)
    if c.fix:
        out.detail("fix: " + c.fix, indent=6)
    for ref in c.references[:3]:
        out.detail("see: " + ref, indent=6)


def cause_summary_line(causes, counts: dict[str, int]) -> str:
    """"1 problem (seen by 3 checks), 18 passed, 2 skipped": failing and warning checks counted as causes."""
    parts = []
    for status, one, many in (("fail", "problem", "problems"), ("error", "check not finished", "checks not finished"),
                              ("warn", "warning", "warnings")):
        mine = [c for c in causes if c.status == status]
        if not mine:
            continue
        n_checks = sum(len(c.checks) for c in mine)
        seen = f" (seen by {n_checks} checks)" if n_checks > len(mine) else ""
        parts.append(f"{len(mine)} {one if len(mine) == 1 else many}{seen}")
    for status in ("pass", "skip"):
        if counts.get(status):
            parts.append(summary_line({s: counts[s] if s == status else 0 for s in counts}))
    return ", ".join(parts) if parts else "nothing checked"


# -- explain and decode ---------------------------------------------------------------------------------

def _render_tokens(out: Output, tokens, notes) -> None:
    if not tokens:
        return
    out.heading("Tokens")
    rows = []
    for t in tokens:
        if not t.valid:
            rows.append([str(t.id), "(invalid)", t.note or ""])
        elif t.special:
            rows.append([str(t.id), t.text, "Harmony special: " + (t.role or "") + (f" ({t.note})" if t.note else "")])
        elif t.text is None:
            rows.append([str(t.id), "(unknown)", t.note or ""])
        else:
            rows.append([str(t.id), repr(t.text)[1:-1] if t.text.strip() == t.text and t.text else repr(t.text),
                         "regular text token" + (f" ({t.note})" if t.note else "")])
    out.table(["id", "text", "meaning"], rows)
    for n in notes:
        out.note("vocabulary: " + n)
    out.line()


def _render_facets(out: Output, ex) -> None:
    lines = ex.facets.lines()
    if not lines:
        return
    out.heading("What I understood")
    for name, value in lines:
        out.detail(f"{name}: {value}", indent=2)
    out.line()


# how a triage class was chosen (triage.BASES), as its line says it
BASIS_LABEL = {"shown": "shown by the text", "said": "the text says so", "guess": "a guess"}


def _render_triage(out: Output, ex, verbose: bool) -> None:
    if not ex.triage:
        return
    guess = ex.triage[0].basis == "guess"
    out.heading("Problem classes it also fits" if ex.confident else
                "Not a known issue — check these next" if not guess else
                "Not a known issue, and the text does not say what kind — guesses to check")
    for n, h in enumerate(ex.triage, 1):
        c = h.cls
        out.mark("info", f"{n}. {c.title}  [{c.id}; layers: {', '.join(c.layers)}; {BASIS_LABEL[h.basis]}]",
                 indent=2)
        if ex.confident and not verbose:
            continue
        out.detail("why: " + "; ".join(h.why), indent=6)
        full = verbose or (n == 1 and h.basis != "guess")  # a guess gets its first check, not a fix to apply
        for chk in (c.checks if full else c.checks[:1]):
            out.detail("check: " + chk, indent=6)
        for fx in (c.fixes if full else c.fixes[:1] if h.basis != "guess" else []):
            out.detail(f"fix ({fx['layer']}): {fx['step']}", indent=6)
            out.detail("see: " + ", ".join(fx["references"][:2]), indent=8)
        for srch in h.searches[: 3 if full else 1]:
            out.detail(f"search {srch['tracker']}: {srch['url']}", indent=6)
    asked = ex.ask()
    if asked:
        out.detail("To tell these apart, add to the text:", indent=2)
        for a in asked:
            out.detail("- " + a, indent=4)


def explanation(out: Output, ex, verbose: bool = False) -> None:
    p = ex.parsed
    _render_facets(out, ex)
    _render_tokens(out, ex.tokens, ex.token_notes)
    if p.errors:
        out.heading(f"Errors found ({len(p.errors)}{' distinct' if p.lines > 1 else ''})")
        shown = p.errors if verbose else p.errors[:10]
        for e in shown:
            where = f"line {e.line}" if e.line and p.lines > 1 else ""
            times = f", {e.count}x" if e.count > 1 else ""
            tag = f"  [{e.kind}{', ' + where if where else ''}{times}]"
            status = "fail" if e.kind in ("harmony", "vocab", "traceback", "exception", "openai-sdk", "proxy", "json-body") else "warn"
            out.mark(status, e.message[:300] + tag, indent=2)
        if len(p.errors) > len(shown):
            out.detail(f"... and {len(p.errors) - len(shown)} more (use --verbose or --json)", indent=4)
        if p.dropped_errors:
            out.detail(f"... {p.dropped_errors} more distinct errors were not kept", indent=4)
        out.line()
    _render_artifacts(out, ex)
    out.line(f"Where it comes from: {ex.origin} — {ex.origin_detail}", style="bold")
    if p.tool_names:
        out.line("Tools named: " + ", ".join(p.tool_names))
    out.line()
    hint = ex.search_hint()
    if not ex.confident:
        out.mark("info", "No known issue explains this text with confidence." if ex.matches
                 else "No known issue matches this text.")
        if hint:
            out.detail(f'search for: "{hint["query"]}"' if hint["phrase"]
                       else f"search for the words: {hint['query']}", 4)
            for t in hint["trackers"]:
                out.detail(f"in {t['repo']}: {t['url']}", 6)
            out.detail("or run 'gptoss-doctor kb search WORDS'.", 4)
        else:
            out.detail("Search the knowledge base in other words: 'gptoss-doctor kb search WORDS'.", 4)
        if ex.triage:
            out.line()
            _render_triage(out, ex, verbose)
        if not ex.matches:
            return
        out.line()
        out.heading("Closest known issues (low confidence)")
    else:
        out.heading("Known issues that explain it")
    seen = _seen_names(ex.parsed.engines)
    for n, m in enumerate(ex.matches, 1):
        e = m.entry
        status = {"high": "fail", "medium": "warn", "low": "info"}[m.confidence]
        out.mark(status, f"{n}. {e.title}  [{m.confidence}, {m.score:.2f}, {e.id}]", indent=2)
        if m.confidence == "low" and n > 1 and not verbose:
            continue
        for ev in m.evidence:
            out.detail("why: " + ev, indent=6)
        out.detail("cause: " + _seen_first(e.causes, seen, lambda c: c)[0], indent=6)
        if m.confidence == "low" and not verbose:
            # a lead, not a diagnosis: on the two independent sets nobody had tuned on (2026-11-28), a low first
            # match was the right entry for 19 of the 188 texts that got one (10%). Its cause to compare with the
            # text; its fixes one command away
            out.detail(f"to see its fixes, if this cause is yours, run 'gptoss-doctor kb show {e.id}'", indent=6)
            continue
        items = _seen_first(ex.fix_items(m), seen, lambda it: it[1])
        layered = [it for it in items if it[0]]
        # with fixes for several layers, show one per layer (the layer the text points at first)
        shown = items if verbose else (_one_per_layer(layered, ex.origin) if len({x[0] for x in layered}) > 1 else items[:2])
        if n == 1 and m.confidence != "low":
            # a merged entry covers one cause in several layers: how to tell which one the text shows (the lines
            # about the engines the text names first)
            tell = _seen_first(e.distinguish, seen, lambda line: line)
            for line in tell if verbose else tell[:4]:
                out.detail("which one: " + line, indent=6)
        for layer, fx in shown:
            out.detail(f"fix ({layer}): {fx}" if layer else "fix: " + fx, indent=6)
        for url in e.urls[:3]:
            out.detail("see: " + url, indent=6)
    if ex.confident and ex.triage:
        out.line()
        _render_triage(out, ex, verbose)


def _seen_names(engine_hints: dict) -> list[str]:
    """Lower-case names and labels of the engines (and clients) the text names, to find the lines about them."""
    from gptoss_doctor import engines

    names = []
    for name in engine_hints:
        names.append(name.lower())
        if engines.known(name):
            names.append(engines.label(name).lower())
    return [n for n in names if len(n) > 2]


def _seen_first(items: list, seen: list[str], text) -> list:
    """``items`` with those whose text names a seen engine first (stable: the entry's order otherwise)."""
    if not seen:
        return list(items)
    return sorted(items, key=lambda it: not any(n in text(it).lower() for n in seen))


def _one_per_layer(items, origin: str):
    first: dict[str, str] = {}
    for layer, line in items:
        first.setdefault(layer, line)
    layers = ["server", "proxy", "provider", "client", "model-files", "hardware"]
    order = sorted(first, key=lambda lay: (lay != origin, layers.index(lay) if lay in layers else 9))
    return [(lay, first[lay]) for lay in order]


def _render_artifacts(out: Output, ex) -> None:
    if not ex.artifacts:
        return
    out.heading("What the text shows")
    for a in ex.artifacts:
        out.mark("warn", a.evidence, indent=2)
        out.detail(f"most likely produced by: the {a.layer}", indent=6)
        for layer, fix in a.fixes.items():
            out.detail(f"fix ({layer}): {fix}", indent=6)
    for m in ex.harmony_messages[:8]:
        head = m.role + (f" · {m.channel}" if m.channel else "") + (f" → {m.recipient}" if m.recipient else "")
        body = " ".join(m.content.split())
        out.detail(f"message: {head}: {body[:120]}{'…' if len(body) > 120 else ''}", indent=6)
    out.line()


def _render_leads(out: Output, leads: dict) -> None:
    if not leads["searched"]:
        out.note(f"--online: not searched ({leads['reason']})")
        return
    out.heading("Unverified leads from GitHub's issue search")
    if not leads["leads"]:
        out.detail("no hits" + (f" ({'; '.join(leads['problems'])})" if leads["problems"] else ""), 2)
    for lead in leads["leads"]:
        out.detail(f"{lead['repo']}#{lead['number']} [{lead['state']}] {lead['title']}", 2)
        out.detail(lead["url"], 6)
    for p in leads["problems"] if leads["leads"] else []:
        out.note(f"--online: {p}")
    out.line()


def _explain_summary(out: Output, ex) -> None:
    top = ex.matches[0] if ex.matches else None
    n = len(ex.parsed.errors)
    lead = f"{n} error{'s' if n != 1 else ''} read" if n else "no error line found, read as a description of symptoms"
    out.line()
    if top and top.confidence in ("high", "medium"):
        out.mark("fail" if top.confidence == "high" else "warn",
                 f"{lead}; most likely: {top.entry.id} ({top.confidence}); raised in: {ex.origin}")
    else:
        out.mark("info", f"{lead}; no confident match; raised in: {ex.origin}")


def explain(out: Output, result) -> None:
    explanation(out, result.explanation, verbose=result.verbose)
    if result.leads is not None:
        _render_leads(out, result.leads)
    _explain_summary(out, result.explanation)


def decode(out: Output, result) -> None:
    _render_tokens(out, result.tokens, result.notes)
    if not result.invalid and not result.missing:
        out.line("Joined: " + result.text)


# -- kb -----------------------------------------------------------------------------------------------------

def _entry(out: Output, e) -> None:
    out.heading(f"{e.title}")
    out.line(f"id: {e.id}    origin: {e.origin}    engines: {', '.join(e.engines)}")
    if e.versions:
        for k, v in e.versions.items():
            out.line(f"{k}: {v}")
    out.line()
    out.detail(e.summary, indent=0)
    out.line()
    if e.messages or e.patterns:
        out.heading("Error messages")
        for m in e.messages:
            out.detail(m, indent=2)
        for p in e.patterns:
            out.detail(f"/{p}/", indent=2)
    if e.token_ids:
        out.line("Token IDs: " + ", ".join(map(str, e.token_ids)))
    if e.findings:
        out.line("Detected by check: " + ", ".join(e.findings))
    out.heading("Causes")
    for c in e.causes:
        out.detail("- " + c, indent=2)
    if e.variants:
        out.heading("Variants")
        for v in e.variants:
            out.detail("- " + v, indent=2)
    if e.distinguish:
        out.heading("How to tell which one you have")
        for d in e.distinguish:
            out.detail("- " + d, indent=2)
    out.heading("Fixes")
    for layer, f in e.fix_items():
        out.detail("- " + (f"[{layer}] " if layer else "") + f, indent=2)
    if e.replaces:
        out.line("Replaces (merged entries): " + ", ".join(e.replaces))
    out.heading("References")
    for r in e.references:
        out.detail(r["url"] + (f"  {r['title']}" if r.get("title") else ""), indent=2)


def kb_list(out: Output, result) -> None:
    out.table(["id", "engines", "origin", "title"],
              [[e.id, ", ".join(e.engines), e.origin, e.title] for e in result.entries])
    out.line()
    out.line(f"{len(result.entries)} entries")


def kb_show(out: Output, result) -> None:
    if result.requested and result.requested != result.entry.id:
        out.mark("warn", f"{result.requested} was merged into {result.entry.id} (entries that shared one cause)")
    _entry(out, result.entry)


def kb_search(out: Output, result) -> None:
    if not result.matches:
        out.line("no matching entries")
        return
    out.table(["score", "id", "title"], [[f"{m.score:.2f}", m.entry.id, m.entry.title] for m in result.matches])


def kb_validate(out: Output, result) -> None:
    for err in result.problems:
        out.mark("fail", err)
    out.mark("fail" if result.problems else "pass", f"{result.entries} valid entries in {result.path}"
             + (f", {len(result.problems)} problems" if result.problems else ""))


# -- scan ---------------------------------------------------------------------------------------------------

SCAN_MARK = {"fail": "fail", "warn": "warn", "info": "info", "pass": "pass"}


def _scan_body(out: Output, res, verbose: bool = False) -> None:
    if res.launches:
        out.heading(f"Launches ({len(res.launches)})")
        for la in res.launches:
            tag = "gpt-oss" if la.gpt_oss else "other model"
            out.detail(f"{la.engine:9} {printable(la.model or '(model not named)')}  [{tag}]  {printable(la.where)}", 2)
        out.line()
    if res.findings:
        out.heading("Findings")
        for f in res.findings:
            out.mark(SCAN_MARK.get(f.status, "info"), printable(f.title), indent=2)
            out.detail("where: " + printable(f.where), 6)
            if f.detail:
                out.detail("why: " + printable(f.detail), 6)
            if f.fix:
                out.detail("fix: " + printable(f.fix), 6)
            if f.corrected:
                out.detail("corrected: " + printable(f.corrected), 6)
            for url in f.references[: (None if verbose else 2)]:
                out.detail("see: " + url, 6)
        out.line()
    if res.skipped and (verbose or len(res.skipped) <= 8):
        out.heading("Skipped")
        for s in res.skipped:
            out.mark("skip", f"{printable(s.where)}: {printable(s.reason)}", indent=2)
        out.line()
    elif res.skipped:
        out.note(f"{len(res.skipped)} items skipped (use --verbose or --json to list them)")
    host = res.host
    if host:
        pk = host.get("packages") or {}
        out.heading("Host")
        out.detail("packages: " + (", ".join(f"{k} {v}" for k, v in sorted(pk.items())) or "no engine or Harmony "
                                   "library in this Python environment"), 2)
        gpus = host.get("gpus") or []
        out.detail("GPUs: " + (", ".join(f"{g['name']} (compute {g['compute_cap']})" for g in gpus) or "none seen"), 2)
        copies = host.get("model_copies") or []
        out.detail(f"gpt-oss copies in the Hugging Face cache: {len(copies)}", 2)
        out.line()


def scan_summary(res) -> tuple[str, str]:
    fails = sum(f.status == "fail" for f in res.findings)
    warns = sum(f.status == "warn" for f in res.findings)
    where = f"{res.files_read} file{'s' if res.files_read != 1 else ''}"
    if res.processes_read:
        where += f", {res.processes_read} processes"
    where += f", {len(res.launches)} launch{'es' if len(res.launches) != 1 else ''}"
    if not fails and not warns:
        return "pass", f"nothing to fix: {where} scanned"
    return ("fail" if fails else "warn"), f"{fails} problem{'s' if fails != 1 else ''} and {warns} warning" \
        f"{'s' if warns != 1 else ''} in {where}"


def scan(out: Output, res) -> None:
    _scan_body(out, res, res.verbose)
    status, line = scan_summary(res)
    out.mark(status, line)


# -- fix-config -------------------------------------------------------------------------------------------------

FIX_STATUS_MARK = {"up-to-date": "pass", "stale": "fail", "missing": "fail", "modified-locally": "warn",
               "absent-upstream": "info", "weight": "skip", "skipped": "warn"}
FIX_STATUS_WORD = {"up-to-date": "up to date", "stale": "stale", "missing": "missing locally",
               "modified-locally": "modified locally", "absent-upstream": "not on the Hub",
               "weight": "weights", "skipped": "skipped"}


def fixconfig_model(out: Output, rep) -> None:
    """One copy compared with the Hub: its files, their status and diffs (shown as the run goes)."""
    from gptoss_doctor import settings
    from gptoss_doctor.fixconfig.results import short as _short

    m = rep.model
    where = "HF cache" if m.kind == "cache" else "folder"
    out.heading(f"{m.repo_id}  ({where}: {m.root})")
    if rep.recovered:
        if rep.recovered.startswith("pending:"):
            out.mark("warn", "an interrupted fix-config is pending here; run without --dry-run to finish it", indent=2)
        else:
            out.mark("info", f"finished an interrupted fix-config ({rep.recovered})", indent=2)
    local = f"snapshot {_short(m.commit)}" + (f" (refs/{m.ref})" if m.ref else "") if m.kind == "cache" else (
        f"downloaded at {_short(m.commit)}" if m.commit else "plain folder")
    from gptoss_doctor.redact import redact

    ep = settings.hub_endpoint()
    hub = "Hub" if ep == "https://huggingface.co" else f"Hub ({redact(ep)})"
    out.detail(f"local: {local}   {hub}: {rep.remote.revision} = {_short(rep.remote.commit)}   repo from {m.repo_source}", indent=2)
    for note in m.notes:
        out.detail("note: " + note, indent=2)
    width = max((len(s.relpath) for s in rep.statuses), default=10)
    for s in rep.statuses:
        text = f"{s.relpath.ljust(width)}  {FIX_STATUS_WORD.get(s.status, s.status)}"
        if s.relpath == "generation_config.json" and rep.eos and s.needs_update and (rep.eos["added"] or rep.eos["removed"]):
            text += f": {rep.eos['text']}"
        elif s.reason and s.status not in ("up-to-date",):
            text += f" ({s.reason})"
        out.mark(FIX_STATUS_MARK.get(s.status, "info"), text, indent=2)
        for line in rep.diffs.get(s.relpath, []):
            out.detail(line, indent=6)
    if m.kind == "cache" and rep.needs_snapshot and not rep.to_update(False) and not rep.unchecked:
        out.mark("warn", f"refs/{m.ref or 'main'} points at {_short(m.commit)}; the Hub is at {_short(rep.remote.commit)} (files identical)", indent=2)
    if m.pinned_snapshot and rep.needs_snapshot:
        out.detail(f"note: you named snapshots/{_short(m.commit)}; a fix writes snapshots/{_short(rep.remote.commit)} — point your server at the repo id or the new path", indent=2)
    for b in rep.blockers:
        out.mark("fail", b, indent=2)


def fixconfig_applied(out: Output, rep) -> None:
    """A copy just refreshed: the backup, the new snapshot and what to restart."""
    from gptoss_doctor.fixconfig.results import undo_command

    m = rep.model
    out.line()
    out.mark("pass", f"{m.repo_id}: refreshed; backup {rep.backup_id} (undo: {undo_command(rep)})")
    if m.kind == "cache":
        if rep.needs_snapshot:
            if rep.remote and rep.remote.revision == (m.ref or "main") or not m.pinned_snapshot:
                out.detail(f"refs/{rep.remote.revision} -> {rep.remote.commit}; new snapshot {rep.result_path}", indent=2)
            if m.pinned_snapshot:
                out.detail(f"your server used {m.files_dir}; point it at {rep.result_path} or at {m.repo_id}", indent=2)
    out.detail("Restart every server that loaded this model: vLLM, SGLang, TGI and transformers read these files", indent=2)
    out.detail("only at start-up (vLLM takes eos_token_id from generation_config.json when the engine starts):", indent=2)
    if m.kind == "cache":
        out.detail(f"  vllm serve {m.repo_id}    (resolves refs/main, also with HF_HUB_OFFLINE=1)", indent=2)
    else:
        out.detail(f"  vllm serve {m.root}", indent=2)
    out.detail("A server started with --generation-config DIR reads DIR/generation_config.json: refresh that copy too.", indent=2)
    out.detail("Then check the running server: gptoss-doctor check http://127.0.0.1:8000", indent=2)


def fixconfig(out: Output, result) -> None:
    from gptoss_doctor.fixconfig import results as R

    if isinstance(result, R.FixConfigVocab):
        _vocab_written(out, result)
        return
    if isinstance(result, R.FixConfigRestore) and result.backups is not None:
        out.heading(f"fix-config backups of {result.root}")
        for b in result.backups:
            out.detail(f"{b['id']}  {len(b.get('files', []))} file(s)" + (
                f"  {b.get('old_commit', '')[:7]} -> {b.get('new_commit', '')[:7]}" if b.get("kind") == "cache" else ""),
                indent=2)
        if not result.backups:
            out.detail("(none)", indent=2)
        return
    if isinstance(result, R.FixConfigRestore):
        if result.restored:
            out.mark("pass", f"restored backup {result.restored} in {result.root}; restart the servers that use it")
        return
    if result.outcome == R.UNCHECKED:
        out.line()
        out.mark("fail", f"not checked: {', '.join(result.unchecked)}; nothing else is stale")
        out.detail("replace the link by the file (or compare it yourself), then run fix-config again", indent=2)
        if result.kept:
            out.mark("warn", f"modified locally and kept: {', '.join(result.kept)} (replace them with --force)")
    elif result.outcome in (R.UP_TO_DATE, R.KEPT):
        out.line()
        if result.kept:
            out.mark("warn", f"modified locally and kept: {', '.join(result.kept)} (replace them with --force; a "
                     "backup is made)")
        else:
            out.mark("pass", "everything is up to date" if len(result.reports) > 1 else "up to date with the Hub")
    elif result.outcome in (R.DRY_RUN, R.DECLINED):
        out.line()
        out.mark("fail", "stale files found; nothing changed" + (" (--dry-run)" if result.outcome == R.DRY_RUN else ""))
        out.detail("apply with: " + result.apply_with, indent=2)


def _vocab_written(out: Output, v) -> None:
    import shlex

    if v.action == "already-present":
        out.mark("pass", f"{v.path} is already there and verified (sha256 {v.sha256[:8]}…{v.sha256[-4:]})")
    elif v.action == "dry-run":
        out.mark("info", f"would write {v.path} from {v.source} (--dry-run: nothing written)")
    else:
        out.mark("pass", f"wrote {v.path} from {v.source}; sha256 verified")
        if v.backup:
            out.detail(f"the previous file was kept as {v.backup}", indent=2)
    out.line()
    out.line("Start the server with:")
    out.line(f"  export {v.env}")
    out.line(f"  {v.env} vllm serve openai/gpt-oss-20b")
    out.line(f"  {v.env} python -m sglang.launch_server --model-path openai/gpt-oss-20b")
    out.line(f"  (containers: -e {v.env} -v {shlex.quote(v.dest_dir)}:{shlex.quote(v.dest_dir)}:ro)")


RENDERERS = {"check": check, "scan": scan, "fix-config": fixconfig, "explain": explain, "decode": decode, "kb list": kb_list, "kb show": kb_show,
             "kb search": kb_search, "kb validate": kb_validate}


def render(out: Output, result: CommandResult) -> None:
    RENDERERS[result.command](out, result)
