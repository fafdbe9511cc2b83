"""fix-config, stage 1 (locate): find gpt-oss copies on disk — plain folders and the Hugging Face cache — and list
their files with the hashes the Hub uses (git blob sha1 for small files), without opening weights."""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from gptoss_doctor import rx as _rx
from gptoss_doctor import settings
from gptoss_doctor.errors import UsageError
from gptoss_doctor.fsread import read_capped, Unreadable


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

_HEX40 = _rx.compile(r"^[0-9a-f]{40}$")

_HEX64 = _rx.compile(r"^[0-9a-f]{64}$")

# The Hub's rule for a repo id (huggingface_hub.utils.validate_repo_id): owner/name, letters, digits, '-', '_', '.';
# no '--' or '..'; '-' and '.' neither start nor end a part; at most 96 characters.
_REPO_PART = _rx.compile(r"^(?![-.])(?!.*(?:--|\.\.))[\w.-]{1,96}(?<![-.])$", re.ASCII)

MAX_SMALL_FILE = 64 << 20  # the largest file compared (gpt-oss's tokenizer.json is 27 MiB); larger: not read

MAX_META = 64 << 10  # refs, HF metadata files, a config.json read to guess the repo

MAX_LISTED = 5000  # entries listed in one copy (a folder symlinked to / stops here)

MAX_DEPTH = 8  # folder depth listed (gpt-oss copies are at most two deep)


def validate_repo_id(repo_id: str, what: str = "--repo") -> str:
    """``repo_id`` if it is a valid Hub repo id (owner/name), else a UsageError (exit 2) for every caller."""
    parts = repo_id.split("/") if isinstance(repo_id, str) else []
    if len(parts) != 2 or not all(_REPO_PART.match(x) for x in parts):
        from gptoss_doctor.output.sink import printable

        raise UsageError(f"{what}: {printable(str(repo_id))[:120]} is not a Hub repo id",
                         hint="a repo id is owner/name, e.g. openai/gpt-oss-20b")
    return repo_id


def _small_text(path: Path) -> Optional[str]:
    """A small metadata file's text (refs, HF metadata, a config.json), or None (missing, FIFO, too large, ...)."""
    try:
        return read_capped(path, MAX_META).decode("utf-8", "replace")
    except Unreadable:
        return None

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
    text = (_small_text(root / "refs" / ref) or "").strip()
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
        text = None if cfg.is_symlink() else _small_text(cfg)
        data = json.loads(text) if text else None
        if isinstance(data, dict) and data.get("model_type") == "gpt_oss":
            layers = data.get("num_hidden_layers")
            experts = data.get("num_local_experts")
            if layers == 24 or experts == 32:
                return "openai/gpt-oss-20b", "config.json (24 layers, 32 experts)"
            if layers == 36 or experts == 128:
                return "openai/gpt-oss-120b", "config.json (36 layers, 128 experts)"
    except (OSError, ValueError, RecursionError):
        pass
    return None, ""

def _folder_commit(folder: Path) -> Optional[str]:
    """Commit recorded by ``hf download --local-dir`` for generation_config.json, if any."""
    meta = folder / ".cache" / "huggingface" / "download" / "generation_config.json.metadata"
    lines = (_small_text(meta) or "").splitlines()
    first = lines[0].strip() if lines else ""
    return first if is_commit(first) else None

def local_dir_etag(folder: Path, relpath: str) -> Optional[str]:
    """The ETag that ``hf download --local-dir`` recorded for a file (its hash when downloaded)."""
    meta = folder / ".cache" / "huggingface" / "download" / (relpath + ".metadata")
    lines = (_small_text(meta) or "").splitlines()
    return lines[1].strip() if len(lines) > 1 else None

def find_models(target: Optional[str], repo: Optional[str] = None) -> list[LocalModel]:
    """Resolve the command's argument to model copies on disk."""
    if repo is not None:
        validate_repo_id(repo)
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
        validate_repo_id(target, "repo id")
        root = cache / settings.repo_folder_name(target)
        if not (root / "snapshots").is_dir():
            raise UsageError(
                f"{target} is not in the Hugging Face cache at {cache}",
                hint=f"download it first (hf download {target} --include '*.json' '*.jinja') or pass its folder",
            )
        return [_cache_model(root, repo)]
    raise UsageError(f"no such folder: {target}")

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

