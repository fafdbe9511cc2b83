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
        from gptoss_doctor.explain import well_formed

        text = well_formed(text)  # bytes that are not UTF-8 reach Python as lone surrogates: U+FFFD, not a crash
    if text == "-" or (text is None and not sys.stdin.isatty()):
        return "stream", sys.stdin.buffer
    if text is None:
        raise UsageError("nothing to explain: give the error text, --file PATH, or pipe it in (see --help)")
    if not text.strip():
        raise UsageError("the text to explain is empty")
    return "text", text


def _online_leads(ex) -> dict:
    """GitHub issue-search hits for the normalised message, only when no known issue is confident."""
    hint = ex.search_hint()
    if hint is None:
        reason = "a known issue matched" if ex.confident else "no error message to search for"
        return {"searched": False, "reason": reason, "leads": [], "problems": []}
    from gptoss_doctor.explain import online

    leads, problems = online.search(hint["query"], [t["repo"] for t in hint["trackers"]],
                                    phrase=hint["phrase"])
    return {"searched": True, "query": hint["query"], "api": online.api_base(),
            "leads": [lead.to_json() for lead in leads], "problems": problems}


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
            from gptoss_doctor.output import emit
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
            return emit(out, explain.ExplainResult(ex, leads, verbose))

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
            from gptoss_doctor.harmony.tokens import MAX_DECODE_IDS, DecodeResult, decode_ids
            from gptoss_doctor.output import emit

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
            if len(values) > MAX_DECODE_IDS:
                raise UsageError(f"too many IDs ({len(values)}); decode at most {MAX_DECODE_IDS} at once")
            infos, notes = decode_ids(values, vocab_path=vocab, url=url, model=model, allow_download=not offline,
                                      api_key=os.environ.get("OPENAI_API_KEY"))
            result = DecodeResult(infos, notes)
            emit(out, result)
            for t in result.invalid:
                out.note(f"error: {t.id} is not a token ID ({t.note})")
            if result.missing:
                out.note("error: some IDs could not be decoded: no vocabulary (see the note above)")
            return result.exit_code

        run_command("decode", json_out, body)
