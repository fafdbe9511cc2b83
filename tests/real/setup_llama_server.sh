#!/usr/bin/env bash
# llama-server built from the llama.cpp sources vendored in the llama-cpp-python 0.3.36 sdist on PyPI (commit
# 0c1e570, the build recorded in ../shared/real/llama.cpp-b1-0c1e570), CPU only, for tests/test_real_llamacpp.py.
# About 15-30 min on 2 cores; a finished build in DIR is reused. The sdist is checked against its sha256.
# Usage: tests/real/setup_llama_server.sh DIR      (prints the variables to export; eval its output)
set -euo pipefail
DIR="${1:?usage: setup_llama_server.sh DIR}"
VER=0.3.36
SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
JOBS="${JOBS:-2}"
mkdir -p "$DIR"
SRC="$DIR/llama_cpp_python-$VER/vendor/llama.cpp"
if [ ! -x "$SRC/build/bin/llama-server" ]; then
  command -v cmake >/dev/null && command -v g++ >/dev/null || { echo "setup: cmake and g++ are needed" >&2; exit 1; }
  if [ ! -f "$DIR/llama_cpp_python-$VER.tar.gz" ]; then
    python3 -m pip download --quiet --no-binary=llama-cpp-python --no-deps "llama-cpp-python==$VER" -d "$DIR" >&2
  fi
  echo "$SHA256  $DIR/llama_cpp_python-$VER.tar.gz" | sha256sum -c --quiet - >&2
  [ -d "$DIR/llama_cpp_python-$VER" ] || tar -xzf "$DIR/llama_cpp_python-$VER.tar.gz" -C "$DIR"
  cmake -S "$SRC" -B "$SRC/build" -DLLAMA_CURL=OFF -DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF \
    -DCMAKE_BUILD_TYPE=Release >&2
  cmake --build "$SRC/build" --target llama-server -j"$JOBS" >&2
fi
"$SRC/build/bin/llama-server" --version >&2
echo "export GPTOSS_DOCTOR_LLAMA_SERVER='$SRC/build/bin/llama-server'"
echo "export GPTOSS_DOCTOR_LLAMA_CPP_SRC='$SRC'"
