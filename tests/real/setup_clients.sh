#!/usr/bin/env bash
# Python environments for tests/test_real_clients.py: the client libraries people call gpt-oss servers with, at their
# current releases, every file pinned by version and sha256 (no resolver, nothing unpinned). Two venvs, because one
# cannot hold them all: llama-index-llms-openai caps openai below 3, which openai-agents and pydantic-ai need.
#   DIR/venv             openai, litellm, langchain-openai, openai-agents, pydantic-ai   (clients-requirements.txt)
#   DIR/venv-llamaindex  llama-index-llms-openai-like                                   (clients-llamaindex-requirements.txt)
# Usage: tests/real/setup_clients.sh DIR      (prints the variables to export; eval its output)
set -euo pipefail
DIR="${1:?usage: setup_clients.sh DIR}"
HERE="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$DIR"
install() {  # install VENV REQUIREMENTS MODULE: a venv that cannot import MODULE is (re)built
  if ! LITELLM_LOCAL_MODEL_COST_MAP=True "$1/bin/python" -c "import $3" >/dev/null 2>&1; then
    python3 -m venv --clear "$1"
    "$1/bin/python" -m pip install --quiet --require-hashes --no-deps -r "$2" >&2
    LITELLM_LOCAL_MODEL_COST_MAP=True "$1/bin/python" -c "import $3" >&2
  fi
}
install "$DIR/venv" "$HERE/clients-requirements.txt" "openai, litellm, langchain_openai, agents, pydantic_ai"
install "$DIR/venv-llamaindex" "$HERE/clients-llamaindex-requirements.txt" "llama_index.llms.openai_like"
echo "export GPTOSS_DOCTOR_CLIENTS_PY='$DIR/venv/bin/python'"
echo "export GPTOSS_DOCTOR_CLIENTS_LLAMAINDEX_PY='$DIR/venv-llamaindex/bin/python'"
