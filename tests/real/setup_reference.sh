#!/usr/bin/env bash
# A Python environment for tests/test_real_reference.py: OpenAI's reference Responses API server, PyPI gpt-oss 0.0.9
# (python -m gpt_oss.responses_api.serve, its transformers backend), on the same pinned torch 2.13.0 (CPU) and
# transformers stack as tests/real/setup_transformers.sh, plus what gpt_oss.responses_api imports. Every file pinned
# by version and sha256, no resolver. The gpt-oss wheels say Requires-Python >=3.12; the server's code runs unchanged
# on 3.11 (recorded in ../shared/real/gpt-oss-reference-0.0.9), hence --ignore-requires-python.
# Usage: tests/real/setup_reference.sh DIR      (prints the variables to export; eval its output)
set -euo pipefail
DIR="${1:?usage: setup_reference.sh DIR}"
HERE="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$DIR"
if [ ! -x "$DIR/venv/bin/python" ] || ! "$DIR/venv/bin/python" -c "import gpt_oss.responses_api.api_server" 2>/dev/null; then
  python3 -m venv "$DIR/venv"
  "$DIR/venv/bin/python" -m pip install --quiet --require-hashes --no-deps --ignore-requires-python \
    -r "$HERE/transformers-5.23.0-requirements.txt" -r "$HERE/gpt-oss-0.0.9-requirements.txt" >&2
fi
# the tiny models are built with a gpt-oss chat template (make_scripted_gptoss.py applies it): setup_transformers.sh
# fetches it, and finds its venv already there (the one above holds the same pinned transformers stack)
TEMPLATE="$(bash "$HERE/setup_transformers.sh" "$DIR" | sed -n "s/^export GPTOSS_DOCTOR_GPTOSS_TEMPLATE='\(.*\)'$/\1/p")"
echo "export GPTOSS_DOCTOR_REFERENCE_PY='$DIR/venv/bin/python'"
echo "export GPTOSS_DOCTOR_REFERENCE_TEMPLATE='$TEMPLATE'"
