#!/usr/bin/env bash
# A Python environment for tests/test_real_transformers.py: torch 2.13.0 (CPU) and transformers[serving] 5.23.0
# (the release recorded in ../shared/real), pinned with their dependencies, plus the official gpt-oss chat template
# taken from the llama.cpp sources vendored in the llama-cpp-python sdist on PyPI (models/templates/).
# Usage: tests/real/setup_transformers.sh DIR      (prints the variables to export; eval its output)
set -euo pipefail
DIR="${1:?usage: setup_transformers.sh DIR}"
HERE="$(cd "$(dirname "$0")" && pwd)"
LCP_VERSION=0.3.36
LCP_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
mkdir -p "$DIR"
if [ ! -x "$DIR/venv/bin/transformers" ]; then
  python3 -m venv "$DIR/venv"
  # every file pinned by version and sha256, no resolver: torch 2.13.0+cpu is the machine's own wheel
  "$DIR/venv/bin/python" -m pip install --quiet --require-hashes --no-deps \
    -r "$HERE/transformers-5.23.0-requirements.txt" >&2
fi
TEMPLATE="$DIR/openai-gpt-oss-120b.jinja"
if [ ! -s "$TEMPLATE" ]; then
  "$DIR/venv/bin/python" -m pip download --quiet --no-binary=llama-cpp-python --no-deps \
    "llama-cpp-python==$LCP_VERSION" -d "$DIR" >&2
  echo "$LCP_SHA256  $DIR/llama_cpp_python-$LCP_VERSION.tar.gz" | sha256sum -c --quiet - >&2
  tar -xzf "$DIR/llama_cpp_python-$LCP_VERSION.tar.gz" -C "$DIR" --strip-components=5 \
    "llama_cpp_python-$LCP_VERSION/vendor/llama.cpp/models/templates/openai-gpt-oss-120b.jinja"
fi
echo "export GPTOSS_DOCTOR_TRANSFORMERS_PY='$DIR/venv/bin/python'"
echo "export GPTOSS_DOCTOR_GPTOSS_TEMPLATE='$TEMPLATE'"
