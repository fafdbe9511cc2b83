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


def register(app: typer.Typer) -> None:
    from gptoss_doctor.entry import run_command
    from gptoss_doctor.output import emit

    @kb_app.command("list", help="List the entries (optionally only one engine's).")
    def kb_list(engine: Optional[str] = typer.Option(None, "--engine", metavar="NAME", help="Only entries naming this engine."),
                json_out: JsonFlag = False) -> None:
        def body(out: Output) -> int:
            from gptoss_doctor import kb
            from gptoss_doctor.kb.results import KbList

            wanted = engine.strip().lower() if engine is not None else None
            if wanted is not None and wanted not in kb.ENGINES:
                from gptoss_doctor.errors import UsageError

                raise UsageError(f"unknown engine {engine!r}", hint="one of: " + ", ".join(kb.ENGINES))
            return emit(out, KbList([e for e in kb.load() if wanted is None or wanted in e.engines]))

        run_command("kb list", json_out, body)

    @kb_app.command("show", help="Show one entry in full.")
    def kb_show(entry_id: str = typer.Argument(..., help="Entry id (see 'kb list')."),
                json_out: JsonFlag = False) -> None:
        def body(out: Output) -> int:
            from gptoss_doctor import kb
            from gptoss_doctor.kb.results import KbShow

            return emit(out, KbShow(kb.get(entry_id), entry_id))

        run_command("kb show", json_out, body)

    @kb_app.command("search", help="Find entries by words, an error message, or a symptom.")
    def kb_search(words: List[str] = typer.Argument(..., help="Words or an error message."),
                  top: int = typer.Option(8, "--top", metavar="N", min=1, max=100),
                  json_out: JsonFlag = False) -> None:
        def body(out: Output) -> int:
            from gptoss_doctor.explain import match as matching
            from gptoss_doctor.kb.results import KbSearch

            query = " ".join(words)
            found = matching.match_text(query, limit=top, min_score=0.05) if query.strip() else []
            return emit(out, KbSearch(query, found))

        run_command("kb search", json_out, body)

    @kb_app.command("validate", help="Check every entry against the schema (exit 2 when invalid).")
    def kb_validate(path: Optional[Path] = typer.Argument(None, help="A knowledge folder (default: the built-in one)."),
                    json_out: JsonFlag = False) -> None:
        def body(out: Output) -> int:
            from gptoss_doctor import kb
            from gptoss_doctor.kb.results import KbValidate

            directory = path or kb.knowledge_dir()
            entries, errs = kb.validate_dir(directory)
            return emit(out, KbValidate(str(directory), len(entries), errs))

        run_command("kb validate", json_out, body)

    app.add_typer(kb_app, name="kb")
