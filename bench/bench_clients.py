"""How many real client x fault outputs `explain` gets right: scores a folder of outputs that
tests/test_real_clients.py captured (GPTOSS_DOCTOR_CLIENT_OUTPUTS=DIR), with the same verdict as the test.

    GPTOSS_DOCTOR_CLIENT_OUTPUTS=/tmp/client-outputs python -m pytest tests/test_real_clients.py
    python bench/bench_clients.py /tmp/client-outputs               # the score and each pair's answer
    python bench/bench_clients.py /tmp/client-outputs --markdown     # the same as a Markdown table

Right: the known issue first with high/medium when the knowledge base describes the fault, else the right triage
class first, no confident wrong entry, the client (from a traceback) and the proxy named. Also counted: the pairs
whose first answer is high/medium and wrong ("confident wrong")."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.test_real_clients import CLIENTS, CONFIDENT, FAULTS, problems  # noqa: E402

VOCAB = ROOT.parent / "shared" / "vocab"


def explain(text: bytes) -> dict:
    r = subprocess.run([sys.executable, "-m", "gptoss_doctor", "explain", "--json", "--offline", "--vocab", str(VOCAB),
                        "-"], input=text, capture_output=True, timeout=120, cwd=ROOT)
    return json.loads(r.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    faults = {f.id: f for f in FAULTS}
    rows = []
    for txt in sorted(args.folder.glob("*__*.txt")):
        client, fault_id = txt.stem.split("__", 1)
        if client not in CLIENTS or fault_id not in faults or client in faults[fault_id].silent:
            continue
        cmd = txt.with_suffix(".cmd").read_text(encoding="utf-8")
        code = int(re.search(r"exit code (-?\d+)", cmd).group(1))
        from gptoss_doctor import kb

        doc = explain(txt.read_bytes())
        fault = faults[fault_id]
        wrong = problems(fault, client, code, doc)
        top = doc["matches"][0] if doc["matches"] else None
        want = kb.get(fault.entry).id if fault.entry else fault.cls  # merged ids name the wider entry
        confident_wrong = bool(top and top["confidence"] in CONFIDENT and top["id"] != want)
        classes = [c["id"] for c in (doc.get("triage") or {}).get("classes", [])]
        rows.append((client, fault_id, want, top["id"] if top else "-", top["confidence"] if top else "-",
                     doc["origin"], classes[0] if classes else "-", not wrong, confident_wrong, wrong))
    right = sum(r[7] for r in rows)
    cw = sum(r[8] for r in rows)
    with_entry = [r for r in rows if faults[r[1]].entry]
    entry_right = sum(r[3] == r[2] and r[4] in CONFIDENT for r in with_entry)
    totals = (f"right {right}/{len(rows)}; known issue first with high/medium {entry_right}/{len(with_entry)} of the "
              f"pairs the knowledge base describes; confident wrong {cw}/{len(rows)}")
    if args.markdown:
        print("| client | fault | wanted | top entry | confidence | origin | triage class | right | confident wrong |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            print("| " + " | ".join(map(str, r[:7])) + f" | {'yes' if r[7] else 'no'} | {'YES' if r[8] else ''} |")
        print("\n" + totals)
    else:
        for r in rows:
            print(f"{'ok ' if r[7] else 'BAD'} {r[0]:14} {r[1]:20} top={r[3]} ({r[4]}) origin={r[5]} class={r[6]}"
                  + ("  CONFIDENT-WRONG" if r[8] else "") + ("" if r[7] else f"  {'; '.join(r[9])}"))
        print(totals)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
