"""What this host has: engine and Harmony library versions (from package metadata, never by importing the engines,
which can take seconds and touch the GPU), its GPUs (nvidia-smi), and gpt-oss copies in the Hugging Face cache."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from gptoss_doctor.scan.model import Finding, Skipped
from gptoss_doctor.scan.read import MAX_FILE, Unreadable, read_capped
from gptoss_doctor.scan.rules import _finding

PACKAGES = ("vllm", "sglang", "lmdeploy", "tensorrt-llm", "tensorrt_llm", "litellm", "transformers", "openai-harmony",
            "oss-harmony", "llama-cpp-python", "mlx-lm", "text-generation-server", "openai")


def _vtuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v.split("+")[0])[:4])


def packages(names: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    """The installed version of each of ``names`` found, read from package metadata (never imported)."""
    from importlib import metadata

    found: dict[str, str] = {}
    for name in names:
        try:
            found[name.replace("_", "-")] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        except Exception:  # noqa: BLE001 - a broken dist-info must not stop the scan
            continue
    return found


def judge_packages(pk: dict[str, str]) -> list[Finding]:
    """Version rules with explicit versions in the knowledge base."""
    out = []
    v = pk.get("vllm")
    if v and _vtuple(v) < (0, 10, 2):
        out.append(_finding(
            "warn", "host.vllm_too_old", f"vLLM {v} predates the gpt-oss tool parser", "python environment",
            detail="--tool-call-parser openai first shipped in vLLM 0.10.2",
            fix="upgrade vLLM", corrected="pip install -U 'vllm>=0.10.2'",
            kb_ids=["gptoss-server-tool-parser-not-enabled"]))
    t = pk.get("transformers")
    if t and _vtuple(t) >= (5,) and (pk.get("lmdeploy") or pk.get("vllm")):
        engine = "lmdeploy" if pk.get("lmdeploy") else "vLLM"
        out.append(_finding(
            "info", "host.transformers_v5", f"transformers {t} next to {engine}", "python environment",
            detail="engines pinned to the transformers 4.x API fail with gpt-oss under transformers 5 (lmdeploy "
            "0.11.1 and older vLLM builds); newer engine releases support it",
            fix="if the engine fails to load the tokenizer, pin transformers below 5 or upgrade the engine",
            corrected="pip install -U 'transformers<5'", kb_ids=["transformers-v5-incompatible-engine"]))
    if not pk.get("openai-harmony") and not pk.get("oss-harmony") and (pk.get("vllm") or pk.get("sglang")):
        out.append(_finding("info", "host.no_harmony", "no Harmony library found next to the engine",
                            "python environment", detail="gpt-oss serving needs openai-harmony (or the oss-harmony fork "
                            "recent vLLM depends on); the engine may not be able to serve gpt-oss from this environment"))
    return out


def gpus(skipped: list, timeout: float = 5.0) -> list[dict]:
    exe = shutil.which("nvidia-smi")
    if not exe:
        skipped.append(Skipped("gpu", "nvidia-smi not found: GPU checks skipped"))
        return []
    try:
        r = subprocess.run([exe, "--query-gpu=index,name,compute_cap,driver_version,memory.total",
                            "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=timeout)
    except (subprocess.TimeoutExpired, OSError) as exc:
        skipped.append(Skipped("gpu", f"nvidia-smi did not answer ({type(exc).__name__})"))
        return []
    if r.returncode != 0:
        skipped.append(Skipped("gpu", "nvidia-smi failed: " + ((r.stderr or r.stdout).strip().splitlines() or ["?"])[0][:160]))
        return []
    out = []
    for line in r.stdout.splitlines()[:64]:
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 5:
            out.append({"index": parts[0], "name": parts[1][:80], "compute_cap": parts[2], "driver": parts[3],
                        "memory_mib": parts[4]})
    return out


def read_generation_config(folder: Path) -> dict | None:
    try:
        data = json.loads(read_capped(folder / "generation_config.json", MAX_FILE))
    except (Unreadable, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def is_gpt_oss_folder(folder: Path) -> bool:
    if re.search(r"gpt[-_]?oss", str(folder), re.I):
        return True
    try:
        cfg = json.loads(read_capped(folder / "config.json", MAX_FILE))  # a 2 GB config.json is not read
    except (Unreadable, ValueError, RecursionError):
        return False
    return isinstance(cfg, dict) and cfg.get("model_type") == "gpt_oss"


def cache_copies(skipped: list) -> list[tuple[str, Path]]:
    """(repo id, snapshot folder) of every gpt-oss snapshot in the Hugging Face cache."""
    from gptoss_doctor import settings

    cache = settings.hf_hub_cache()
    out: list[tuple[str, Path]] = []
    if not cache.is_dir():
        return out
    try:
        repos = sorted(p for p in cache.glob("models--*") if "gpt-oss" in p.name.lower())
    except OSError as exc:
        skipped.append(Skipped(str(cache), f"cannot list the Hugging Face cache: {exc.strerror or exc}"))
        return out
    for repo in repos[:50]:
        rid = repo.name[len("models--"):].replace("--", "/")
        try:
            ref = read_capped(repo / "refs" / "main", 4096).decode("utf-8", "replace").strip()
        except Unreadable:
            ref = ""
        snaps = [repo / "snapshots" / ref] if ref else sorted((repo / "snapshots").glob("*"))[:5]
        for s in snaps:
            if s.is_dir():
                out.append((rid, s))
    return out
