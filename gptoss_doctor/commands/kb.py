"""``kb``: list, show, search and validate the knowledge base."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from gptoss_doctor.commands._options import JsonFlag

from gptoss_doctor.output.sink import Output

kb_app = typer.Typer(help="Browse and validate the knowledge base of known gpt-oss serving issues.",
                     short_help="Browse the knowledge base of known issues.",
                     no_args_is_help=True, rich_markup_mode=None)


def _entry_lines(out: Output, e) -> None:
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
    out.heading("Fixes")
    for f in e.fix_lines():
        out.detail("- " + f, indent=2)
    out.heading("References")
    for r in e.references:
        out.detail(r["url"] + (f"  {r['title']}" if r.get("title") else ""), indent=2)


def register(app: typer.Typer) -> None:
    from gptoss_doctor.entry import run_command

    @kb_app.command("list", help="List the entries (optionally only one engine's).")
    def kb_list(engine: Optional[str] = typer.Option(None, "--engine", metavar="NAME", help="Only entries naming this engine."),
                json_out: JsonFlag = False) -> None:
        def body(out: Output) -> int:
            from gptoss_doctor import kb

            wanted = engine.strip().lower() if engine is not None else None
            if wanted is not None and wanted not in kb.ENGINES:
                from gptoss_doctor.errors import UsageError

                raise UsageError(f"unknown engine {engine!r}", hint="one of: " + ", ".join(kb.ENGINES))
            entries = [e for e in kb.load() if wanted is None or wanted in e.engines]
            if out.json_mode:
                out.json("kb list", {"ok": True, "entries": [{"id": e.id, "title": e.title, "engines": e.engines,
                                                             "origin": e.origin} for e in entries]})
                return 0
            out.table(["id", "engines", "origin", "title"],
                      [[e.id, ",".join(e.engines), e.origin, e.title] for e in entries])
            out.line()
            out.line(f"{len(entries)} entries")
            return 0

        run_command("kb list", json_out, body)

    @kb_app.command("show", help="Show one entry in full.")
    def kb_show(entry_id: str = typer.Argument(..., help="Entry id (see 'kb list')."),
                json_out: JsonFlag = False) -> None:
        def body(out: Output) -> int:
            from gptoss_doctor import kb

            e = kb.get(entry_id)
            if out.json_mode:
                out.json("kb show", {"ok": True, "entry": e.to_json()})
            else:
                _entry_lines(out, e)
            return 0

        run_command("kb show", json_out, body)

    @kb_app.command("search", help="Find entries by words, an error message, or a symptom.")
    def kb_search(words: List[str] = typer.Argument(..., help="Words or an error message."),
                  top: int = typer.Option(8, "--top", metavar="N", min=1, max=100),
                  json_out: JsonFlag = False) -> None:
        def body(out: Output) -> int:
            from gptoss_doctor.explain import match as matching

            query = " ".join(words)
            found = matching.match_text(query, limit=top, min_score=0.05) if query.strip() else []
            if out.json_mode:
                out.json("kb search", {"ok": True, "query": query, "matches": [m.to_json() for m in found]})
                return 0
            if not found:
                out.line("no matching entries")
                return 0
            out.table(["score", "id", "title"], [[f"{m.score:.2f}", m.entry.id, m.entry.title] for m in found])
            return 0

        run_command("kb search", json_out, body)

    @kb_app.command("validate", help="Check every entry against the schema (exit 2 when invalid).")
    def kb_validate(path: Optional[Path] = typer.Argument(None, help="A knowledge folder (default: the built-in one)."),
                    json_out: JsonFlag = False) -> None:
        def body(out: Output) -> int:
            from gptoss_doctor import kb

            directory = path or kb.knowledge_dir()
            entries, errs = kb.validate_dir(directory)
            if out.json_mode:
                out.json("kb validate", {"ok": not errs, "path": str(directory), "entries": len(entries), "problems": errs})
            else:
                for err in errs:
                    out.mark("fail", err)
                out.mark("fail" if errs else "pass",
                         f"{len(entries)} valid entries in {directory}" + (f", {len(errs)} problems" if errs else ""))
            return 2 if errs else 0

        run_command("kb validate", json_out, body)

    app.add_typer(kb_app, name="kb")
