"""SSE parsing throughput: MB/s of gptoss_doctor.net.sse.SSEParser on a realistic chat stream cut in 64 KiB pieces.

    python bench/bench_sse.py [--mb 200]
"""

from __future__ import annotations

import argparse
import json
import time

from gptoss_doctor.net.sse import SSEParser


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=200)
    args = ap.parse_args()
    frame = ("data: " + json.dumps({"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "openai/gpt-oss-20b",
                                    "choices": [{"index": 0, "delta": {"content": "word "}, "finish_reason": None}]})
             + "\n\n").encode()
    block = frame * (65536 // len(frame) + 1)
    total = args.mb << 20
    parser = SSEParser()
    n_events, done = 0, 0
    t = time.perf_counter()
    while done < total:
        n_events += len(parser.feed(block))
        done += len(block)
    dt = time.perf_counter() - t
    print(f"{done / dt / (1 << 20):.0f} MB/s ({done >> 20} MB, {n_events} events, {dt:.2f} s)")


if __name__ == "__main__":
    main()
