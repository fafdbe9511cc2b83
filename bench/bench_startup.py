"""Start-up cost of each command as a ratio to `python -c pass` run in the same process tree.

Absolute times depend on the machine; the ratio to an empty interpreter start does not (much). Each command is run
N times interleaved with the reference, output piped, and the medians compared.

    python bench/bench_startup.py [-n 15]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

HEADLINE = "openai_harmony.HarmonyError: Unexpected token 12606 while expecting start token 200006"
SPECIAL = "openai_harmony.HarmonyError: Unexpected token 200012 while expecting start token 200006"
# the real vocabulary beside the repo (as the tests use it), so decoding 12606 reads it instead of downloading
VOCAB = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "vocab", "o200k_base.tiktoken")


def _cli() -> list[str]:
    exe = shutil.which("gptoss-doctor")
    if exe and not os.environ.get("BENCH_PYTHON_M"):
        return [exe]
    return [sys.executable, "-m", "gptoss_doctor"]  # BENCH_PYTHON_M=1: the tree on PYTHONPATH (before/after runs)


def commands() -> list[tuple[str, list[str]]]:
    cli = _cli()
    out = [
        ("python -c pass (reference)", [sys.executable, "-c", "pass"]),
        ("gptoss-doctor --version", cli + ["--version"]),
        ("gptoss-doctor --help", cli + ["--help"]),
        ("explain special tokens --json", cli + ["explain", SPECIAL, "--json"]),
        ("explain HEADLINE --json", cli + ["explain", HEADLINE, "--json"]),
        ("explain HEADLINE (human)", cli + ["explain", HEADLINE]),
        ("kb list --json", cli + ["kb", "list", "--json"]),
        ("decode 200012 --json", cli + ["decode", "200012", "--json"]),
        # a refused port: the whole check pipeline is imported and run, with no waiting on a server
        ("check refused port --json", cli + ["check", "http://127.0.0.1:9", "--json", "--timeout", "2"]),
    ]
    hf = shutil.which("hf")
    if hf:
        out.insert(1, ("hf version (reference)", [hf, "version"]))
    return out


def _run(argv: list[str]) -> float:
    env = dict(os.environ, NO_COLOR="1", COLUMNS="80")
    if os.path.exists(VOCAB) and "GPTOSS_DOCTOR_VOCAB" not in env:
        env["GPTOSS_DOCTOR_VOCAB"] = os.path.abspath(VOCAB)
    t = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=15)
    args = ap.parse_args()
    cmds = commands()
    for _, argv in cmds:  # warm caches (compiled KB index, bytecode) once
        _run(argv)
    times: dict[str, list[float]] = {label: [] for label, _ in cmds}
    for _ in range(args.n):
        for label, argv in cmds:  # interleaved, so machine load affects all alike
            times[label].append(_run(argv))
    ref = statistics.median(times[cmds[0][0]])
    print(f"{'command':32} {'median':>9} {'p90':>9} {'ratio to python -c pass':>24}")
    for label, _ in cmds:
        ts = sorted(times[label])
        med = statistics.median(ts)
        p90 = ts[min(len(ts) - 1, int(len(ts) * 0.9))]
        print(f"{label:32} {med * 1000:7.0f} ms {p90 * 1000:7.0f} ms {med / ref:23.1f}x")


if __name__ == "__main__":
    main()
