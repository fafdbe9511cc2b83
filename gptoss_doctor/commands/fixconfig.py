"""``gptoss-doctor fix-config``: refresh stale gpt-oss model files from the Hub; install the offline vocabulary."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from gptoss_doctor.commands._options import JsonFlag

HELP = """Compare a gpt-oss copy's small files (generation_config.json, chat_template.jinja, tokenizer files, ...)
with the Hub and refresh the stale ones safely.

PATH is a model folder, an HF-cache folder (models--openai--gpt-oss-20b or one of its snapshots/<sha>),
or a repo id looked up in the Hugging Face cache; with no argument every gpt-oss repo in the cache is checked.
Weight files are never read or changed. Nothing changes without --yes or a "y" at the prompt.

With --vocab DIR: write o200k_base.tiktoken into DIR from a local source (no network) and print
the TIKTOKEN_ENCODINGS_BASE line for vLLM / SGLang.

Exit codes: 0 up to date or fixed, 1 stale files left (e.g. --dry-run), 2 usage / folder not writable /
disk full, 3 Hub unreachable or HF_HUB_OFFLINE set, 4 gated repository or token rejected (401/403).
"""

STATUS_MARK = {"up-to-date": "pass", "stale": "fail", "missing": "fail", "modified-locally": "warn",
               "absent-upstream": "info", "weight": "skip", "skipped": "warn"}
STATUS_WORD = {"up-to-date": "up to date", "stale": "stale", "missing": "missing locally",
               "modified-locally": "modified locally", "absent-upstream": "not on the Hub",
               "weight": "weights", "skipped": "skipped"}


def register(app: typer.Typer) -> None:
    @app.command("fix-config", help=HELP, short_help="Refresh stale gpt-oss model files from the Hub.")
    def fix_config(
        target: Optional[str] = typer.Argument(None, metavar="[PATH | REPO_ID]", help="Model folder, HF-cache folder or repo id; default: every gpt-oss repo in the HF cache."),
        repo: Optional[str] = typer.Option(None, "--repo", metavar="REPO_ID", help="Upstream Hub repo (default: guessed; openai/gpt-oss-20b or openai/gpt-oss-120b)."),
        revision: str = typer.Option("main", "--revision", metavar="REV", help="Hub branch, tag or commit to compare with."),
        yes: bool = typer.Option(False, "--yes", "-y", help="Apply without asking."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Only report; change nothing (exit 1 if stale)."),
        force: bool = typer.Option(False, "--force", help="Also replace files modified locally (they are backed up)."),
        restore: bool = typer.Option(False, "--restore", help="Roll back the latest fix-config backup (or --backup ID)."),
        backup: Optional[str] = typer.Option(None, "--backup", metavar="ID", help="Backup to restore (see --restore --dry-run)."),
        vocab: Optional[str] = typer.Option(None, "--vocab", metavar="DIR", help="Write o200k_base.tiktoken into DIR from a local source and print the TIKTOKEN_ENCODINGS_BASE line."),
        vocab_source: Optional[str] = typer.Option(None, "--vocab-source", metavar="FILE", help="With --vocab: use this o200k_base.tiktoken or tokenizer.json."),
        json_mode: JsonFlag = False,
    ) -> None:
        from gptoss_doctor.entry import run_command

        def body(out) -> int:
            if vocab is not None or vocab_source is not None:
                if vocab is None:
                    from gptoss_doctor.errors import UsageError

                    raise UsageError("--vocab-source needs --vocab DIR")
                from gptoss_doctor.fixconfig.vocab import run_vocab

                return run_vocab(out, vocab, vocab_source, target, dry_run=dry_run, yes=yes)
            return _run(out, target, repo, revision, yes, dry_run, force, restore, backup)

        run_command("fix-config", json_mode, body)


def _ask(out, question: str) -> bool:
    if out.json_mode or not sys.stdin.isatty():
        return False
    try:
        out.stdout.write(question + " [y/N] ")
        out.stdout.flush()
        answer = sys.stdin.readline()
    except (EOFError, OSError):
        return False
    return answer.strip().lower() in ("y", "yes")


def _short(c: Optional[str]) -> str:
    return c[:7] if c else "?"


def _run(out, target, repo, revision, yes, dry_run, force, restore, backup) -> int:
    import shutil
    import tempfile
    from pathlib import Path

    from gptoss_doctor import fixconfig as fc
    from gptoss_doctor.fixconfig import hub as hf
    from gptoss_doctor.errors import UsageError
    from gptoss_doctor import settings

    if yes and dry_run:
        raise UsageError("--yes and --dry-run contradict each other")
    models = hf.find_models(target, repo)
    if restore:
        return _restore(out, models, backup, yes, dry_run)
    if backup:
        raise UsageError("--backup ID only goes with --restore")

    reports = []
    code = 0
    scratch = Path(tempfile.mkdtemp(prefix="gptoss-doctor-fix-"))
    try:
        for model in models:
            recovered = fc.recover(model, dry_run)
            if model.kind == "cache" and not model.pinned_snapshot:
                model = hf.find_models(str(model.root), repo)[0]  # refs may have moved
            if settings.hub_offline():
                hint = fc.local_eos_hint(model)
                from gptoss_doctor.errors import UnreachableError

                raise UnreachableError(
                    "HF_HUB_OFFLINE is set: cannot compare with the Hub",
                    hint=(hint + "; " if hint else "") + "unset HF_HUB_OFFLINE (and TRANSFORMERS_OFFLINE) to check and refresh; nothing was changed",
                )
            with out.progress(f"comparing {model.repo_id} with the Hub"):
                rep = fc.build_report(model, revision, scratch / str(len(reports)))
            rep.recovered = recovered
            reports.append(rep)
            _render(out, rep)

        outdated = [r for r in reports if r.outdated(force)]
        kept = [s.relpath for r in reports for s in r.kept_modified(force)]
        if not outdated:
            if not out.json_mode:
                out.line()
                if kept:
                    out.mark("warn", f"modified locally and kept: {', '.join(kept)} (replace them with --force; a backup is made)")
                else:
                    out.mark("pass", "everything is up to date" if len(reports) > 1 else "up to date with the Hub")
            code = 1 if kept else 0
        else:
            blocked = [r for r in outdated if r.blockers]
            if dry_run:
                code = 1
                if not out.json_mode:
                    out.line()
                    out.mark("fail", "stale files found; nothing changed (--dry-run)")
                    out.detail("apply with: " + _cmd(target, repo, revision, "--yes"), indent=2)
            elif blocked:
                code = 1
                for r in blocked:
                    out.note(f"error: {r.blockers[0]}")
            elif yes or _ask(out, "Apply these changes?"):
                for r in outdated:
                    try:
                        fc.apply(r, force=force)
                    except KeyboardInterrupt:
                        if r.applied:
                            out.note(f"{r.model.repo_id}: the refresh had completed before the interrupt (backup {r.backup_id})")
                        else:
                            out.note(f"{r.model.repo_id}: stopped before any file changed")
                        raise
                    _after(out, r)
                code = 0
                if kept:
                    code = 1
                    out.note(f"note: modified locally and kept: {', '.join(kept)} (replace them with --force)")
            else:
                code = 1
                if not out.json_mode:
                    out.line()
                    out.mark("fail", "stale files found; nothing changed")
                    out.detail("apply with: " + _cmd(target, repo, revision, "--yes"), indent=2)
        if out.json_mode:
            out.json("fix-config", {"ok": code == 0, "exit_code": code, "models": [r.to_json() for r in reports]})
        return code
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _cmd(target, repo, revision, *extra) -> str:
    import shlex

    parts = ["gptoss-doctor", "fix-config"]
    if target:
        parts.append(shlex.quote(target))
    if repo:
        parts += ["--repo", repo]
    if revision != "main":
        parts += ["--revision", revision]
    return " ".join(parts + list(extra))


def _render(out, rep) -> None:
    from gptoss_doctor import settings

    if out.json_mode:
        return
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
        text = f"{s.relpath.ljust(width)}  {STATUS_WORD.get(s.status, s.status)}"
        if s.relpath == "generation_config.json" and rep.eos and s.needs_update and (rep.eos["added"] or rep.eos["removed"]):
            text += f": {rep.eos['text']}"
        elif s.reason and s.status not in ("up-to-date",):
            text += f" ({s.reason})"
        out.mark(STATUS_MARK.get(s.status, "info"), text, indent=2)
        for line in rep.diffs.get(s.relpath, []):
            out.detail(line, indent=6)
    if m.kind == "cache" and rep.needs_snapshot and not rep.to_update(False):
        out.mark("warn", f"refs/{m.ref or 'main'} points at {_short(m.commit)}; the Hub is at {_short(rep.remote.commit)} (files identical)", indent=2)
    if m.pinned_snapshot and rep.needs_snapshot:
        out.detail(f"note: you named snapshots/{_short(m.commit)}; a fix writes snapshots/{_short(rep.remote.commit)} — point your server at the repo id or the new path", indent=2)
    for b in rep.blockers:
        out.mark("fail", b, indent=2)


def _after(out, rep) -> None:
    m = rep.model
    if out.json_mode:
        return
    out.line()
    out.mark("pass", f"{m.repo_id}: refreshed; backup {rep.backup_id} (undo: {_undo(rep)})")
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


def _undo(rep) -> str:
    m = rep.model
    tgt = str(m.root) if m.kind == "folder" else (m.repo_id or str(m.root))
    return f"gptoss-doctor fix-config {tgt} --restore --backup {rep.backup_id}"


def _restore(out, models, backup, yes, dry_run) -> int:
    from gptoss_doctor import fixconfig as fc
    from gptoss_doctor.errors import UsageError

    if len(models) != 1:
        raise UsageError("--restore needs one model: pass its folder or repo id")
    model = models[0]
    backups = fc.list_backups(model)
    if not backups and not dry_run:
        raise UsageError(f"no fix-config backup for {model.root}: nothing to restore")
    if dry_run:
        if not out.json_mode:
            out.heading(f"fix-config backups of {model.root}")
            for b in backups:
                out.detail(f"{b['id']}  {len(b.get('files', []))} file(s)" + (f"  {b.get('old_commit', '')[:7]} -> {b.get('new_commit', '')[:7]}" if b.get("kind") == "cache" else ""), indent=2)
            if not backups:
                out.detail("(none)", indent=2)
        if out.json_mode:
            out.json("fix-config", {"ok": True, "exit_code": 0, "backups": backups})
        return 0
    chosen = next((b for b in backups if b["id"] == backup), None) if backup else backups[-1]
    if chosen is None:
        raise UsageError(f"no backup {backup!r}; available: {', '.join(b['id'] for b in backups)}")
    if not (yes or _ask(out, f"Restore backup {chosen['id']} into {model.root}?")):
        out.note(f"nothing restored; run again with --yes to restore backup {chosen['id']}")
        if out.json_mode:
            out.json("fix-config", {"ok": False, "exit_code": 1, "restored": None})
        return 1
    fc.recover(model, dry_run=False)
    done = fc.restore(model, chosen["id"])
    if out.json_mode:
        out.json("fix-config", {"ok": True, "exit_code": 0, "restored": done["id"], "path": str(model.root)})
    else:
        out.mark("pass", f"restored backup {done['id']} in {model.root}; restart the servers that use it")
    return 0