def walk_bounded(dirpath: Path, notes: Optional[list[str]] = None) -> list[str]:
    """Relative paths of the files under ``dirpath``: iterative (no recursion limit), never into a symlinked folder,
    hidden folders left out, at most MAX_DEPTH deep and MAX_LISTED entries (a note says when it stopped)."""
    out: list[str] = []
    stack: list[tuple[Path, str, int]] = [(dirpath, "", 0)]
    seen, too_deep = 0, False
    while stack:
        folder, rel_base, depth = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            seen += 1
            if seen > MAX_LISTED:
                if notes is not None:
                    notes.append(f"stopped listing after {MAX_LISTED} entries: files beyond were not compared")
                return sorted(out)
            rel = rel_base + e.name
            try:
                is_dir = e.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if not is_dir:
                out.append(rel)
            elif not e.name.startswith("."):
                if depth + 1 < MAX_DEPTH:
                    stack.append((Path(e.path), rel + "/", depth + 1))
                elif notes is not None and not too_deep:
                    too_deep = True
                    notes.append(f"{rel}/ is more than {MAX_DEPTH} folders deep: not listed (nor any other folder "
                                 f"that deep)")
    return sorted(out)


def _link_inside(model: LocalModel, p: Path) -> tuple[bool, Path]:
    """Whether the symlink ``p`` (and the chain it starts) ends inside the copy, and its written target.

    In the Hugging Face cache ``blobs/`` may itself be a link to another disk (a common layout): a snapshot link into
    ``blobs/`` is inside when it ends inside the folder ``blobs/`` points at."""
    target = Path(os.path.normpath(p.parent / os.readlink(p)))
    limit = Path(os.path.normpath(model.root if model.kind == "cache" else model.files_dir))
    real = Path(os.path.realpath(p))  # a chain of links must end inside too
    if not inside(limit, target):
        return False, target
    if inside(Path(os.path.realpath(limit)), real):
        return True, target
    blobs = limit / "blobs"
    ok = model.kind == "cache" and inside(blobs, target) and inside(Path(os.path.realpath(blobs)), real)
    return ok, target


def inventory(model: LocalModel) -> dict[str, LocalFile]:
    """Every file of interest in the local copy, by name and ``stat`` only: nothing is opened here (weights never;
    the files the Hub also has are read later by ``read_compared``)."""
    d = model.files_dir
    names = set(walk_bounded(d, model.notes)) if d.is_dir() and not d.is_symlink() else set()
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
                ok, target = _link_inside(model, p)
                if not ok:
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
        except OSError as exc:
            lf.problem = f"unreadable: {exc.strerror or exc}"
        result[rel] = lf
    return result


def read_compared(model: LocalModel, local: dict[str, LocalFile], relpaths) -> dict[str, bytes]:
    """Read and hash the local files that are compared (non-weight files the Hub also has): regular files only,
    at most MAX_SMALL_FILE each; anything else gets a ``problem`` (skipped, reported as not checked)."""
    data: dict[str, bytes] = {}
    for rel in relpaths:
        lf = local.get(rel)
        if lf is None or not lf.exists or lf.problem or is_weight(rel):
            continue
        try:
            content = read_capped(model.files_dir / rel, MAX_SMALL_FILE)
        except Unreadable as exc:
            lf.problem = str(exc)
            continue
        lf.sha1 = git_blob_sha1(content)
        lf.sha256 = sha256_bytes(content)
        lf.size = len(content)
        data[rel] = content
    return data


def check_state_dir(model: LocalModel) -> None:
    """The state folder (lock, journal, backups, staging) must be a real folder inside the copy: refuse any symlink
    on the way (``.cache``, ``gptoss-doctor``, ``backups``, ``staging``, ``lock``, ``journal.json``), never follow."""
    rel = Path(os.path.relpath(model.state_dir, model.root))
    cur = model.root
    for part in rel.parts:
        cur = cur / part
        if cur.is_symlink():
            raise UsageError(f"refusing to use {cur}: it is a symlink (fix-config never writes through a link)",
                             hint="nothing was changed; remove the link (fix-config recreates the folder)")
    for name in ("backups", "staging", "lock", "journal.json"):
        if (cur / name).is_symlink():
            raise UsageError(f"refusing to use {cur / name}: it is a symlink (fix-config never writes through a link)",
                             hint="nothing was changed; remove the link")
