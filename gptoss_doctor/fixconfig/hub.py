"""Find gpt-oss model copies on disk (plain folders and the Hugging Face cache)
and compare their small files with the Hub using metadata only.

Nothing here writes to a model folder: fixconfig.py plans and applies changes.
Weight files are recognised by name and never opened.

Hashes: for a small (non-LFS) file the Hub's ETag / ``blobId`` is the git blob
sha1 of its content, which is also the blob's file name in the HF cache; LFS
files carry a sha256. So "is this file current?" is answered by a name
(cache) or a hash of a small local file (folder), never by downloading.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from gptoss_doctor import settings
from gptoss_doctor.errors import UnreachableError, UsageError, describe_exception

KNOWN_REPOS = ("openai/gpt-oss-20b", "openai/gpt-oss-120b")

# Files every gpt-oss copy should have (reported as "missing" when absent).
CORE_FILES = (
    "generation_config.json",
    "chat_template.jinja",
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "model.safetensors.index.json",
)
# Small files compared only when the local copy has them.
OPTIONAL_FILES = ("README.md", "LICENSE", "USAGE_POLICY", ".gitattributes", "original/config.json", "original/dtypes.json")

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth", ".ckpt", ".h5", ".msgpack", ".onnx", ".npz", ".pkl")
WEIGHT_DIRS = ("metal/",)

STATE_DIR_FOLDER = ".cache/gptoss-doctor"  # inside a plain model folder (next to HF's .cache/huggingface)
STATE_DIR_CACHE = ".gptoss-doctor"  # inside models--org--name/ of the HF cache

_HEX40 = re.compile(r"^[0-9a-f]{40}$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")

# Statuses of one file
UP_TO_DATE = "up-to-date"
STALE = "stale"
MISSING = "missing"
MODIFIED = "modified-locally"
ABSENT_UPSTREAM = "absent-upstream"
WEIGHT = "weight"
SKIPPED = "skipped"


def is_weight(relpath: str) -> bool:
    p = relpath.lower()
    return p.endswith(WEIGHT_SUFFIXES) or any(p.startswith(d) for d in WEIGHT_DIRS)


def git_blob_sha1(data: bytes) -> str:
    h = hashlib.sha1()
    h.update(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_commit(revision: str) -> bool:
    return bool(_HEX40.match(revision or ""))


# ---------------------------------------------------------------------------
# Local copies
# ---------------------------------------------------------------------------


@dataclass
class LocalModel:
    """A model copy on disk.

    kind "folder": ``root`` is the folder; files live in it.
    kind "cache": ``root`` is models--org--name/, files live in ``root/snapshots/<commit>``.
    """

    kind: str
    root: Path
    repo_id: Optional[str]
    repo_source: str  # how repo_id was found
    commit: Optional[str] = None  # cache: snapshot in use; folder: from HF local-dir metadata if any
    ref: Optional[str] = None  # cache: the ref that points at commit ("main")
    pinned_snapshot: bool = False  # the user named a snapshots/<sha> path
    notes: list[str] = field(default_factory=list)

    @property
    def files_dir(self) -> Path:
        if self.kind == "cache":
            return self.root / "snapshots" / (self.commit or "_none_")
        return self.root

    @property
    def state_dir(self) -> Path:
        return self.root / (STATE_DIR_CACHE if self.kind == "cache" else STATE_DIR_FOLDER)


def _repo_id_from_folder_name(name: str) -> Optional[str]:
    if not name.startswith("models--"):
        return None
    parts = name[len("models--"):].split("--")
    return "/".join(parts) if parts and all(parts) else None


def _read_ref(root: Path, ref: str) -> Optional[str]:
    try:
        text = (root / "refs" / ref).read_text().strip()
    except OSError:
        return None
    return text if is_commit(text) else None


def _cache_model(root: Path, repo_override: Optional[str], snapshot: Optional[str] = None) -> LocalModel:
    root = root.resolve()
    repo_id = _repo_id_from_folder_name(root.name)
    model = LocalModel(
        kind="cache",
        root=root,
        repo_id=repo_override or repo_id,
        repo_source="--repo" if repo_override else "HF cache folder name",
    )
    if snapshot:
        model.commit = snapshot
        model.pinned_snapshot = True
        refs = {p.name: _read_ref(root, p.name) for p in (root / "refs").glob("*")} if (root / "refs").is_dir() else {}
        model.ref = next((name for name, c in refs.items() if c == snapshot), None)
    else:
        model.ref = "main"
        model.commit = _read_ref(root, "main")
        if model.commit is None:
            snaps = sorted((p for p in (root / "snapshots").glob("*") if p.is_dir()), key=lambda p: p.stat().st_mtime)
            if snaps:
                model.commit = snaps[-1].name
                model.notes.append("refs/main is missing; using the newest snapshot")
    return model


def _guess_repo_from_folder(folder: Path) -> tuple[Optional[str], str]:
    name = folder.name.lower()
    for rid in KNOWN_REPOS:
        short = rid.split("/")[1]
        if name == short or name.endswith(short) or f"{short}-" in name or f"{short}_" in name:
            return rid, "folder name"
    cfg = folder / "config.json"
    try:
        if cfg.is_file() and not cfg.is_symlink():
            data = json.loads(cfg.read_text(encoding="utf-8"))
            if data.get("model_type") == "gpt_oss":
                layers = data.get("num_hidden_layers")
                experts = data.get("num_local_experts")
                if layers == 24 or experts == 32:
                    return "openai/gpt-oss-20b", "config.json (24 layers, 32 experts)"
                if layers == 36 or experts == 128:
                    return "openai/gpt-oss-120b", "config.json (36 layers, 128 experts)"
    except (OSError, ValueError):
        pass
    return None, ""


def _folder_commit(folder: Path) -> Optional[str]:
    """Commit recorded by ``hf download --local-dir`` for generation_config.json, if any."""
    meta = folder / ".cache" / "huggingface" / "download" / "generation_config.json.metadata"
    try:
        first = meta.read_text().splitlines()[0].strip()
    except (OSError, IndexError):
        return None
    return first if is_commit(first) else None


def local_dir_etag(folder: Path, relpath: str) -> Optional[str]:
    """The ETag that ``hf download --local-dir`` recorded for a file (its hash when downloaded)."""
    meta = folder / ".cache" / "huggingface" / "download" / (relpath + ".metadata")
    try:
        lines = meta.read_text().splitlines()
        return lines[1].strip() if len(lines) > 1 else None
    except OSError:
        return None


def find_models(target: Optional[str], repo: Optional[str] = None) -> list[LocalModel]:
    """Resolve the command's argument to model copies on disk."""
    cache = settings.hf_hub_cache()
    if target is None:
        if not cache.is_dir():
            raise UsageError(f"no Hugging Face cache at {cache} (set HF_HOME / HF_HUB_CACHE, or pass a model folder)")
        found = []
        for p in sorted(cache.glob("models--*")):
            rid = _repo_id_from_folder_name(p.name) or ""
            if p.is_dir() and "gpt-oss" in rid.lower() and (p / "snapshots").is_dir():
                found.append(_cache_model(p, repo))
        if not found:
            raise UsageError(f"no gpt-oss repository in the Hugging Face cache at {cache}; pass a model folder or a repo id")
        return found

    path = Path(target).expanduser()
    if path.exists():
        if not path.is_dir():
            raise UsageError(f"not a folder: {path}")
        path = path.resolve()
        # models--org--name/ of a cache
        if path.name.startswith("models--") and (path / "snapshots").is_dir():
            return [_cache_model(path, repo)]
        # models--org--name/snapshots/<sha>
        if path.parent.name == "snapshots" and path.parent.parent.name.startswith("models--"):
            m = _cache_model(path.parent.parent, repo, snapshot=path.name)
            return [m]
        rid, how = (repo, "--repo") if repo else _guess_repo_from_folder(path)
        if not rid:
            raise UsageError(
                f"cannot tell which Hub repository {path} is a copy of",
                hint="pass --repo openai/gpt-oss-20b or --repo openai/gpt-oss-120b",
            )
        return [LocalModel(kind="folder", root=path, repo_id=rid, repo_source=how, commit=_folder_commit(path))]

    if re.match(r"^[\w.-]+/[\w.-]+$", target) and not target.startswith((".", "/")):
        root = cache / settings.repo_folder_name(target)
        if not (root / "snapshots").is_dir():
            raise UsageError(
                f"{target} is not in the Hugging Face cache at {cache}",
                hint=f"download it first (hf download {target} --include '*.json' '*.jinja') or pass its folder",
            )
        return [_cache_model(root, repo)]
    raise UsageError(f"no such folder: {target}")


