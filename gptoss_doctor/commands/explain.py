"""``explain`` and ``decode``: read error text, decode token IDs, rank known issues."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import List, Optional

import typer

from gptoss_doctor.commands._options import JsonFlag, OfflineFlag, UrlModel

from gptoss_doctor.output.sink import Output

EXPLAIN_HELP = """Explain a gpt-oss error message, log or traceback.

Give the text as an argument, with --file PATH (streamed, any size), or '-' / a pipe for stdin.
Every token ID is decoded, the component that raised the error is named, and the known issues
that explain it are ranked with their evidence and fixes.

  gptoss-doctor explain "openai_harmony.HarmonyError: Unexpected token 12606 while expecting start token 200006"

  gptoss-doctor explain --file vllm.log --json
"""


def _read_input(text: Optional[str], file: Optional[Path]):
    """(kind, value): ("text", str) or ("stream", binary file object)."""
    from gptoss_doctor.errors import UsageError

    if text is not None and file is not None:
        raise UsageError("give the text or --file, not both")
    if file is not None:
        if str(file) == "-":
            return "stream", sys.stdin.buffer
        if file.is_dir():
            raise UsageError(f"{file} is a folder; give a log file")
        return "stream", open(file, "rb")  # noqa: SIM115 - closed by the caller
    if text is not None:
        # bytes that are not UTF-8 reach Python as lone surrogates; show them as U+FFFD instead of crashing later
        text = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if text == "-" or (text is None and not sys.stdin.isatty()):
        return "stream", sys.stdin.buffer
    if text is None:
        raise UsageError("nothing to explain: give the error text, --file PATH, or pipe it in (see --help)")
    if not text.strip():
        raise UsageError("the text to explain is empty")
    return "text", text


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


def render_explanation(out: Output, ex, verbose: bool = False) -> None:
    p = ex.parsed
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
        understood = [f"{len(p.errors)} error line(s)" if p.errors else "no error line (read as a description)"]
        kinds = sorted({e.kind for e in p.errors})
        if kinds:
            understood.append("kind: " + ", ".join(kinds))
        if p.engines:
            understood.append("engine: " + ", ".join(p.engines))
        if ex.tokens:
            understood.append("tokens: " + ", ".join(f"{t.id}={t.text!r}" for t in ex.tokens[:6]))
        out.detail("understood: " + "; ".join(understood), 4)
        if hint:
            out.detail(f'search for: "{hint["query"]}"', 4)
            for t in hint["trackers"]:
                out.detail(f"in {t['repo']}: {t['url']}", 6)
        out.detail("or run 'gptoss-doctor kb search WORDS'.", 4)
        if not ex.matches:
            return
        out.line()
        out.heading("Closest known issues (low confidence)")
    else:
        out.heading("Known issues that explain it")
    for n, m in enumerate(ex.matches, 1):
        e = m.entry
        status = {"high": "fail", "medium": "warn", "low": "info"}[m.confidence]
        out.mark(status, f"{n}. {e.title}  [{m.confidence}, {m.score:.2f}, {e.id}]", indent=2)
        if m.confidence == "low" and n > 1 and not verbose:
            continue
        for ev in m.evidence:
            out.detail("why: " + ev, indent=6)
        out.detail("cause: " + e.causes[0], indent=6)
        items = e.fix_items()
        layered = [it for it in items if it[0]]
        # with fixes for several layers, show one per layer (the layer the text points at first)
        shown = items if verbose else (_one_per_layer(layered, ex.origin) if len({x[0] for x in layered}) > 1 else items[:2])
        for layer, fx in shown:
            out.detail(f"fix ({layer}): {fx}" if layer else "fix: " + fx, indent=6)
        for url in e.urls[:3]:
            out.detail("see: " + url, indent=6)


def _one_per_layer(items, origin: str):
    first: dict[str, str] = {}
    for layer, line in items:
        first.setdefault(layer, line)
    order = sorted(first, key=lambda lay: (lay != origin, ["server", "proxy", "client", "model-files", "hardware"].index(lay)
                                           if lay in ("server", "proxy", "client", "model-files", "hardware") else 9))
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


def _online_leads(ex) -> dict:
    """GitHub issue-search hits for the normalised message, only when no known issue is confident."""
    hint = ex.search_hint()
    if hint is None:
        reason = "a known issue matched" if ex.confident else "no error message to search for"
        return {"searched": False, "reason": reason, "leads": [], "problems": []}
    from gptoss_doctor.explain import online

    leads, problems = online.search(hint["query"], [t["repo"] for t in hint["trackers"]])
    return {"searched": True, "query": hint["query"], "api": online.api_base(),
            "leads": [lead.to_json() for lead in leads], "problems": problems}


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


def _summary(out: Output, ex) -> None:
    top = ex.matches[0] if ex.matches else None
    n = len(ex.parsed.errors)
    lead = f"{n} error{'s' if n != 1 else ''} read" if n else "no error line found, read as a description of symptoms"
    out.line()
    if top and top.confidence in ("high", "medium"):
        out.mark("fail" if top.confidence == "high" else "warn",
                 f"{lead}; most likely: {top.entry.id} ({top.confidence}); raised in: {ex.origin}")
    else:
        out.mark("info", f"{lead}; no confident match; raised in: {ex.origin}")


def register(app: typer.Typer) -> None:
    @app.command("explain", help=EXPLAIN_HELP)
    def explain_cmd(
        text: Optional[str] = typer.Argument(None, help="The error text, or '-' for stdin."),
        file: Optional[Path] = typer.Option(None, "--file", "-f", metavar="PATH", help="Read a log file (streamed; '-' for stdin)."),
        json_out: JsonFlag = False,
        vocab: Optional[str] = typer.Option(None, "--vocab", metavar="PATH", help="o200k_base.tiktoken file or folder (also GPTOSS_DOCTOR_VOCAB)."),
        url: Optional[str] = typer.Option(None, "--url", metavar="URL", help="Decode unknown IDs through this server's /detokenize."),
        model: UrlModel = None,
        engine: Optional[str] = typer.Option(None, "--engine", metavar="NAME", help="The engine the text came from, if the log doesn't say."),
        top: int = typer.Option(5, "--top", metavar="N", min=1, max=50, help="How many known issues to list."),
        offline: OfflineFlag = False,
        verbose: bool = typer.Option(False, "--verbose", "-v", help="Show every error and every fix."),
        online: bool = typer.Option(False, "--online", help="When nothing matches, ask GitHub's issue search for the "
                                    "message and list the hits as unverified leads (off by default)."),
    ) -> None:
        from gptoss_doctor.entry import run_command

        def body(out: Output) -> int:
            from gptoss_doctor import explain
            from gptoss_doctor.errors import UsageError
            from gptoss_doctor.explain.parse import BinaryInputError

            if engine is not None:
                from gptoss_doctor.kb import ENGINES

                engine_l = engine.strip().lower()
                if engine_l not in ENGINES:
                    raise UsageError(f"unknown engine {engine!r}", hint="one of: " + ", ".join(ENGINES))
            kind, value = _read_input(text, file)
            kw = dict(vocab=vocab, url=url, model=model, engine=engine.strip().lower() if engine else None, limit=top, allow_download=not offline,
                      api_key=os.environ.get("OPENAI_API_KEY"))
            try:
                if kind == "text":
                    ex = explain.explain_text(value, **kw)
                else:
                    try:
                        ex = explain.explain_stream(value, **kw)
                    finally:
                        if value is not sys.stdin.buffer:
                            value.close()
            except BinaryInputError as exc:
                raise UsageError(str(exc)) from exc
            p = ex.parsed
            if p.bytes == 0 or (not p.errors and p.bytes <= len(p.sample.encode()) and not p.sample.strip()):
                raise UsageError("the input is empty: nothing to explain")
            leads = _online_leads(ex) if online else None
            if out.json_mode:
                doc = {"ok": True, **ex.to_json()}
                if leads is not None:
                    doc["online"] = leads
                out.json("explain", doc)
            else:
                render_explanation(out, ex, verbose=verbose)
                if leads is not None:
                    _render_leads(out, leads)
                _summary(out, ex)
            return 0

        run_command("explain", json_out, body)

    @app.command("decode", help="Decode o200k_harmony token IDs: gptoss-doctor decode 12606 200006 200012",
                 short_help="Decode o200k_harmony token IDs.",
                 context_settings={"ignore_unknown_options": True})  # so "-5" is an ID to report, not an option
    def decode_cmd(
        ids: List[str] = typer.Argument(..., help="Token IDs (spaces, commas or a [list])."),
        json_out: JsonFlag = False,
        vocab: Optional[str] = typer.Option(None, "--vocab", metavar="PATH", help="o200k_base.tiktoken file or folder."),
        url: Optional[str] = typer.Option(None, "--url", metavar="URL", help="Fall back to this server's /detokenize."),
        model: UrlModel = None,
        offline: OfflineFlag = False,
    ) -> None:
        from gptoss_doctor.entry import run_command

        def body(out: Output) -> int:
            from gptoss_doctor.errors import UsageError
            from gptoss_doctor.harmony.tokens import decode_ids

            values: list[int] = []
            for arg in ids:
                for part in re.split(r"[\s,\[\]]+", arg):
                    if not part:
                        continue
                    if not re.fullmatch(r"-?\d{1,40}", part):
                        raise UsageError(f"not a token ID: {part[:40]!r} (give whole numbers)")
                    values.append(int(part))
            if not values:
                raise UsageError("no token IDs given")
            if len(values) > 10000:
                raise UsageError(f"too many IDs ({len(values)}); decode at most 10000 at once")
            infos, notes = decode_ids(values, vocab_path=vocab, url=url, model=model, allow_download=not offline,
                                      api_key=os.environ.get("OPENAI_API_KEY"))
            invalid = [t for t in infos if not t.valid]
            missing = [t for t in infos if t.valid and t.text is None]
            code = 2 if invalid else 1 if missing else 0
            if out.json_mode:
                doc = {"ok": code == 0, "tokens": [t.to_json() for t in infos], "notes": notes,
                       "text": "".join(t.text or "" for t in infos)}
                if invalid:
                    doc["error"] = {"kind": "usage", "message": f"not token IDs: {', '.join(str(t.id) for t in invalid[:10])}",
                                    "exit_code": code}
                elif missing:
                    doc["error"] = {"kind": "no-vocabulary", "message": "some IDs could not be decoded: no vocabulary",
                                    "exit_code": code}
                out.json("decode", doc)
            else:
                _render_tokens(out, infos, notes)
                if not invalid and not missing:
                    out.line("Joined: " + "".join(t.text or "" for t in infos))
            for t in invalid:
                out.note(f"error: {t.id} is not a token ID ({t.note})")
            if missing:
                out.note("error: some IDs could not be decoded: no vocabulary (see the note above)")
            return code

        run_command("decode", json_out, body)
