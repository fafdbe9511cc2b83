"""fix-config, stage 4 (apply): stage new files beside the model, back up the old ones, write the journal, then
rename with signals deferred; any later run finishes an interrupted journal first (``recover``)."""

from __future__ import annotations

import json
import os
import shutil
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

from gptoss_doctor.errors import DoctorError, UsageError
from gptoss_doctor.fixconfig.compare import ABSENT_UPSTREAM, SKIPPED, FileStatus
from gptoss_doctor.fixconfig.durable import (
    _adopt, _crash_point, _default_mode, _fsync_dir, deferred_signals, mkdirs, owned_by, write_durable,
)
from gptoss_doctor.fixconfig.locate import check_state_dir, inside, is_commit, LocalModel, safe_target, walk_bounded
from gptoss_doctor.fixconfig.plan import ModelReport


JOURNAL = "journal.json"

def _journal_path(model: LocalModel) -> Path:
    return model.state_dir / JOURNAL

@contextmanager
def locked(model: LocalModel) -> Iterator[None]:
    """One fix-config at a time per model copy (an advisory lock in its state folder)."""
    import fcntl

    check_state_dir(model)
    lock = model.state_dir / "lock"
    try:
        mkdirs(model.state_dir)
        # O_NOFOLLOW: a (dangling) symlink named lock must not create or open a file wherever it points
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o644)
    except PermissionError as exc:
        raise UsageError(f"{model.root} is read-only: cannot refresh files there", hint="nothing was changed") from exc
    except OSError as exc:
        raise UsageError(f"cannot use the lock file {lock}: {exc.strerror or exc} (a symlink is never followed)",
                         hint="nothing was changed; remove it") from exc
    try:
        _adopt(lock)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise UsageError(f"another fix-config is working on {model.root}; try again when it is done") from exc
        yield
    finally:
        os.close(fd)

def _inside_root(root: Path, rel: str) -> Path:
    p = Path(os.path.normpath(root / rel))
    if not inside(Path(os.path.normpath(root)), p):
        raise DoctorError(f"fix-config journal names a path outside {root}: {rel}; refusing it")
    return p

def run_journal(model: LocalModel, journal: dict) -> None:
    root = model.root
    for op in journal["ops"]:  # validate everything before touching anything
        _inside_root(root, op["target"])
        if op.get("staged"):
            _inside_root(root, op["staged"])
    with deferred_signals():
        for op in journal["ops"]:
            target = root / op["target"]
            if op["kind"] == "replace":
                staged = root / op["staged"]
                if os.path.lexists(staged):
                    mkdirs(target.parent)
                    os.replace(staged, target)
                    _fsync_dir(target.parent)
            elif op["kind"] == "delete":
                if os.path.lexists(target):
                    os.unlink(target)
                    _fsync_dir(target.parent)
            _crash_point("op")
        _crash_point("ops-done")
        jp = _journal_path(model)
        try:
            os.unlink(jp)
        except FileNotFoundError:
            pass
        _fsync_dir(jp.parent)
    shutil.rmtree(model.state_dir / "staging", ignore_errors=True)

def recover(model: LocalModel, dry_run: bool) -> Optional[str]:
    """Finish an apply that was interrupted after its journal was written."""
    check_state_dir(model)  # a linked state folder is refused before anything in it is read or removed
    jp = _journal_path(model)
    if not jp.exists():
        if not dry_run and (model.state_dir / "staging").exists():
            shutil.rmtree(model.state_dir / "staging", ignore_errors=True)  # an apply stopped before deciding
        return None
    try:
        journal = json.loads(jp.read_text())
    except (OSError, ValueError) as exc:
        raise DoctorError(f"unreadable fix-config journal {jp}: {exc}", hint="inspect it, then delete it") from exc
    if dry_run:
        return f"pending:{journal.get('id')}"
    with owned_by(model.root), locked(model):
        if jp.exists():
            run_journal(model, journal)
    return str(journal.get("id"))

def _write_journal(model: LocalModel, journal: dict) -> None:
    write_durable(_journal_path(model), json.dumps(journal, indent=1).encode())
    _crash_point("journal")

def _new_id(state_dir: Path) -> str:
    base = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    bid, n = base, 1
    while (state_dir / "backups" / bid).exists():
        n += 1
        bid = f"{base}-{n}"
    return bid

def _check_writable(model: LocalModel, needed: int) -> None:
    root = model.root
    probe_dirs = [root] if model.kind == "folder" else [root, root / "blobs", root / "snapshots", root / "refs"]
    for d in probe_dirs:
        if d.exists() and not os.access(d, os.W_OK | os.X_OK):
            raise UsageError(
                f"{d} is read-only: cannot refresh files there",
                hint="nothing was changed; run as a user who can write it, or put the Hub's generation_config.json in a "
                     "folder of your own and start vLLM with --generation-config <that folder>",
            )
    try:
        free = shutil.disk_usage(root).free
    except OSError:
        return
    required = needed * 2 + (1 << 20)  # the new files, their backups, and 1 MiB of room for the journal
    if free < required:
        raise UsageError(f"not enough free disk space in {root}: {_size(free)} free, {_size(required)} needed "
                         f"(the new files, their backups and 1 MiB of room)", hint="nothing was changed")

