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

from gptoss_doctor import settings
from gptoss_doctor.errors import UsageError



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
