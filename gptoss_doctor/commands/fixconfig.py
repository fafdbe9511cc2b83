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


def _run(out, target, repo, revision, yes, dry_run, force, restore, backup) -> int:
    import shutil
    import tempfile
    from pathlib import Path

    from gptoss_doctor import fixconfig as fc
    from gptoss_doctor import settings
    from gptoss_doctor.errors import UsageError
    from gptoss_doctor.fixconfig import locate
    from gptoss_doctor.fixconfig import results as R
    from gptoss_doctor.output import emit, human

    if yes and dry_run:
        raise UsageError("--yes and --dry-run contradict each other")
    models = locate.find_models(target, repo)
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
                model = locate.find_models(str(model.root), repo)[0]  # refs may have moved
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
            if not out.json_mode:
                human.fixconfig_model(out, rep)

        outdated = [r for r in reports if r.outdated(force)]
        kept = [s.relpath for r in reports for s in r.kept_modified(force)]
        unchecked = [f"{s.relpath} ({s.reason})" for r in reports for s in r.unchecked]
        apply_with = _cmd(target, repo, revision, "--yes")
        if not outdated:
            outcome, code = (R.UNCHECKED, 1) if unchecked else (R.KEPT, 1) if kept else (R.UP_TO_DATE, 0)
        elif dry_run:
            outcome, code = R.DRY_RUN, 1
        elif any(r.blockers for r in outdated):
            outcome, code = R.BLOCKED, 1
            for r in outdated:
                if r.blockers:
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
                if not out.json_mode:
                    human.fixconfig_applied(out, r)
            outcome, code = R.APPLIED, (1 if kept or unchecked else 0)
            if kept:
                out.note(f"note: modified locally and kept: {', '.join(kept)} (replace them with --force)")
            if unchecked:
                out.note(f"note: not checked: {', '.join(unchecked)}")
        else:
            outcome, code = R.DECLINED, 1
        return emit(out, R.FixConfigRun(reports, outcome, code, kept, apply_with, unchecked))
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


def _restore(out, models, backup, yes, dry_run) -> int:
    from gptoss_doctor import fixconfig as fc
    from gptoss_doctor.errors import UsageError
    from gptoss_doctor.fixconfig import results as R
    from gptoss_doctor.output import emit

    if len(models) != 1:
        raise UsageError("--restore needs one model: pass its folder or repo id")
    model = models[0]
    backups = fc.list_backups(model)
    if not backups and not dry_run:
        raise UsageError(f"no fix-config backup for {model.root}: nothing to restore")
    if dry_run:
        return emit(out, R.FixConfigRestore(str(model.root), backups=backups))
    chosen = next((b for b in backups if b["id"] == backup), None) if backup else backups[-1]
    if chosen is None:
        raise UsageError(f"no backup {backup!r}; available: {', '.join(b['id'] for b in backups)}")
    if not (yes or _ask(out, f"Restore backup {chosen['id']} into {model.root}?")):
        out.note(f"nothing restored; run again with --yes to restore backup {chosen['id']}")
        return emit(out, R.FixConfigRestore(str(model.root)))
    fc.recover(model, dry_run=False)
    done = fc.restore(model, chosen["id"])
    return emit(out, R.FixConfigRestore(str(model.root), restored=done["id"]))
