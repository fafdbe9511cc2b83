"""report, stage 1 (collect): what a gpt-oss serving bug report needs, read from this host without importing the
engines — the OS and Python, GPUs and drivers (nvidia-smi, rocm-smi), versions of the serving stack (package
metadata; the ``ollama`` and ``llama-server`` binaries' ``--version``), gpt-oss copies in the Hugging Face cache with
their revision and stop tokens, and running launches (``scan``). Every external program runs with a deadline and
its output is capped; what cannot be read is reported with the reason, never guessed.

The vLLM bug template asks reporters for ``collect_env.py`` output
(https://github.com/vllm-project/vllm/blob/main/.github/ISSUE_TEMPLATE/400-bug-report.yml); this is the gpt-oss
subset of it, plus what only the doctor knows (stop tokens, the Harmony library, the launch flags).
"""

from __future__ import annotations

import json
import platform
import shutil
import subprocess
import sys
from pathlib import Path

# the serving stack of a gpt-oss report, by distribution name (package metadata, never imported)
STACK = ("vllm", "sglang", "lmdeploy", "tensorrt-llm", "transformers", "torch", "triton", "openai-harmony",
         "oss-harmony", "tiktoken", "litellm", "openai", "llama-cpp-python", "mlx-lm")
BINARIES = ("ollama", "llama-server")
DEADLINE_S = 5.0  # each external program
OUTPUT_CAP = 4096  # characters kept of each program's output


def system() -> dict:
    """OS, kernel, machine, Python and the doctor's own version."""
    from gptoss_doctor import __version__

    return {"os": _os_name(), "platform": platform.platform(), "kernel": platform.release(),
            "machine": platform.machine(), "python": sys.version.split()[0],
            "python_implementation": platform.python_implementation(), "gptoss_doctor": __version__}


def _os_name() -> str:
    """PRETTY_NAME from /etc/os-release (Linux), else platform.system()."""
    try:
        with open("/etc/os-release", encoding="utf-8", errors="replace") as fh:
            text = fh.read(65536)
    except OSError:
        return platform.system()
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key == "PRETTY_NAME":
            return value.strip().strip('"')[:120]
    return platform.system()


def run_program(argv: list[str], timeout: float = DEADLINE_S) -> tuple[str | None, str]:
    """(output, "") of a program run with a deadline, or (None, why it could not be read)."""
    try:
        r = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=timeout,
                           stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, f"{Path(argv[0]).name} did not answer within {timeout:g} s"
    except OSError as exc:
        return None, f"{Path(argv[0]).name} could not be run: {exc.strerror or exc}"
    text = ((r.stdout or "") + ("\n" if r.stdout and r.stderr else "") + (r.stderr or "")).strip()[:OUTPUT_CAP]
    if r.returncode != 0:
        first = text.splitlines()[0] if text else f"exit code {r.returncode}"
        return None, f"{Path(argv[0]).name} failed: {first[:160]}"
    return text, ""


def gpus() -> dict:
    """NVIDIA GPUs (scan's nvidia-smi reader) and AMD GPUs (rocm-smi --json), each with the reason when absent."""
    from gptoss_doctor.scan import host

    skipped: list = []
    nvidia = host.gpus(skipped, timeout=DEADLINE_S)
    out: dict = {"nvidia": nvidia, "amd": [], "notes": [s.reason for s in skipped]}
    exe = shutil.which("rocm-smi")
    if not exe:
        out["notes"].append("rocm-smi not found: no AMD GPU information")
        return out
    text, why = run_program([exe, "--showproductname", "--showdriverversion", "--json"])
    if text is None:
        out["notes"].append(why)
        return out
    try:
        data = json.loads(text[text.find("{"):]) if "{" in text else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        out["notes"].append("rocm-smi printed no JSON: " + (text.splitlines() or ["?"])[0][:160])
        return out
    for card, fields in list(data.items())[:64]:
        if isinstance(fields, dict):
            out["amd"].append({"card": str(card)[:40], **{str(k)[:60]: str(v)[:120] for k, v in list(fields.items())[:20]}})
    return out


def packages() -> dict:
    """{name: version or None} for every package of the serving stack (None: not installed here)."""
    from gptoss_doctor.scan import host

    found = host.packages(STACK)
    return {name: found.get(name) for name in STACK}


def binaries() -> dict:
    """{name: {"path", "version"} or {"path": None, "reason"}} for ollama and llama-server (``--version``)."""
    out = {}
    for name in BINARIES:
        exe = shutil.which(name)
        if not exe:
            out[name] = {"path": None, "version": None, "reason": f"{name} not found on PATH"}
            continue
        text, why = run_program([exe, "--version"])
        lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()][:4]
        out[name] = {"path": exe, "version": " / ".join(lines)[:300] if text is not None else None,
                     **({"reason": why} if text is None else {})}
    return out


def model_copies() -> tuple[list[dict], list[str]]:
    """gpt-oss snapshots in the Hugging Face cache: repo, revision (the snapshot's commit), eos_token_id with the
    special tokens' names, and whether <|call|> is among them (scan's stale-config rule)."""
    from gptoss_doctor.harmony.tokens import CALL_ID, special_name
    from gptoss_doctor.scan import host

    skipped: list = []
    copies = []
    for rid, snap in host.cache_copies(skipped):
        gen = host.read_generation_config(snap)
        entry: dict = {"repo": rid, "revision": snap.name, "snapshot": str(snap)}
        if gen is None:
            entry.update(eos_token_id=None, stop_tokens=[], call_token_stops=None,
                         reason="no readable generation_config.json in this snapshot")
        else:
            eos = gen.get("eos_token_id")
            ids = [e for e in (eos if isinstance(eos, list) else [eos]) if isinstance(e, int)][:16]
            entry.update(eos_token_id=ids, stop_tokens=[special_name(i) or str(i) for i in ids],
                         call_token_stops=CALL_ID in ids)
        copies.append(entry)
    return copies, [s.reason for s in skipped]


def launches(paths: list[Path]):
    """Running launches (and those in ``paths``) with scan's findings about them: a ``scan.ScanResult``."""
    from gptoss_doctor.scan import scan

    return scan(paths, processes=True, host=False)
