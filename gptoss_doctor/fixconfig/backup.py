"""fix-config: the backups every refresh leaves, and ``--restore``."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Optional

from gptoss_doctor.errors import UsageError
from gptoss_doctor.fixconfig.apply import _rel, _stage_file, _write_journal, locked, run_journal
from gptoss_doctor.fixconfig.durable import _adopt, _default_mode, deferred_signals, mkdirs, owned_by
from gptoss_doctor.fixconfig.locate import check_state_dir, inside, LocalModel, MAX_META, safe_target
from gptoss_doctor.fsread import read_capped, Unreadable


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
        if isinstance(manifest, dict) and isinstance(manifest.get("id"), str):
            out.append(manifest)
    return out

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
    bdir = model.state_dir / "backups" / chosen["id"]
    staging = model.state_dir / "staging" / ("restore-" + chosen["id"])
    root = model.root
    ops: list[dict] = []
    try:
        if chosen.get("kind") == "cache" and not chosen.get("in_place"):
            old_commit = chosen.get("old_commit")
            old_snap = root / "snapshots" / (old_commit or "")
            for e in chosen["files"]:  # re-create pruned blobs of the old snapshot from the backup copies
                if e.get("existed") and e.get("old_link"):
                    link = old_snap / e["path"]
                    if os.path.lexists(link) and not link.exists():
                        blob = Path(os.path.normpath(link.parent / os.readlink(link)))
                        if inside(root, blob):
                            staged = staging / "blobs" / blob.name
                            _stage_file(staged, (bdir / e["backup"]).read_bytes(), _default_mode())
                            ops.append({"kind": "replace", "staged": _rel(model, staged), "target": _rel(model, blob)})
            if chosen.get("ref"):
                refp = safe_target(root / "refs", chosen["ref"])
                before = chosen.get("old_ref_value")
                if before:
                    staged = staging / "refs" / chosen["ref"]
                    _stage_file(staged, before.encode(), None)
                    ops.append({"kind": "replace", "staged": _rel(model, staged), "target": _rel(model, refp)})
                else:
                    ops.append({"kind": "delete", "target": _rel(model, refp)})
        else:
            base = root / chosen["snapshot"] if chosen.get("kind") == "cache" else root
            for e in chosen["files"]:
                if chosen.get("kind") == "cache" and e.get("blob"):
                    target = root / e["blob"]
                else:
                    target = safe_target(base, e["path"])
                if e.get("existed"):
                    if chosen.get("kind") == "cache" and e.get("old_link"):
                        staged = staging / "links" / e["path"]
                        mkdirs(staged.parent)
                        if os.path.lexists(staged):
                            os.unlink(staged)
                        os.symlink(e["old_link"], staged)
                        _adopt(staged)
                    else:
                        staged = staging / "files" / e["path"]
                        _stage_file(staged, (bdir / e["backup"]).read_bytes(), e.get("mode"))
                    ops.append({"kind": "replace", "staged": _rel(model, staged), "target": _rel(model, target)})
                else:
                    ops.append({"kind": "delete", "target": _rel(model, target)})
                if e.get("meta"):
                    if e.get("meta_backup"):
                        staged = staging / ".meta" / e["path"]
                        _stage_file(staged, (bdir / e["meta_backup"]).read_bytes(), None)
                        ops.append({"kind": "replace", "staged": _rel(model, staged), "target": e["meta"]})
                    else:
                        ops.append({"kind": "delete", "target": e["meta"]})
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
