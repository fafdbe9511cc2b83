#!/usr/bin/env bash
# A Python environment for tests/test_real_transformers.py: torch 2.13.0 (CPU) and transformers[serving] 5.23.0
# (the release recorded in ../shared/real), pinned with their dependencies, plus the official gpt-oss chat template
# (gptoss_template.sh).
# Usage: tests/real/setup_transformers.sh DIR      (prints the variables to export; eval its output)
set -euo pipefail
DIR="${1:?usage: setup_transformers.sh DIR}"
HERE="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$DIR"
if [ ! -x "$DIR/venv/bin/transformers" ]; then
  python3 -m venv "$DIR/venv"
  # every file pinned by version and sha256, no resolver: torch 2.13.0+cpu is the machine's own wheel
  "$DIR/venv/bin/python" -m pip install --quiet --require-hashes --no-deps \
    -r "$HERE/transformers-5.23.0-requirements.txt" >&2
fi
TEMPLATE="$(bash "$HERE/gptoss_template.sh" "$DIR")"
echo "export GPTOSS_DOCTOR_TRANSFORMERS_PY='$DIR/venv/bin/python'"
echo "export GPTOSS_DOCTOR_GPTOSS_TEMPLATE='$TEMPLATE'"
