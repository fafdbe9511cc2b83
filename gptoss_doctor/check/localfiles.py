"""check: the generation_config.json a local server reads (a --model-dir, a local model path, or the HF cache), and
its eos_token_id. Read-only; never raises on a bad file."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Optional

from gptoss_doctor import settings
from gptoss_doctor.fsread import Unreadable, read_capped


def _repo_candidates(model_id: str) -> list[str]:
    mid = model_id.strip()
    cands = []
    if "/" in mid and not mid.startswith("/"):
        cands.append(mid)
    name = mid.rsplit("/", 1)[-1].replace(":", "-").lower()
    m = re.search(r"gpt-oss-(20b|120b)", name)
    if m:
        cands.append(f"openai/gpt-oss-{m.group(1)}")
    return list(dict.fromkeys(cands))


def find_generation_config(model_id: Optional[str], model_dir: Optional[str], root: Optional[str] = None) -> Optional[Path]:
    """The generation_config.json a local server would read: --model-dir, a local root path, or the HF cache."""
    if model_dir:
        p = Path(model_dir).expanduser()
        return p / "generation_config.json" if p.is_dir() else p
    for cand in (root, model_id):
        if cand and cand.startswith(("/", "~", ".")):
            p = Path(cand).expanduser() / "generation_config.json"
            if p.is_file():
                return p
    cache = settings.hf_hub_cache()
    for repo in _repo_candidates(model_id or "") + _repo_candidates(root or ""):
        rdir = cache / settings.repo_folder_name(repo)
        if not rdir.is_dir():
            continue
        snap = None
        try:
            ref = read_capped(rdir / "refs" / "main", 4096).decode("utf-8", "replace").strip()
            if ref and (rdir / "snapshots" / ref).is_dir():
                snap = rdir / "snapshots" / ref
        except (OSError, Unreadable):
            pass
        if snap is None:
            snaps = [s for s in (rdir / "snapshots").glob("*") if (s / "generation_config.json").exists()]
            if snaps:
                snap = max(snaps, key=lambda s: s.stat().st_mtime)
        if snap is not None and (snap / "generation_config.json").exists():
            return snap / "generation_config.json"
    return None


def local_model_type(*names: Optional[str]) -> Optional[tuple[str, Path]]:
    """(model_type, config.json path) when a served model id or root is a local folder (transformers serve, llama.cpp
    and vLLM report the path they loaded): a checkpoint saved under any name still says gpt_oss there."""
    for cand in names:
        if not cand or not cand.startswith(("/", "~", ".")):
            continue
        p = Path(cand).expanduser() / "config.json"
        try:
            if not p.is_file() or p.stat().st_size > 1 << 20:
                continue
            raw = json.loads(p.read_text(encoding="utf-8", errors="replace"))
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(raw, dict) and isinstance(raw.get("model_type"), str):
            return raw["model_type"], p
    return None


def read_eos(path: Path) -> tuple[Optional[list[int]], str]:
    """(eos ids, problem) of a generation_config.json; never raises."""
    try:
        if path.stat().st_size > 1 << 20:
            return None, "the file is larger than 1 MiB"
        raw = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    except FileNotFoundError:
        return None, "file not found"
    except (OSError, ValueError, RecursionError) as exc:
        return None, f"cannot read it: {type(exc).__name__}"
    if not isinstance(raw, dict):
        return None, "not a JSON object"
    eos = raw.get("eos_token_id")
    if isinstance(eos, int) and not isinstance(eos, bool):
        return [eos], ""
    if isinstance(eos, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in eos):
        return list(eos), ""
    return None, "no eos_token_id"
