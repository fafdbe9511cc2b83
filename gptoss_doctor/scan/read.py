"""Find and read launch definitions safely: size caps, no binaries, no symlink loops, YAML without bombs.

YAML is composed into nodes (so every value keeps its line number) with the safe loader, and the walk that turns
nodes into data counts every node it visits, shared alias targets included: a "billion laughs" document stops at
the cap and becomes a skipped item instead of eating the machine.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from gptoss_doctor.fsread import Unreadable, read_capped  # the one capped reader; Unreadable says why

MAX_FILE = 1 << 20  # bytes read from one file
MAX_FILES = 5000  # files looked at under one folder
MAX_DEPTH = 8
MAX_NODES = 200_000  # YAML nodes visited per document, aliases included
SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache", "site-packages",
             ".cache", "dist", "build", ".idea", ".vscode"}

KINDS = ("compose", "yaml", "dockerfile", "shell", "systemd", "env", "model-folder")


def kind_of(path: Path) -> str | None:
    name = path.name.lower()
    if name.startswith("dockerfile") or name.endswith(".dockerfile") or name == "containerfile":
        return "dockerfile"
    if name in ("docker-compose.yml", "docker-compose.yaml", "compose.yml", "compose.yaml") or (
            name.startswith(("docker-compose", "compose")) and name.endswith((".yml", ".yaml"))):
        return "compose"
    if name.endswith((".yml", ".yaml")):
        return "yaml"
    if name.endswith((".sh", ".bash", ".zsh")) or name in ("entrypoint", "start", "run", "serve"):
        return "shell"
    if name.endswith((".service", ".container")):
        return "systemd"
    if name == ".env" or name.startswith(".env.") or name.endswith(".env"):
        return "env"
    return None


def discover(paths: list[Path], skipped: list) -> list[tuple[Path, str]]:
    """(file, kind) for every launch definition under ``paths``; model folders as kind 'model-folder'."""
    from gptoss_doctor.scan.model import Skipped

    found: list[tuple[Path, str]] = []
    seen: set[tuple[int, int]] = set()
    budget = [MAX_FILES]

    def visit_dir(d: Path, depth: int) -> None:
        try:
            st = d.stat()
        except OSError as exc:
            skipped.append(Skipped(str(d), f"cannot read the folder: {exc.strerror or exc}"))
            return
        if (st.st_dev, st.st_ino) in seen:
            return
        seen.add((st.st_dev, st.st_ino))
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as exc:
            skipped.append(Skipped(str(d), f"cannot list the folder: {exc.strerror or exc}"))
            return
        names = {e.name for e in entries}
        if {"generation_config.json", "config.json"} <= names and (d / "generation_config.json").is_file():
            found.append((d, "model-folder"))
        for e in entries:
            if budget[0] <= 0:
                skipped.append(Skipped(str(d), f"stopped after {MAX_FILES} files (give a narrower PATH)"))
                return
            p = Path(e.path)
            try:
                if e.is_symlink():
                    if kind_of(p) or e.is_dir():  # a launch file or a folder behind a link: say it was not read
                        skipped.append(Skipped(str(p), "a symbolic link: not followed (scan its target by name)"))
                    continue
                if e.is_dir(follow_symlinks=False):
                    if e.name in SKIP_DIRS:
                        continue
                    if depth < MAX_DEPTH:
                        visit_dir(p, depth + 1)
                    else:
                        skipped.append(Skipped(str(p), f"deeper than {MAX_DEPTH} folders: not read (scan it by name)"))
                    continue
                if not e.is_file(follow_symlinks=False):
                    continue
            except OSError as exc:
                skipped.append(Skipped(str(p), f"cannot read it: {exc.strerror or exc}"))
                continue
            budget[0] -= 1
            k = kind_of(p) or _sniff(p)
            if k:
                found.append((p, k))

    for p in paths:
        if p.is_dir():
            visit_dir(p, 0)
        elif p.is_file():
            found.append((p, kind_of(p) or _sniff(p) or "shell"))
        else:
            skipped.append(Skipped(str(p), "no such file or folder"))
    return found


def _sniff(path: Path) -> str | None:
    """Scripts without an extension: a shebang naming a shell."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
    except OSError:
        return None
    if head.startswith(b"#!") and re.match(rb"#!\s*\S*(?:sh|bash|zsh|dash)\b|#!\s*/usr/bin/env\s+(?:ba|z|da)?sh\b", head):
        return "shell"
    return None


def read_text(path: Path) -> str:
    """The file's text, or Unreadable with the reason (too large, binary, not a regular file, no permission)."""
    try:
        data = read_capped(path, MAX_FILE)
    except Unreadable as exc:
        if "larger than" in str(exc):
            raise Unreadable(f"larger than {MAX_FILE // 1024} KiB: not a launch file") from None
        raise
    if b"\0" in data[:8192]:
        raise Unreadable("binary content")
    return data.decode("utf-8", "replace")


# --- YAML with line numbers ---------------------------------------------------------------------------------------


@dataclass
class Val:
    """A YAML value with the line (1-based) it starts on."""

    value: object
    line: int


def load_yaml_documents(text: str) -> list:
    """Documents as nested dict/list of Val leaves (scalars wrapped with their line)."""
    import yaml

    loader_cls = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        nodes = list(yaml.compose_all(text, Loader=loader_cls))
    except yaml.YAMLError as exc:
        raise Unreadable(f"invalid YAML: {str(exc).splitlines()[0][:120]}") from None
    except RecursionError:
        raise Unreadable("YAML nested too deeply") from None
    budget = [MAX_NODES]
    out = []
    for node in nodes:
        if node is not None:
            out.append(_convert(node, budget, 0))
    return out


def _convert(node, budget: list[int], depth: int):
    import yaml

    budget[0] -= 1
    if budget[0] < 0:
        raise Unreadable("YAML expands to too many values (an alias bomb?)")
    if depth > 100:
        raise Unreadable("YAML nested too deeply")
    if isinstance(node, yaml.ScalarNode):
        return Val(node.value, node.start_mark.line + 1)
    if isinstance(node, yaml.SequenceNode):
        return [_convert(n, budget, depth + 1) for n in node.value]
    if isinstance(node, yaml.MappingNode):
        d: dict = {}
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == "<<":  # merge keys, common in compose files
                merged = _convert(v, budget, depth + 1)
                for m in merged if isinstance(merged, list) else [merged]:
                    if isinstance(m, dict):
                        for mk, mv in m.items():
                            d.setdefault(mk, mv)
                continue
            key = k.value if isinstance(k, yaml.ScalarNode) else str(k.start_mark.line)
            d[str(key)] = _convert(v, budget, depth + 1)
        return d
    return Val(None, node.start_mark.line + 1)


def plain(v):
    """A Val tree as plain Python values."""
    if isinstance(v, Val):
        return v.value
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    return v


def first_line(v) -> int:
    if isinstance(v, Val):
        return v.line
    if isinstance(v, list) and v:
        return first_line(v[0])
    if isinstance(v, dict) and v:
        return first_line(next(iter(v.values())))
    return 0
