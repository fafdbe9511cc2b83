#!/usr/bin/env bash
# The official gpt-oss chat template, taken from the llama.cpp sources vendored in the llama-cpp-python 0.3.36 sdist
# on PyPI (models/templates/openai-gpt-oss-120b.jinja); the sdist is checked against its sha256. Used by
# setup_transformers.sh and setup_vllm.sh (the tiny models are built with it).
# Usage: tests/real/gptoss_template.sh DIR      (prints the template's path; a copy already in DIR is reused)
set -euo pipefail
DIR="${1:?usage: gptoss_template.sh DIR}"
LCP_VERSION=0.3.36
LCP_SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
TEMPLATE="$DIR/openai-gpt-oss-120b.jinja"
mkdir -p "$DIR"
if [ ! -s "$TEMPLATE" ]; then
  python3 -m pip download --quiet --no-binary=llama-cpp-python --no-deps "llama-cpp-python==$LCP_VERSION" -d "$DIR" >&2
  echo "$LCP_SHA256  $DIR/llama_cpp_python-$LCP_VERSION.tar.gz" | sha256sum -c --quiet - >&2
  tar -xzf "$DIR/llama_cpp_python-$LCP_VERSION.tar.gz" -C "$DIR" --strip-components=5 \
    "llama_cpp_python-$LCP_VERSION/vendor/llama.cpp/models/templates/openai-gpt-oss-120b.jinja"
fi
echo "$TEMPLATE"
