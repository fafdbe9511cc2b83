"""Benchmarks for ``gptoss-doctor check`` against the engine emulators.

    python bench/bench_check.py

(a) concurrency: against an emulator whose every answer takes 1.5 s (fault "slow"), a full check must take
    under half of (number of requests x 1.5 s);
(b) start-up + discovery: ``check --quick`` against a healthy local emulator, spawned as a subprocess the way a
    user runs it, must finish in under 1 s of wall time.
Prints a table with PASS / FAIL against each target; exits 0 either way.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.emulators import serve  # noqa: E402

SLOW = 1.5


def run_cli(*args: str) -> tuple[int, float, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("OPENAI_API_KEY", None)
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "gptoss_doctor", "check", *args], capture_output=True, env=env)
    return p.returncode, time.perf_counter() - t, p.stdout.decode(errors="replace")


def bench_slow(engine: str, extra: list[str]) -> list[str]:
    with serve(engine, faults=("slow",)) as srv:
        code, wall, _ = run_cli(srv.url, *extra)
        n = len(srv.requests)
    serial = n * SLOW
    ratio = wall / serial
    label = f"full check{' ' + ' '.join(extra) if extra else ''} vs {engine} (slow, {SLOW} s/request)"
    return [label, str(n), f"{wall:.2f} s", f"{serial:.1f} s", f"{ratio:.2f}", "< 0.50",
            ("PASS" if ratio < 0.5 and code == 0 else "FAIL") + ("" if code == 0 else f" (exit {code})")]


def bench_quick(engine: str, runs: int = 7) -> list[str]:
    with serve(engine) as srv:
        run_cli(srv.url, "--quick")  # warm the file cache (first run after install compiles .pyc files)
        walls, codes = [], set()
        for _ in range(runs):
            code, wall, _ = run_cli(srv.url, "--quick")
            walls.append(wall)
            codes.add(code)
        n = len(srv.requests) // (runs + 1)
    med = statistics.median(walls)
    ok = med < 1.0 and codes == {0}
    return [f"check --quick vs {engine} (subprocess, median of {runs})", str(n),
            f"{med:.2f} s (min {min(walls):.2f}, max {max(walls):.2f})", "-", "-", "< 1.00 s",
            "PASS" if ok else f"FAIL (exit {sorted(codes)})" if codes != {0} else "FAIL"]


def main() -> None:
    rows = [bench_slow("vllm", []), bench_slow("vllm", ["--deep"]), bench_slow("sglang", []),
            bench_quick("vllm"), bench_quick("ollama"), bench_quick("llama.cpp")]
    headers = ["benchmark", "requests", "wall", "serial", "ratio", "target", "result"]
    widths = [max(len(str(r[i])) for r in rows + [headers]) for i in range(len(headers))]
    for r in [headers] + rows:
        print("  ".join(str(c).ljust(widths[i]) for i, c in enumerate(r)).rstrip())
    print(f"\npython {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