# ---------------------------------------------------------------------------
# Local file inventory
# ---------------------------------------------------------------------------


@dataclass
class LocalFile:
    relpath: str
    exists: bool
    size: Optional[int] = None
    blob_name: Optional[str] = None  # cache: name of the blob the snapshot link points at
    sha1: Optional[str] = None  # git blob sha1 of the content (small files only)
    sha256: Optional[str] = None
    recorded: Optional[str] = None  # hash recorded when downloaded (cache blob name / local-dir metadata etag)
    mode: Optional[int] = None
    problem: Optional[str] = None  # why it is skipped


def inside(root: Path, candidate: Path) -> bool:
    try:
        candidate.relative_to(root)
        return True
    except ValueError:
        return False


def safe_target(root: Path, relpath: str) -> Path:
    """``root/relpath`` after refusing absolute paths, '..' and symlinked parents leading out of root."""
    rel = Path(relpath)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise UsageError(f"refusing a path outside the model folder: {relpath}")
    cur = root
    for part in rel.parts[:-1]:
        cur = cur / part
        if cur.is_symlink():
            raise UsageError(f"refusing to write through a symlinked folder: {cur}")
    return root / rel


def _walk(dirpath: Path) -> list[str]:
    out = []
    for base, dirs, files in os.walk(dirpath, followlinks=False):
        rel_base = Path(base).relative_to(dirpath)
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for f in files:
            rel = (rel_base / f).as_posix()
            if rel.startswith("./"):
                rel = rel[2:]
            out.append(rel)
    return sorted(out)


