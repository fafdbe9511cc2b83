"""Calibration on problems the knowledge base does not describe, measured on the dev split only.

The dev split has no uncovered cases, so it cannot show how often ``explain`` answers confidently about a problem
no entry describes. Leave-one-out makes such cases from it: each dev case is matched against the knowledge base
*without* the entries its label names (and the entries merged into them), so every high or medium answer it still
gets is wrong by construction. Used to tune the confidence rules without reading the held-back or independent sets.

    python bench/bench_calibration.py            # simulated-uncovered confident wrong, by the kind of evidence
    python bench/bench_calibration.py --triage dev            # the triage's first class, each case without its entries
    python bench/bench_calibration.py --basis tune,independent  # how often it fits, by how it was chosen
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent.parent), str(Path(__file__).resolve().parent)]


def kind_of(evidence: list[str]) -> str:
    ev = " | ".join(evidence)
    if "quotes the known message" in ev:
        return "message quoted"
    if "known message" in ev:
        return "message shape"
    if "pattern" in ev:
        return "pattern"
    if "token ID" in ev:
        return "token ids"
    if "shares these terms" in ev and ("is affected" in ev or "which this issue names" in ev):
        return "words + facet"
    if "shares these terms" in ev:
        return "words"
    return "artifact/other"


def _loo() -> tuple[int, collections.Counter, list[str], int]:
    import bench_accuracy as B
    from gptoss_doctor import kb
    from gptoss_doctor.explain import match as matching

    entries = kb.load()
    merged = kb.aliases(entries)
    dev = [c for c in B.load_cases() if c.split == "dev" and not c.negative and c.expect]
    kinds: collections.Counter = collections.Counter()
    lines = []
    for c in dev:
        expect = {merged.get(x, x) for x in c.expect}
        rest = [e for e in entries if e.id not in expect]
        found = matching.match_text(c.text, limit=3, entries=rest)
        if found and found[0].confidence in ("high", "medium"):
            k = kind_of(found[0].evidence)
            kinds[k] += 1
            lines.append(f"- {c.id} -> {found[0].entry.id} ({found[0].confidence}, {k})")
    return len(lines), kinds, lines, len(dev)


def leave_one_out() -> tuple[int, collections.Counter]:
    """(confident wrong answers, by kind of evidence) over the dev split with each case's own entries left out."""
    wrong, kinds, _, _ = _loo()
    return wrong, kinds


def triage_loo(split: str) -> tuple[int, int, collections.Counter, list[str]]:
    """Triage on simulated unknowns: each labelled case of ``split`` explained without its own entries; does the
    first triage class fit its labels? (fits, labelled, confusion (labels, first class), lines)"""
    import bench_accuracy as B
    from gptoss_doctor import kb
    from gptoss_doctor.explain import explain_text

    entries = kb.load()
    merged = kb.aliases(entries)
    cases = [c for c in B.load_cases() if c.split == split and not c.negative and c.classes]
    fits, confusion, lines = 0, collections.Counter(), []
    for c in cases:
        expect = {merged.get(x, x) for x in c.expect}
        rest = [e for e in entries if e.id not in expect]
        got = [h.cls.id for h in explain_text(c.text, allow_download=False, entries=rest).triage]
        if got and got[0] in c.classes:
            fits += 1
        else:
            confusion[("/".join(c.classes), got[0] if got else "-")] += 1
            lines.append(f"- {c.id} labels {c.classes} got {got}")
    return fits, len(cases), confusion, lines


def triage_by_basis(split: str) -> dict[str, tuple[int, int]]:
    """How the first triage class was chosen (triage.SHOWN / SAID / GUESS) and how often it fit, per basis:
    {basis: (fits, cases)}. The cases of a tuned split (dev, tune) are explained without their own entries; those
    of an independent set are its uncovered ones, explained as they are. Counts only: no case is listed."""
    import bench_accuracy as B
    from gptoss_doctor import kb
    from gptoss_doctor.explain import explain_text

    entries = kb.load()
    merged = kb.aliases(entries)
    out: dict[str, list[int]] = {}
    for c in B.load_cases():
        if c.split != split or c.negative or not c.classes:
            continue
        if split in ("dev", "tune", "holdout"):
            expect = {merged.get(x, x) for x in c.expect}
            rest = [e for e in entries if e.id not in expect]
        elif c.uncovered:
            rest = entries
        else:
            continue
        hits = explain_text(c.text, allow_download=False, entries=rest).triage
        basis = hits[0].basis if hits else "none"
        row = out.setdefault(basis, [0, 0])
        row[0] += bool(hits) and hits[0].cls.id in c.classes
        row[1] += 1
    return {b: (f, n) for b, (f, n) in out.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--show", type=int, default=0, help="list N of the confident wrong answers (dev texts only)")
    ap.add_argument("--triage", choices=["dev", "tune", "holdout"],
                    help="the triage's first class on this split's labelled cases, each without its own entries "
                         "(never list holdout misses while tuning)")
    ap.add_argument("--basis", metavar="SPLITS",
                    help="comma-separated splits (dev, tune, holdout, independent, independent-2 … independent-18): "
                         "how often the first triage class fits, by how it was chosen (counts only)")
    args = ap.parse_args(argv)

    if args.basis:
        for split in args.basis.split(","):
            rows = triage_by_basis(split)
            print(f"{split:14} " + "   ".join(f"{b} {f}/{n}" for b, (f, n) in sorted(rows.items())))
        return 0
    if args.triage:
        fits, n, confusion, lines = triage_loo(args.triage)
        if args.triage != "holdout":
            for line in lines[:args.show]:
                print(line)
            for (want, got), k in confusion.most_common(15):
                print(f"  {k:3}  labelled {want:40} first class {got}")
        print(f"{args.triage} (leave-one-out) triage fits {fits}/{n} ({100 * fits // max(n, 1)}%)")
        return 0
    wrong, kinds, lines, n = _loo()
    for line in lines[:args.show]:
        print(line)
    print(f"dev (leave-one-out)  {n} cases  confident wrong {wrong} ({100 * wrong // max(n, 1)}%)  by evidence: "
          + ", ".join(f"{k} {v}" for k, v in kinds.most_common()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def right_by_kind() -> collections.Counter:
    """Right and confident dev answers by the kind of evidence they rest on (what a stricter rule would cost)."""
    import bench_accuracy as B
    from gptoss_doctor import kb
    from gptoss_doctor.explain import match as matching

    entries = kb.load()
    merged = kb.aliases(entries)
    out: collections.Counter = collections.Counter()
    for c in B.load_cases():
        if c.split != "dev" or c.negative or not c.expect:
            continue
        expect = {merged.get(x, x) for x in c.expect}
        found = matching.match_text(c.text, limit=1, entries=entries)
        if found and found[0].entry.id in expect and found[0].confidence in ("high", "medium"):
            out[kind_of(found[0].evidence)] += 1
    return out
