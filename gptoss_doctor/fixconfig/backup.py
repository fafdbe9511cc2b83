"""fix-config: the backups every refresh leaves, and ``--restore``."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Optional

from gptoss_doctor import rx as _rx
from gptoss_doctor.errors import UsageError
from gptoss_doctor.fixconfig.apply import _rel, _stage_file, _write_journal, locked, run_journal
from gptoss_doctor.fixconfig.durable import _adopt, _default_mode, deferred_signals, mkdirs, owned_by
from gptoss_doctor.fixconfig.locate import check_state_dir, inside, LocalModel, MAX_META, MAX_SMALL_FILE, safe_target
from gptoss_doctor.fsread import read_capped, Unreadable

# A manifest is a file in the model's folder, and anyone who can write there can write it: nothing in it is trusted.
# Its id must be the name of the folder it lies in, the copies it names must be regular files inside that backup,
# every path it names must stay inside the model folder (no '..', no absolute path, no symlinked folder on the
# way), and a link it re-creates must point inside the model folder.
NAME_RE = _rx.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def list_backups(model: LocalModel) -> list[dict]:
    check_state_dir(model)
    out = []
    bdir = model.state_dir / "backups"
    if not bdir.is_dir():
        return out
    for d in sorted(bdir.iterdir()):
        try:
            manifest = json.loads(read_capped(d / "manifest.json", MAX_META, follow_symlinks=False))
        except (Unreadable, OSError, ValueError, RecursionError):
            continue
        if isinstance(manifest, dict) and manifest.get("id") == d.name and NAME_RE.match(d.name) \
                and isinstance(manifest.get("files", []), list):
            out.append(manifest)
    return out


def _copy(bdir: Path, rel: object) -> bytes:
    """A copy the backup holds: a regular file inside the backup folder (not a link out of it, not '..')."""
    if not isinstance(rel, str):
        raise UsageError("a fix-config backup manifest names a copy that is not a path; refusing to restore it")
    path = safe_target(bdir, rel)
    try:
        return read_capped(path, MAX_SMALL_FILE, follow_symlinks=False)
    except Unreadable as exc:
        raise UsageError(f"the backup copy {rel} is not a regular file inside the backup ({exc}); "
                         "refusing to restore it") from None


def _target(root: Path, rel: object) -> Path:
    if not isinstance(rel, str):
        raise UsageError("a fix-config backup manifest names a target that is not a path; refusing to restore it")
    return safe_target(root, rel)


def _link_inside(root: Path, link: Path, value: object) -> str:
    """The value of a link to re-create at ``link``: it must resolve inside the model folder."""
    if not isinstance(value, str) or not value or os.path.isabs(value) or \
            not inside(Path(os.path.normpath(root)), Path(os.path.normpath(link.parent / value))):
        raise UsageError(f"the backup would re-create {link.name} as a link out of the model folder ({value!r}); "
                         "refusing to restore it")
    return value

def _restore_locked(model: LocalModel, backup_id: Optional[str]) -> dict:
    backups = list_backups(model)
    if not backups:
        raise UsageError(f"no fix-config backup in {model.state_dir / 'backups'}")
    if backup_id:
        chosen = next((b for b in backups if b.get("id") == backup_id), None)
        if chosen is None:
            raise UsageError(f"no backup {backup_id!r}; available: {', '.join(b['id'] for b in backups)}")
    else:
        chosen = backups[-1]
    files = chosen.get("files", [])  # a list (list_backups); each entry is read with .get below
    if not all(isinstance(e, dict) for e in files):
        raise UsageError("a fix-config backup manifest entry is not a mapping; refusing to restore it")
    bdir = model.state_dir / "backups" / chosen["id"]
    staging = model.state_dir / "staging" / ("restore-" + chosen["id"])
    root = model.root
    ops: list[dict] = []
    try:
        if chosen.get("kind") == "cache" and not chosen.get("in_place"):
            old_commit = chosen.get("old_commit")
            if not isinstance(old_commit, str) or not NAME_RE.match(old_commit):
                raise UsageError("the backup manifest names no valid old snapshot; refusing to restore it")
            old_snap = root / "snapshots" / old_commit
            for e in files:  # re-create pruned blobs of the old snapshot from the backup copies
                if e.get("existed") and e.get("old_link"):
                    link = _target(old_snap, e.get("path"))
                    if os.path.lexists(link) and not link.exists():
                        blob = Path(os.path.normpath(link.parent / os.readlink(link)))
                        if inside(root, blob):
                            staged = staging / "blobs" / blob.name
                            _stage_file(staged, _copy(bdir, e.get("backup")), _default_mode())
                            ops.append({"kind": "replace", "staged": _rel(model, staged), "target": _rel(model, blob)})
            if chosen.get("ref"):
                refp = _target(root / "refs", chosen["ref"])
                before = chosen.get("old_ref_value")
                if isinstance(before, str) and before:
                    staged = staging / "refs" / chosen["ref"]
                    _stage_file(staged, before.encode(), None)
                    ops.append({"kind": "replace", "staged": _rel(model, staged), "target": _rel(model, refp)})
                else:
                    ops.append({"kind": "delete", "target": _rel(model, refp)})
        else:
            base = _target(root, chosen.get("snapshot")) if chosen.get("kind") == "cache" else root
            for e in files:
                target = _target(base, e.get("path"))  # also where its staged copy goes: never '..'
                if chosen.get("kind") == "cache" and e.get("blob"):
                    target = _target(root, e["blob"])
                if e.get("existed"):
                    if chosen.get("kind") == "cache" and e.get("old_link"):
                        staged = staging / "links" / e["path"]
                        mkdirs(staged.parent)
                        if os.path.lexists(staged):
                            os.unlink(staged)
                        os.symlink(_link_inside(root, target, e["old_link"]), staged)
                        _adopt(staged)
                    else:
                        staged = staging / "files" / e["path"]
                        mode = e.get("mode")
                        _stage_file(staged, _copy(bdir, e.get("backup")),
                                    mode & 0o777 if isinstance(mode, int) and not isinstance(mode, bool) else None)
                    ops.append({"kind": "replace", "staged": _rel(model, staged), "target": _rel(model, target)})
                else:
                    ops.append({"kind": "delete", "target": _rel(model, target)})
                if e.get("meta"):
                    meta = _rel(model, _target(root, e["meta"]))
                    if e.get("meta_backup"):
                        staged = staging / ".meta" / e["path"]
                        _stage_file(staged, _copy(bdir, e["meta_backup"]), None)
                        ops.append({"kind": "replace", "staged": _rel(model, staged), "target": meta})
                    else:
                        ops.append({"kind": "delete", "target": meta})
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    journal = {"id": "restore-" + chosen["id"], "ops": ops}
    with deferred_signals():
        _write_journal(model, journal)
        run_journal(model, journal)
    return chosen

def restore(model: LocalModel, backup_id: Optional[str]) -> dict:
    with owned_by(model.root), locked(model):
        return _restore_locked(model, backup_id)