def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} bytes"

def _rel(model: LocalModel, p: Path) -> str:
    return os.path.relpath(p, model.root)

def apply(rep: ModelReport, force: bool = False) -> None:
    model = rep.model
    if rep.blockers:
        raise DoctorError(rep.blockers[0], exit_code=1, hint="nothing was changed")
    updates = rep.to_update(force)
    needed = sum(len(rep.new_content.get(s.relpath, b"")) for s in updates)
    _check_writable(model, needed)
    with owned_by(model.root), locked(model):
        _apply_locked(rep, updates)

def _apply_locked(rep: ModelReport, updates: list[FileStatus]) -> None:
    model = rep.model
    bid = _new_id(model.state_dir)
    staging = model.state_dir / "staging" / bid
    backup = model.state_dir / "backups" / bid
    try:
        if model.kind == "folder":
            ops, manifest = _stage_folder(rep, updates, staging, backup)
        else:
            ops, manifest = _stage_cache(rep, updates, staging, backup)
        manifest.update({"id": bid, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                         "repo_id": model.repo_id, "kind": model.kind,
                         "hub_commit": rep.remote.commit if rep.remote else None})
        write_durable(backup / "manifest.json", json.dumps(manifest, indent=1).encode())
        _crash_point("backed-up")
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(backup, ignore_errors=True)
        if isinstance(exc, OSError) and exc.errno == 28:
            raise UsageError(f"disk full while staging in {model.root}", hint="nothing was changed") from exc
        if isinstance(exc, PermissionError):
            raise UsageError(f"permission denied writing in {model.root}: {exc.filename}", hint="nothing was changed") from exc
        raise
    rep.backup_id = bid
    with deferred_signals():  # from the journal on, Ctrl-C waits for the swap to finish
        _write_journal(model, {"id": bid, "ops": ops})
        try:
            run_journal(model, {"id": bid, "ops": ops})
        finally:
            rep.applied = not _journal_path(model).exists()

def _stage_file(path: Path, data: bytes, mode: Optional[int]) -> None:
    write_durable(path, data, mode)
    if path.read_bytes() != data:  # re-read what the disk holds
        raise DoctorError(f"staged copy of {path.name} does not read back identically", hint="nothing was changed")
    _crash_point("staged")

def _stage_folder(rep: ModelReport, updates: list[FileStatus], staging: Path, backup: Path):
    model = rep.model
    root = model.root
    ops: list[dict] = []
    entries: list[dict] = []
    meta_dir = root / ".cache" / "huggingface" / "download"
    for st in updates:
        target = safe_target(root, st.relpath)
        if target.is_symlink():
            raise UsageError(f"refusing to replace symlink {target}", hint="nothing was changed")
        existed = target.exists()
        mode = (target.stat().st_mode & 0o7777) if existed else _default_mode()
        staged = staging / st.relpath
        _stage_file(staged, rep.new_content[st.relpath], mode)
        ops.append({"kind": "replace", "staged": _rel(model, staged), "target": st.relpath})
        entry = {"path": st.relpath, "existed": existed, "mode": mode}
        if existed:
            write_durable(backup / "files" / st.relpath, target.read_bytes(), mode)
            entry["backup"] = "files/" + st.relpath
        # keep `hf download --local-dir` metadata truthful
        meta = meta_dir / (st.relpath + ".metadata")
        if meta_dir.is_dir() and not meta.is_symlink():
            if meta.exists():
                write_durable(backup / "meta" / (st.relpath + ".metadata"), meta.read_bytes())
                entry["meta_backup"] = "meta/" + st.relpath + ".metadata"
            body = f"{rep.remote.commit}\n{st.remote.etag}\n{time.time()}\n".encode()
            smeta = staging / ".meta" / (st.relpath + ".metadata")
            _stage_file(smeta, body, None)
            ops.append({"kind": "replace", "staged": _rel(model, smeta), "target": _rel(model, meta)})
            entry["meta"] = _rel(model, meta)
        entries.append(entry)
    return ops, {"files": entries}

