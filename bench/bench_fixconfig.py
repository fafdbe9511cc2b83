"""Benchmark ``gptoss-doctor fix-config`` against olah serving a local gpt-oss-20b git repo.

    python bench/bench_fixconfig.py [--runs 5]

Measures, as a user runs it (subprocess, wall time):
  (a) check of an up-to-date cache (metadata only: nothing downloaded) — target < 1.5 s;
  (b) --dry-run of a stale cache (downloads the 2 differing small files for the diff) — target < 2 s;
  (c) --yes on a stale cache (stage, back up, journal, swap refs/main) — target < 2.5 s;
and counts the HTTP requests olah saw for (a) to show that no file content is fetched.
Prints a table with PASS / FAIL against each target; exits 0 either way.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from hub.fakehub import REPO_ID, WEIGHT, Olah, make_repo, seed_cache  # noqa: E402

FILES = ["config.json", "generation_config.json", "chat_template.jinja", "tokenizer.json", "tokenizer_config.json",
         "special_tokens_map.json", "model.safetensors.index.json", WEIGHT]


def run(env: dict, *args: str) -> tuple[int, float]:
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "gptoss_doctor", "fix-config", *args], env=env, capture_output=True,
                       stdin=subprocess.DEVNULL, timeout=120)
    return p.returncode, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-fixconfig-"))
    old, new = make_repo(base / "mirrors")
    olah = Olah(base, base / "mirrors").start()
    try:
        seed = base / "seed" / "hub"
        seed_cache(seed, olah.url, old, FILES)
        env = {k: v for k, v in os.environ.items() if k not in ("HF_TOKEN", "HF_HUB_OFFLINE", "HF_HUB_CACHE")}
        env.update({"HF_ENDPOINT": olah.url, "HF_HUB_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_XET": "1",
                    "NO_COLOR": "1", "PYTHONPATH": str(ROOT)})
        res: dict[str, list[float]] = {"a": [], "b": [], "c": []}
        requests_a = []
        for i in range(args.runs):
            home = base / f"run{i}"
            shutil.copytree(seed.parent, home, symlinks=True)
            env["HF_HOME"] = str(home)
            code, t = run(env, "--dry-run")
            assert code == 1, code
            res["b"].append(t)
            code, t = run(env, "--yes")
            assert code == 0, code
            res["c"].append(t)
            log = base / "olah.log"
            before = log.read_text().count('HTTP/1.1"')
            code, t = run(env)
            assert code == 0, code
            res["a"].append(t)
            after = log.read_text()
            requests_a.append(after.count('HTTP/1.1"') - before)
            gets = [ln for ln in after.splitlines()[-requests_a[-1]:] if '"GET /openai/' in ln]
            assert not gets, gets  # nothing downloaded when the hashes answer
    finally:
        olah.stop()
        shutil.rmtree(base, ignore_errors=True)
    targets = {"a": 1.5, "b": 2.0, "c": 2.5}
    names = {"a": "up-to-date cache (metadata only)", "b": "stale cache --dry-run (2 diffs)", "c": "stale cache --yes"}
    print(f"{'case':40} {'median s':>9} {'max s':>7} {'target':>7}  result")
    for k in "abc":
        med, mx = statistics.median(res[k]), max(res[k])
        print(f"{names[k]:40} {med:9.3f} {mx:7.3f} {targets[k]:7.1f}  {'PASS' if med < targets[k] else 'FAIL'}")
    print(f"HTTP requests for an up-to-date check: {statistics.median(requests_a):.0f} (no file content GETs)")


if __name__ == "__main__":
    main()
