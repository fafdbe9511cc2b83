"""fix-config, stage 3 (plan): the report of one copy — what is stale, what would be downloaded, what blocks a
refresh — built in a scratch folder so that a failure changes nothing."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from gptoss_doctor import settings
from gptoss_doctor.errors import UsageError
from gptoss_doctor.redact import redact
from gptoss_doctor.fixconfig.compare import (
    MISSING, MODIFIED, SKIPPED, STALE, UP_TO_DATE, WEIGHT, compare, eos_change, FileStatus, text_diff,
)
from gptoss_doctor.fixconfig.hub import download_verified, fetch_remote, RemoteState
from gptoss_doctor.fixconfig.locate import (
    CORE_FILES, inside, inventory, is_weight, LocalModel, MAX_META, read_compared,
)
from gptoss_doctor.fsread import read_capped, Unreadable


@dataclass
class ModelReport:
    model: LocalModel
    remote: Optional[RemoteState] = None
    statuses: list[FileStatus] = field(default_factory=list)
    new_content: dict[str, bytes] = field(default_factory=dict)
    old_content: dict[str, bytes] = field(default_factory=dict)
    diffs: dict[str, list[str]] = field(default_factory=dict)
    eos: Optional[dict] = None
    blockers: list[str] = field(default_factory=list)
    recovered: Optional[str] = None
    applied: bool = False
    backup_id: Optional[str] = None
    result_path: Optional[Path] = None

    def to_update(self, force: bool) -> list[FileStatus]:
        return [s for s in self.statuses if s.status in (STALE, MISSING) or (force and s.status == MODIFIED)]

    @property
    def needs_snapshot(self) -> bool:
        """Cache copy whose snapshot is not the Hub commit: a new snapshot + ref switch is needed."""
        m = self.model
        return m.kind == "cache" and self.remote is not None and m.commit != self.remote.commit

    @property
    def unchecked(self) -> list[FileStatus]:
        """Files the Hub has (or every copy needs) that were skipped, so never compared: a copy with one of these
        is not "up to date" (weights are never read, so they are not counted)."""
        return [s for s in self.statuses if s.status == SKIPPED and not is_weight(s.relpath)
                and (s.remote is not None or s.relpath in CORE_FILES)]

    def kept_modified(self, force: bool) -> list[FileStatus]:
        return [] if force else [s for s in self.statuses if s.status == MODIFIED]

    def outdated(self, force: bool = False) -> bool:
        if self.to_update(force):
            return True
        if self.needs_snapshot and not self.model.pinned_snapshot:
            return True
        return False

    def to_json(self) -> dict:
        m = self.model
        return {
            "path": str(m.root),
            "kind": m.kind,
            "repo_id": m.repo_id,
            "repo_source": m.repo_source,
            "local_commit": m.commit,
            "ref": m.ref,
            "endpoint": redact(settings.hub_endpoint()),
            "revision": self.remote.revision if self.remote else None,
            "hub_commit": self.remote.commit if self.remote else None,
            "files": [
                {
                    "path": s.relpath,
                    "status": s.status,
                    "reason": s.reason,
                    "local_sha1": s.local.sha1 if s.local else None,
                    "hub_etag": s.remote.etag if s.remote else None,
                    "hub_size": s.remote.size if s.remote else None,
                    **({"diff": self.diffs[s.relpath]} if s.relpath in self.diffs else {}),
                }
                for s in self.statuses
            ],
            "eos_token_id": self.eos,
            "blockers": self.blockers,
            "not_checked": [s.relpath for s in self.unchecked],
            "recovered_interrupted_apply": self.recovered,
            "applied": self.applied,
            "backup_id": self.backup_id,
            "result_path": str(self.result_path) if self.result_path else None,
            "next_steps": self.next_steps() if self.applied else [],
        }

    def next_steps(self) -> list[str]:
        m = self.model
        served = m.repo_id if m.kind == "cache" else str(m.root)
        return [
            "restart every server that loaded this model (vLLM reads generation_config.json only at start-up)",
            f"vllm serve {served}",
            "a server started with --generation-config DIR reads DIR/generation_config.json: refresh that copy too",
            "gptoss-doctor check http://127.0.0.1:8000",
        ]

def build_report(model: LocalModel, revision: str, scratch: Path) -> ModelReport:
    """Compare a copy with the Hub; download (to ``scratch``) only the files whose hash differs."""
    rep = ModelReport(model=model)
    if not model.repo_id:
        raise UsageError(f"cannot tell which Hub repository {model.root} is; pass --repo")
    local = inventory(model)
    paths = sorted(set(local) | set(CORE_FILES))
    rep.remote = fetch_remote(model.repo_id, revision, paths)
    content = read_compared(model, local, sorted(set(local) & set(rep.remote.files)))  # only what is compared
    rep.statuses = compare(model, local, rep.remote)
    for st in rep.statuses:
        if st.status == WEIGHT and st.remote is not None and st.local and st.local.blob_name \
                and st.local.blob_name != st.remote.etag and rep.needs_snapshot:
            rep.blockers.append(f"{st.relpath} changed on the Hub; fix-config refreshes small files only "
                                f"(use: hf download {model.repo_id} --revision {revision})")
        if st.status == WEIGHT and st.remote is None and rep.needs_snapshot and model.kind == "cache":
            rep.blockers.append(f"{st.relpath} is not in {model.repo_id}@{rep.remote.commit[:7]}; refusing to build a snapshot without it")
        if not st.needs_update:
            continue
        data = download_verified(model.repo_id, rep.remote.commit, st.remote, scratch)
        rep.new_content[st.relpath] = data
        old = content.get(st.relpath)
        if old is not None:
            rep.old_content[st.relpath] = old
        rep.diffs[st.relpath] = text_diff(st.relpath, old, data, rep.remote.commit)
        if st.relpath == "generation_config.json":
            rep.eos = eos_change(old, data)
    if rep.eos is None:
        gc = next((s for s in rep.statuses if s.relpath == "generation_config.json"), None)
        if gc and gc.status == UP_TO_DATE and "generation_config.json" in content:
            data = content["generation_config.json"]
            rep.eos = eos_change(data, data)
    _refusals(rep)
    return rep


def _refusals(rep: ModelReport) -> None:
    """What makes a refresh of a cache copy unsafe: it would write through a relocated ``blobs/``, or build a new
    snapshot carrying a file that was never compared."""
    model = rep.model
    if model.kind != "cache" or not (rep.to_update(True) or rep.needs_snapshot):
        return
    blobs = model.root / "blobs"
    if blobs.is_symlink():
        rep.blockers.append(f"{blobs} is a symlink to {os.path.realpath(blobs)}: fix-config does not write through "
                            f"it (use: hf download {model.repo_id} --include '*.json' '*.jinja')")
    if rep.needs_snapshot:
        for st in rep.unchecked:
            rep.blockers.append(f"{st.relpath} was not checked ({st.reason}); refusing to carry it into a new snapshot")

def local_eos_hint(model: LocalModel) -> Optional[str]:
    """Offline: what the local generation_config.json alone says."""
    p = model.files_dir / "generation_config.json"
    try:
        if p.is_symlink() and not inside(Path(os.path.normpath(model.root)), Path(os.path.normpath(p.parent / os.readlink(p)))):
            return None
        data = json.loads(read_capped(p, MAX_META))
    except (OSError, Unreadable, ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    eos = data.get("eos_token_id")
    eos = eos if isinstance(eos, list) else [eos]
    if 200012 not in eos:
        return f"{p} has eos_token_id {eos}: it lacks 200012 <|call|> and is stale"
    return None