def _stage_cache(rep: ModelReport, updates: list[FileStatus], staging: Path, backup: Path):
    model = rep.model
    root = model.root
    remote = rep.remote
    old_snap = model.files_dir
    in_place = not rep.needs_snapshot
    new_snap = old_snap if in_place else root / "snapshots" / remote.commit
    ops: list[dict] = []
    entries: list[dict] = []
    update_names = {s.relpath for s in updates}
    link_ops: list[dict] = []
    blob_done: set[str] = set()

    def stage_blob(etag: str, data: bytes, mode: Optional[int]) -> None:
        blob = root / "blobs" / etag
        if etag in blob_done:
            return
        blob_done.add(etag)
        if blob.exists() and not blob.is_symlink():
            try:
                if rep.remote and len(data) == blob.stat().st_size and blob.read_bytes() == data:
                    return  # already present and correct (e.g. a re-run)
            except OSError:
                pass
        staged = staging / "blobs" / etag
        _stage_file(staged, data, mode if mode is not None else _default_mode())
        ops.append({"kind": "replace", "staged": _rel(model, staged), "target": _rel(model, blob)})

    def stage_link(rel: str, link_text: str) -> None:
        target = safe_target(new_snap, rel)
        if target.is_symlink() and os.readlink(target) == link_text:
            return
        staged = staging / "links" / rel
        mkdirs(staged.parent)
        if os.path.lexists(staged):
            os.unlink(staged)
        os.symlink(link_text, staged)
        _adopt(staged)
        link_ops.append({"kind": "replace", "staged": _rel(model, staged), "target": _rel(model, target)})

    def link_text_for(rel: str, etag: str) -> str:
        return os.path.relpath(root / "blobs" / etag, (new_snap / rel).parent)

    # A cache written without symlinks (HF_HUB_DISABLE_SYMLINKS, Windows): snapshot files are plain files; keep it so.
    entries_on_disk = [old_snap / r for r in walk_bounded(old_snap)] if old_snap.is_dir() else []
    plain = bool(entries_on_disk) and not any(p.is_symlink() for p in entries_on_disk)

    for st in rep.statuses:
        rel = st.relpath
        lf = st.local
        if rel in update_names and plain:
            data = rep.new_content[rel]
            target = safe_target(new_snap, rel)
            mode = lf.mode if lf and lf.mode is not None else _default_mode()
            staged = staging / "files" / rel
            _stage_file(staged, data, mode)
            if in_place and lf is not None and lf.exists:
                write_durable(backup / "files" / rel, rep.old_content.get(rel, b""), lf.mode)
                entries.append({"path": rel, "existed": True, "backup": "files/" + rel, "mode": lf.mode})
            elif lf is not None and lf.exists:
                write_durable(backup / "files" / rel, rep.old_content.get(rel, b""), lf.mode)
                entries.append({"path": rel, "existed": True, "backup": "files/" + rel})
            else:
                entries.append({"path": rel, "existed": False})
            link_ops.append({"kind": "replace", "staged": _rel(model, staged), "target": _rel(model, target)})
            continue
        if rel in update_names:
            data = rep.new_content[rel]
            stage_blob(st.remote.etag, data, lf.mode if lf and lf.mode is not None else None)
            if in_place and lf is not None and lf.exists and lf.blob_name == st.remote.etag:
                # the blob itself was edited: its correct content is staged above; keep a copy of the edit
                write_durable(backup / "files" / rel, rep.old_content.get(rel, b""), lf.mode)
                entries.append({"path": rel, "existed": True, "backup": "files/" + rel, "blob": _rel(model, root / "blobs" / st.remote.etag)})
                continue
            if lf is not None and lf.exists:
                write_durable(backup / "files" / rel, rep.old_content.get(rel, b""), lf.mode)
                entries.append({"path": rel, "existed": True, "backup": "files/" + rel,
                                "old_link": os.readlink(old_snap / rel) if (old_snap / rel).is_symlink() else None})
            else:
                entries.append({"path": rel, "existed": False})
            stage_link(rel, link_text_for(rel, st.remote.etag))
        elif not in_place and lf is not None and lf.exists:
            # carried over unchanged into the new snapshot (weights: by link, never opened)
            src = old_snap / rel
            if src.is_symlink():
                stage_link(rel, os.readlink(src) if st.status in (SKIPPED, ABSENT_UPSTREAM) or not st.remote
                           else link_text_for(rel, lf.blob_name if lf.blob_name else st.remote.etag))
            else:  # a cache without symlinks: hard-link the same inode, no copy, no read
                tgt = safe_target(new_snap, rel)
                if not tgt.exists():
                    staged = staging / "links" / rel
                    mkdirs(staged.parent)
                    os.link(src, staged)
                    link_ops.append({"kind": "replace", "staged": _rel(model, staged), "target": _rel(model, tgt)})
    ops.extend(link_ops)
    manifest: dict = {"files": entries, "in_place": in_place, "old_commit": model.commit, "new_commit": remote.commit,
                      "snapshot": _rel(model, new_snap)}
    if not in_place and not is_commit(remote.revision):
        ref = remote.revision
        refp = safe_target(root / "refs", ref)
        manifest["ref"] = ref
        manifest["old_ref_value"] = refp.read_text().strip() if refp.exists() else None
        staged = staging / "refs" / ref
        _stage_file(staged, remote.commit.encode(), None)
        ops.append({"kind": "replace", "staged": _rel(model, staged), "target": _rel(model, refp)})  # the switch: last
    rep.result_path = new_snap
    return ops, manifest