def inventory(model: LocalModel) -> dict[str, LocalFile]:
    """Every file of interest in the local copy (weights by name only; never opened)."""
    d = model.files_dir
    names = set(_walk(d)) if d.is_dir() else set()
    names |= set(CORE_FILES)
    result: dict[str, LocalFile] = {}
    for rel in sorted(names):
        if rel.startswith(".") and rel not in OPTIONAL_FILES:
            continue
        p = d / rel
        lf = LocalFile(relpath=rel, exists=os.path.lexists(p))
        if not lf.exists:
            result[rel] = lf
            continue
        try:
            if p.is_symlink():
                target = Path(os.path.normpath(p.parent / os.readlink(p)))
                limit = Path(os.path.normpath(model.root if model.kind == "cache" else d))
                real = Path(os.path.realpath(p))  # a chain of links must end inside too
                if not inside(limit, target) or not inside(Path(os.path.realpath(limit)), real):
                    lf.problem = "symlink leading out of the model folder (not followed, not touched)"
                    result[rel] = lf
                    continue
                if model.kind == "cache":
                    lf.blob_name = target.name
                    lf.recorded = target.name
                if not target.exists():
                    lf.problem = "broken link"
                    lf.exists = False
                    result[rel] = lf
                    continue
            st = p.stat()
            lf.size = st.st_size
            lf.mode = st.st_mode & 0o7777
            if model.kind == "folder":
                lf.recorded = local_dir_etag(d, rel)
            if not is_weight(rel):
                data = p.read_bytes()
                lf.sha1 = git_blob_sha1(data)
                lf.sha256 = sha256_bytes(data)
        except OSError as exc:
            lf.problem = f"unreadable: {exc.strerror or exc}"
        result[rel] = lf
    return result


# ---------------------------------------------------------------------------
# The Hub side (metadata only)
# ---------------------------------------------------------------------------


