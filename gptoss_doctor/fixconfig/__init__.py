"""fix-config: plan a refresh of a gpt-oss copy's small files, apply it safely, back up, restore.

Safety model
------------
1. Everything that can fail slowly (Hub metadata, downloads, hash checks, disk
   space) happens first, into a scratch folder: a failure there changes nothing.
2. New content is then *staged* inside the model's own state folder (same file
   system), fsynced and re-verified; old files are copied to a timestamped backup.
3. A journal listing the renames is written (fsync). From this point the change
   is decided: the renames run with Ctrl-C deferred, and if the process dies
   anyway, any later run of fix-config on that copy finishes the journal first.
4. In the HF cache the renames only add blobs and a new ``snapshots/<commit>/``;
   the last rename swaps ``refs/main``, the single switch from the old to the new
   state that transformers and vLLM follow.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
import signal
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

from gptoss_doctor import settings
from gptoss_doctor.errors import DoctorError, UsageError
from gptoss_doctor.fixconfig import hub as hf
from gptoss_doctor.redact import redact

JOURNAL = "journal.json"
FALLBACK_TOKENS = {
    199998: "<|startoftext|>", 199999: "<|endoftext|>", 200002: "<|return|>", 200003: "<|constrain|>",
    200005: "<|channel|>", 200006: "<|start|>", 200007: "<|end|>", 200008: "<|message|>", 200012: "<|call|>",
}
CURRENT_EOS = [200002, 199999, 200012]
DIFF_MAX_BYTES = 256 * 1024
DIFF_MAX_LINES = 60


def token_name(tid: int) -> str:
    try:
        from gptoss_doctor.harmony.tokens import SPECIAL_TOKENS  # the lead's table, when present

        name = SPECIAL_TOKENS.get(tid)
    except Exception:  # noqa: BLE001 - optional module
        name = None
    return name or FALLBACK_TOKENS.get(tid, "?")


# ---------------------------------------------------------------------------
# Crash points for tests (GPTOSS_DOCTOR_TEST_CRASH=point[:n] kills the process there)
# ---------------------------------------------------------------------------

_crash_counts: dict[str, int] = {}


def _crash_point(name: str) -> None:
    spec = os.environ.get("GPTOSS_DOCTOR_TEST_CRASH")
    if not spec:
        return
    point, _, rest = spec.partition(":")
    if point != name:
        return
    nth, _, how = rest.partition(":")
    _crash_counts[name] = _crash_counts.get(name, 0) + 1
    if _crash_counts[name] == int(nth or 1):
        os.kill(os.getpid(), signal.SIGINT if how == "int" else signal.SIGKILL)


# ---------------------------------------------------------------------------
# Durable file helpers
# ---------------------------------------------------------------------------


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(str(path), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# When run as root on a copy owned by someone else (sudo), everything created inside it is given to
# the copy's owner, so that user can still update or delete it later. Set per model by ``owned_by``.
_OWNER: Optional[tuple[int, int]] = None


@contextmanager
def owned_by(root: Path) -> Iterator[None]:
    global _OWNER
    prev = _OWNER
    try:
        st = root.stat()
        _OWNER = (st.st_uid, st.st_gid) if os.geteuid() == 0 and (st.st_uid, st.st_gid) != (0, 0) else None
    except (OSError, AttributeError):
        _OWNER = None
    try:
        yield
    finally:
        _OWNER = prev


def _adopt(path: Path) -> None:
    if _OWNER is not None:
        try:
            os.lchown(path, *_OWNER)
        except OSError:
            pass


def mkdirs(path: Path) -> None:
    """``mkdir -p`` that hands each new folder to the copy's owner."""
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir()
        except FileExistsError:
            continue
        _adopt(d)


