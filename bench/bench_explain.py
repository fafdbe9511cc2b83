#!/usr/bin/env python3
"""Benchmark `explain`: start-up latency (special-only and regular-token messages) and log throughput.

Run from the project root after `pip install .`:  python bench/bench_explain.py [--runs 20] [--log-mb 200]
Targets (issue 2): special-only < 150 ms, regular token < 300 ms (process start to exit),
`explain --file` on a 200 MB log: RSS < 100 MB, >= 50 MB/s.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VOCAB = ROOT.parent / "shared" / "vocab"


def command() -> list[str]:
    exe = shutil.which("gptoss-doctor")
    return [exe] if exe else [sys.executable, "-m", "gptoss_doctor"]


def wall(args: list[str], env: dict, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        r = subprocess.run(command() + args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append((time.perf_counter() - t) * 1000)
        if r.returncode != 0:
            raise SystemExit(f"failed: {args}: {r.stderr.decode()[:300]}")
    return times


def make_log(path: Path, mb: int) -> int:
    """A synthetic vLLM server log: request lines, stats, warnings, and a HarmonyError traceback now and then."""
    rnd = random.Random(7)
    info = [
        '(APIServer pid=1) INFO:     10.0.0.{n}:5{n:04d} - "POST /v1/chat/completions HTTP/1.1" 200 OK\n',
        "(APIServer pid=1) INFO 08-07 12:00:{s:02d} [loggers.py:123] Engine 000: Avg prompt throughput: {n}.1 tokens/s, "
        "Avg generation throughput: 88.0 tokens/s, Running: 3 reqs, Waiting: 0 reqs, GPU KV cache usage: 4.1%\n",
        "(APIServer pid=1) INFO 08-07 12:00:{s:02d} [logger.py:43] Received request chatcmpl-{n:08x}: prompt: "
        "'<|start|>system<|message|>You are ChatGPT...', params: SamplingParams(n=1, temperature=1.0, max_tokens=512)\n",
    ]
    tb = (
        "(APIServer pid=1) ERROR 08-07 12:00:{s:02d} [serving_chat.py:1001] Error in chat completion stream generator.\n"
        "(APIServer pid=1) ERROR 08-07 12:00:{s:02d} [serving_chat.py:1001] Traceback (most recent call last):\n"
        '(APIServer pid=1) ERROR 08-07 12:00:{s:02d} [serving_chat.py:1001]   File "/usr/local/lib/python3.12/dist-packages/vllm/entrypoints/openai/serving_chat.py", line 629, in chat_completion_stream_generator\n'
        "(APIServer pid=1) ERROR 08-07 12:00:{s:02d} [serving_chat.py:1001]     harmony_parser.process(token_id)\n"
        "(APIServer pid=1) ERROR 08-07 12:00:{s:02d} [serving_chat.py:1001] openai_harmony.HarmonyError: Unexpected token {t} while expecting start token 200006\n"
    )
    target = mb * 1024 * 1024
    size = 0
    with open(path, "w", encoding="utf-8") as fh:
        while size < target:
            block = []
            for _ in range(2000):
                n = rnd.randrange(100000)
                block.append(info[n % 3].format(n=n % 250, s=n % 60))
            if rnd.random() < 0.3:
                block.append(tb.format(s=rnd.randrange(60), t=rnd.choice([12606, 173781, 13, 200002])))
            text = "".join(block)
            fh.write(text)
            size += len(text.encode())
    return size


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--log-mb", type=int, default=200)
    a = ap.parse_args()
    env = dict(os.environ, GPTOSS_DOCTOR_OFFLINE="1", TIKTOKEN_ENCODINGS_BASE=str(VOCAB))
    special = "openai_harmony.HarmonyError: Unexpected token 200012 while expecting start token 200006"
    regular = "openai_harmony.HarmonyError: Unexpected token 12606 while expecting start token 200006"
    wall(["explain", special], env, 2)  # warm the OS cache and the knowledge-base cache
    rows = []
    for label, msg, target in (("special tokens only", special, 150), ("regular token (vocabulary)", regular, 300)):
        t = wall(["explain", msg], env, a.runs)
        med = statistics.median(t)
        rows.append((label, f"median {med:.0f} ms, p90 {sorted(t)[int(len(t) * 0.9) - 1]:.0f} ms, min {min(t):.0f} ms",
                     f"< {target} ms", "PASS" if med < target else "FAIL"))
    with tempfile.TemporaryDirectory() as d:
        log = Path(d) / "vllm.log"
        size = make_log(log, a.log_mb)
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        t = time.perf_counter()
        r = subprocess.run(command() + ["explain", "--file", str(log), "--json"], env=env, stdout=subprocess.PIPE)
        secs = time.perf_counter() - t
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        if r.returncode != 0:
            raise SystemExit("explain --file failed")
        import json

        doc = json.loads(r.stdout)
        found = sum(e["count"] for e in doc["errors"] if e["kind"] == "harmony")
        speed = size / 1024 / 1024 / secs
        rows.append((f"explain --file {size / 1024 / 1024:.0f} MB log", f"{secs:.2f} s = {speed:.0f} MB/s, "
                     f"{found} HarmonyErrors found", ">= 50 MB/s", "PASS" if speed >= 50 else "FAIL"))
        rows.append(("  peak RSS", f"{rss_mb:.0f} MB" + (" (max over children)" if before else ""), "< 100 MB",
                     "PASS" if rss_mb < 100 else "FAIL"))
    print(f"gptoss-doctor explain benchmark ({os.cpu_count()} cores, {command()[0]})")
    w = max(len(r[0]) for r in rows)
    for r in rows:
        print(f"{r[0]:<{w}}  {r[1]:<58} {r[2]:<11} {r[3]}")


if __name__ == "__main__":
    main()