@dataclass
class RemoteFile:
    relpath: str
    size: int
    blob_id: str  # git sha1
    lfs_sha256: Optional[str] = None

    @property
    def etag(self) -> str:
        """The cache blob name: sha256 for LFS files, git sha1 otherwise."""
        return self.lfs_sha256 or self.blob_id

    def matches(self, data: bytes) -> bool:
        if len(data) != self.size:
            return False
        if self.lfs_sha256:
            return sha256_bytes(data) == self.lfs_sha256
        return git_blob_sha1(data) == self.blob_id


@dataclass
class RemoteState:
    repo_id: str
    revision: str
    commit: str
    files: dict[str, RemoteFile]
    siblings: list[str]


def hub_error(exc: BaseException, repo_id: str, revision: str) -> BaseException:
    """``exc`` as the DoctorError the one exception table (errors.describe_exception) makes of it for this repo, or
    ``exc`` itself when the table does not know it."""
    return describe_exception(exc, repo_id=repo_id, revision=revision) or exc




_TIMEOUT_SET = False


def hub_timeout() -> float:
    try:
        return max(0.5, float(os.environ.get("GPTOSS_DOCTOR_HUB_TIMEOUT", "10")))
    except ValueError:
        return 10.0


def _bound_http_waits() -> None:
    """huggingface_hub's shared client waits forever by default: a black-holed Hub would hang the command.

    Give it connect/read timeouts (GPTOSS_DOCTOR_HUB_TIMEOUT seconds, default 10) unless the program
    installed its own client factory. Calls that pass their own timeout keep it.
    """
    global _TIMEOUT_SET
    if _TIMEOUT_SET:
        return
    _TIMEOUT_SET = True
    try:
        from huggingface_hub.utils import _http

        if _http._GLOBAL_CLIENT_FACTORY is not _http.default_client_factory:
            return
        base = _http.default_client_factory
        t = hub_timeout()

        def factory():
            client = base()
            client.timeout = type(client.timeout)(t)
            return client

        _http.set_client_factory(factory)
    except Exception:  # noqa: BLE001 - an older/newer huggingface_hub: keep its behaviour
        pass


_DEADLINE: list[float] = []  # when this process's Hub work must be over (set by its first Hub call)


def _within_deadline(fn, *args, **kw):
    """Run one Hub call under the operation's deadline: GPTOSS_DOCTOR_HUB_TIMEOUT bounds the whole fix-config
    Hub exchange, not each read (a Hub that drips one byte per second stays under any per-read timeout).

    The call runs in a daemon thread that is abandoned at the deadline: it only ever writes into the scratch
    folder, and nothing is applied after a timeout."""
    import threading
    import time

    if not _DEADLINE:
        _DEADLINE.append(time.monotonic() + hub_timeout())
    remaining = _DEADLINE[0] - time.monotonic()
    box: dict = {}

    def run() -> None:
        try:
            box["value"] = fn(*args, **kw)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box["error"] = exc

    t = threading.Thread(target=run, name="hub-call", daemon=True)
    if remaining > 0:
        t.start()
        t.join(remaining)
    if remaining <= 0 or t.is_alive():
        raise UnreachableError(f"the Hub at {settings.hub_endpoint_shown()} did not finish within "
                               f"{hub_timeout():g} s (GPTOSS_DOCTOR_HUB_TIMEOUT)", hint="nothing was changed")
    if "error" in box:
        raise box["error"]
    return box.get("value")


def fetch_remote(repo_id: str, revision: str, paths: list[str]) -> RemoteState:
    """Ask the Hub which commit ``revision`` is and the hashes of ``paths`` (no content downloaded)."""
    return _within_deadline(_fetch_remote, repo_id, revision, paths)