def write_durable(path: Path, data: bytes, mode: Optional[int] = None) -> None:
    """Write ``path`` via a temp file in the same folder + fsync + os.replace."""
    mkdirs(path.parent)
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        _adopt(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    _fsync_dir(path.parent)


def _default_mode() -> int:
    um = os.umask(0)
    os.umask(um)
    return 0o666 & ~um


@contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold Ctrl-C / SIGTERM until the block is done (then raise KeyboardInterrupt)."""
    received: list[int] = []
    old = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            old[sig] = signal.signal(sig, lambda s, f: received.append(s))
    except ValueError:  # not the main thread
        old = {}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        if received:
            raise KeyboardInterrupt


# ---------------------------------------------------------------------------
# Reports
# ---------------------------------------------------------------------------


def eos_change(old: Optional[bytes], new: Optional[bytes]) -> Optional[dict]:
    def eos_of(data: Optional[bytes]):
        if data is None:
            return None
        try:
            v = json.loads(data.decode("utf-8")).get("eos_token_id")
        except (ValueError, AttributeError):
            return None
        return v if isinstance(v, list) else ([v] if isinstance(v, int) else None)

    a, b = eos_of(old), eos_of(new)
    if a is None and b is None:
        return None
    a, b = a or [], b or []
    added = [t for t in b if t not in a]
    removed = [t for t in a if t not in b]
    parts = [f"adds {t} {token_name(t)}" for t in added] + [f"removes {t} {token_name(t)}" for t in removed]
    return {
        "local": a, "hub": b, "added": added, "removed": removed,
        "text": "eos_token_id " + ", ".join(parts) if parts else ("eos_token_id unchanged" if a == b else "eos_token_id reordered"),
    }


def text_diff(rel: str, old: Optional[bytes], new: Optional[bytes], commit: str) -> list[str]:
    if old is not None and len(old) > DIFF_MAX_BYTES or new is not None and len(new) > DIFF_MAX_BYTES:
        return [f"(large file: {len(old or b'')} bytes locally, {len(new or b'')} bytes on the Hub; diff not shown)"]
    try:
        a = (old or b"").decode("utf-8").splitlines()
        b = (new or b"").decode("utf-8").splitlines()
    except UnicodeDecodeError:
        return ["(binary content differs)"]
    lines = list(difflib.unified_diff(a, b, f"local/{rel}", f"hub/{rel}@{commit[:7]}", lineterm="", n=2))
    if len(lines) > DIFF_MAX_LINES:
        more = len(lines) - DIFF_MAX_LINES
        lines = lines[:DIFF_MAX_LINES] + [f"... {more} more diff lines"]
    return lines


@dataclass
class ModelReport:
    model: hf.LocalModel
    remote: Optional[hf.RemoteState] = None
    statuses: list[hf.FileStatus] = field(default_factory=list)
    new_content: dict[str, bytes] = field(default_factory=dict)
    old_content: dict[str, bytes] = field(default_factory=dict)
    diffs: dict[str, list[str]] = field(default_factory=dict)
    eos: Optional[dict] = None
    blockers: list[str] = field(default_factory=list)
    recovered: Optional[str] = None
    applied: bool = False
    backup_id: Optional[str] = None
    result_path: Optional[Path] = None

    def to_update(self, force: bool) -> list[hf.FileStatus]:
        return [s for s in self.statuses if s.status in (hf.STALE, hf.MISSING) or (force and s.status == hf.MODIFIED)]

    @property
    def needs_snapshot(self) -> bool:
        """Cache copy whose snapshot is not the Hub commit: a new snapshot + ref switch is needed."""
        m = self.model
        return m.kind == "cache" and self.remote is not None and m.commit != self.remote.commit

    def kept_modified(self, force: bool) -> list[hf.FileStatus]:
        return [] if force else [s for s in self.statuses if s.status == hf.MODIFIED]

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


def build_report(model: hf.LocalModel, revision: str, scratch: Path) -> ModelReport:
    """Compare a copy with the Hub; download (to ``scratch``) only the files whose hash differs."""
    rep = ModelReport(model=model)
    if not model.repo_id:
        raise UsageError(f"cannot tell which Hub repository {model.root} is; pass --repo")
    local = hf.inventory(model)
    paths = sorted(set(local) | set(hf.CORE_FILES))
    rep.remote = hf.fetch_remote(model.repo_id, revision, paths)
    rep.statuses = hf.compare(model, local, rep.remote)
    for st in rep.statuses:
        if st.status == hf.WEIGHT and st.remote is not None and st.local and st.local.blob_name \
                and st.local.blob_name != st.remote.etag and rep.needs_snapshot:
            rep.blockers.append(f"{st.relpath} changed on the Hub; fix-config refreshes small files only "
                                f"(use: hf download {model.repo_id} --revision {revision})")
        if st.status == hf.WEIGHT and st.remote is None and rep.needs_snapshot and model.kind == "cache":
            rep.blockers.append(f"{st.relpath} is not in {model.repo_id}@{rep.remote.commit[:7]}; refusing to build a snapshot without it")
        if not st.needs_update:
            continue
        data = hf.download_verified(model.repo_id, rep.remote.commit, st.remote, scratch)
        rep.new_content[st.relpath] = data
        old = None
        if st.local is not None and st.local.exists:
            old = (model.files_dir / st.relpath).read_bytes()
            rep.old_content[st.relpath] = old
        rep.diffs[st.relpath] = text_diff(st.relpath, old, data, rep.remote.commit)
        if st.relpath == "generation_config.json":
            rep.eos = eos_change(old, data)
    if rep.eos is None:
        gc = next((s for s in rep.statuses if s.relpath == "generation_config.json"), None)
        if gc and gc.local and gc.local.exists and gc.status == hf.UP_TO_DATE:
            data = (model.files_dir / "generation_config.json").read_bytes()
            rep.eos = eos_change(data, data)
    return rep


def local_eos_hint(model: hf.LocalModel) -> Optional[str]:
    """Offline: what the local generation_config.json alone says."""
    p = model.files_dir / "generation_config.json"
    try:
        if p.is_symlink() and not hf.inside(Path(os.path.normpath(model.root)), Path(os.path.normpath(p.parent / os.readlink(p)))):
            return None
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    eos = data.get("eos_token_id")
    eos = eos if isinstance(eos, list) else [eos]
    if 200012 not in eos:
        return f"{p} has eos_token_id {eos}: it lacks 200012 <|call|> and is stale"
    return None


# ---------------------------------------------------------------------------
# Journal: an ordered list of renames (and deletions) inside one model root
# ---------------------------------------------------------------------------


def _journal_path(model: hf.LocalModel) -> Path:
    return model.state_dir / JOURNAL


@contextmanager
def locked(model: hf.LocalModel) -> Iterator[None]:
    """One fix-config at a time per model copy (an advisory lock in its state folder)."""
    import fcntl

    try:
        mkdirs(model.state_dir)
        fh = open(model.state_dir / "lock", "a+")
        _adopt(model.state_dir / "lock")
    except PermissionError as exc:
        raise UsageError(f"{model.root} is read-only: cannot refresh files there", hint="nothing was changed") from exc
    try:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            raise UsageError(f"another fix-config is working on {model.root}; try again when it is done") from exc
        yield
    finally:
        fh.close()


def _inside_root(root: Path, rel: str) -> Path:
    p = Path(os.path.normpath(root / rel))
    if not hf.inside(Path(os.path.normpath(root)), p):
        raise DoctorError(f"fix-config journal names a path outside {root}: {rel}; refusing it")
    return p


def run_journal(model: hf.LocalModel, journal: dict) -> None:
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


def recover(model: hf.LocalModel, dry_run: bool) -> Optional[str]:
    """Finish an apply that was interrupted after its journal was written."""
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


def _write_journal(model: hf.LocalModel, journal: dict) -> None:
    write_durable(_journal_path(model), json.dumps(journal, indent=1).encode())
    _crash_point("journal")


# ---------------------------------------------------------------------------
# Apply
# ---------------------------------------------------------------------------


def _new_id(state_dir: Path) -> str:
    base = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    bid, n = base, 1
    while (state_dir / "backups" / bid).exists():
        n += 1
        bid = f"{base}-{n}"
    return bid


def _check_writable(model: hf.LocalModel, needed: int) -> None:
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


def _rel(model: hf.LocalModel, p: Path) -> str:
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


def _apply_locked(rep: ModelReport, updates: list[hf.FileStatus]) -> None:
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


def _stage_folder(rep: ModelReport, updates: list[hf.FileStatus], staging: Path, backup: Path):
    model = rep.model
    root = model.root
    ops: list[dict] = []
    entries: list[dict] = []
    meta_dir = root / ".cache" / "huggingface" / "download"
    for st in updates:
        target = hf.safe_target(root, st.relpath)
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


def _stage_cache(rep: ModelReport, updates: list[hf.FileStatus], staging: Path, backup: Path):
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
        target = hf.safe_target(new_snap, rel)
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
    entries_on_disk = [p for p in old_snap.rglob("*") if not p.is_dir()] if old_snap.is_dir() else []
    plain = bool(entries_on_disk) and not any(p.is_symlink() for p in entries_on_disk)

    for st in rep.statuses:
        rel = st.relpath
        lf = st.local
        if rel in update_names and plain:
            data = rep.new_content[rel]
            target = hf.safe_target(new_snap, rel)
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
                stage_link(rel, os.readlink(src) if st.status in (hf.SKIPPED, hf.ABSENT_UPSTREAM) or not st.remote
                           else link_text_for(rel, lf.blob_name if lf.blob_name else st.remote.etag))
            else:  # a cache without symlinks: hard-link the same inode, no copy, no read
                tgt = hf.safe_target(new_snap, rel)
                if not tgt.exists():
                    staged = staging / "links" / rel
                    mkdirs(staged.parent)
                    os.link(src, staged)
                    link_ops.append({"kind": "replace", "staged": _rel(model, staged), "target": _rel(model, tgt)})
    ops.extend(link_ops)
    manifest: dict = {"files": entries, "in_place": in_place, "old_commit": model.commit, "new_commit": remote.commit,
                      "snapshot": _rel(model, new_snap)}
    if not in_place and not hf.is_commit(remote.revision):
        ref = remote.revision
        refp = hf.safe_target(root / "refs", ref)
        manifest["ref"] = ref
        manifest["old_ref_value"] = refp.read_text().strip() if refp.exists() else None
        staged = staging / "refs" / ref
        _stage_file(staged, remote.commit.encode(), None)
        ops.append({"kind": "replace", "staged": _rel(model, staged), "target": _rel(model, refp)})  # the switch: last
    rep.result_path = new_snap
    return ops, manifest


# ---------------------------------------------------------------------------
# Backups and restore
# ---------------------------------------------------------------------------


def list_backups(model: hf.LocalModel) -> list[dict]:
    out = []
    bdir = model.state_dir / "backups"
    if not bdir.is_dir():
        return out
    for d in sorted(bdir.iterdir()):
        try:
            out.append(json.loads((d / "manifest.json").read_text()))
        except (OSError, ValueError):
            continue
    return out


def _restore_locked(model: hf.LocalModel, backup_id: Optional[str]) -> dict:
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
                        if hf.inside(root, blob):
                            staged = staging / "blobs" / blob.name
                            _stage_file(staged, (bdir / e["backup"]).read_bytes(), _default_mode())
                            ops.append({"kind": "replace", "staged": _rel(model, staged), "target": _rel(model, blob)})
            if chosen.get("ref"):
                refp = hf.safe_target(root / "refs", chosen["ref"])
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
                    target = hf.safe_target(base, e["path"])
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


def restore(model: hf.LocalModel, backup_id: Optional[str]) -> dict:
    with owned_by(model.root), locked(model):
        return _restore_locked(model, backup_id)