def _fetch_remote(repo_id: str, revision: str, paths: list[str]) -> RemoteState:
    if settings.hub_offline():
        raise hub_error(Exception("offline"), repo_id, revision)
    _bound_http_waits()
    try:
        from huggingface_hub import HfApi

        api = HfApi(endpoint=settings.hub_endpoint())
        info = api.model_info(repo_id, revision=revision, timeout=hub_timeout())
        commit = info.sha
        siblings = [s.rfilename for s in (info.siblings or [])]
        wanted = [p for p in paths if p in siblings] if siblings else list(paths)
        files: dict[str, RemoteFile] = {}
        if wanted:
            for item in api.get_paths_info(repo_id, wanted, revision=commit):
                if getattr(item, "blob_id", None) is None:
                    continue
                lfs = getattr(item, "lfs", None)
                files[item.path] = RemoteFile(item.path, int(item.size), item.blob_id, lfs.sha256 if lfs else None)
    except Exception as exc:  # noqa: BLE001 - mapped to one line
        mapped = hub_error(exc, repo_id, revision)
        if mapped is exc:
            raise
        raise mapped from exc
    if not commit or not is_commit(commit):
        raise UnreachableError(f"the Hub did not tell which commit {repo_id}@{revision} is")
    return RemoteState(repo_id=repo_id, revision=revision, commit=commit, files=files, siblings=siblings)


def download_verified(repo_id: str, commit: str, remote: RemoteFile, dest_dir: Path) -> bytes:
    """Download one file at ``commit`` into a scratch folder and return its verified bytes."""
    return _within_deadline(_download_verified, repo_id, commit, remote, dest_dir)


def _download_verified(repo_id: str, commit: str, remote: RemoteFile, dest_dir: Path) -> bytes:
    try:
        from huggingface_hub import hf_hub_download

        path = hf_hub_download(repo_id, remote.relpath, revision=commit, local_dir=str(dest_dir), endpoint=settings.hub_endpoint())
        data = Path(path).read_bytes()
    except Exception as exc:  # noqa: BLE001
        mapped = hub_error(exc, repo_id, commit)
        if mapped is exc:
            raise
        raise mapped from exc
    if not remote.matches(data):
        got = git_blob_sha1(data)
        raise UnreachableError(
            f"downloaded {remote.relpath} does not match the Hub's hash (size {len(data)} vs {remote.size}, sha1 {got[:12]})",
            hint="the transfer was corrupted or cut; nothing was changed — run the command again",
        )
    return data


# ---------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------


@dataclass
class FileStatus:
    relpath: str
    status: str
    local: Optional[LocalFile]
    remote: Optional[RemoteFile]
    reason: str = ""

    @property
    def needs_update(self) -> bool:
        return self.status in (STALE, MISSING, MODIFIED)


def compare(model: LocalModel, local: dict[str, LocalFile], remote: RemoteState) -> list[FileStatus]:
    out: list[FileStatus] = []
    for rel in sorted(set(local) | (set(remote.files) & set(CORE_FILES))):
        lf = local.get(rel)
        rf = remote.files.get(rel)
        if lf is not None and lf.problem and lf.exists:
            out.append(FileStatus(rel, SKIPPED, lf, rf, lf.problem))
            continue
        if is_weight(rel):
            if lf and lf.exists:
                reason = "weight file: not read, not touched"
                if model.kind == "cache" and rf is not None and lf.blob_name and lf.blob_name != rf.etag:
                    reason = "weight file differs on the Hub (by name); fix-config does not download weights"
                out.append(FileStatus(rel, WEIGHT, lf, rf, reason))
            continue
        exists = lf is not None and lf.exists
        if rf is None:
            if exists:
                out.append(FileStatus(rel, ABSENT_UPSTREAM, lf, None, f"not in {remote.repo_id}@{remote.commit[:7]}; kept"))
            continue
        if not exists:
            if rel in CORE_FILES:
                out.append(FileStatus(rel, MISSING, lf, rf, "not in the local copy"))
            continue
        local_hash = lf.sha256 if rf.lfs_sha256 else lf.sha1
        if local_hash == rf.etag and lf.size == rf.size:
            if model.kind == "cache" and lf.blob_name and lf.blob_name != rf.etag:
                # content right, blob misnamed (someone copied a file over a blob): still fine to load
                out.append(FileStatus(rel, UP_TO_DATE, lf, rf, "content matches the Hub"))
            else:
                out.append(FileStatus(rel, UP_TO_DATE, lf, rf))
            continue
        recorded = lf.recorded
        if recorded and recorded not in (lf.sha1, lf.sha256):
            out.append(FileStatus(rel, MODIFIED, lf, rf, "edited since it was downloaded"))
        else:
            out.append(FileStatus(rel, STALE, lf, rf, "differs from the Hub"))
    return out
