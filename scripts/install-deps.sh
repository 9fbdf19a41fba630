#!/usr/bin/env bash
# Installs what oomguard needs to build, test and validate, from Debian's packages.
# Idempotent: packages already present are skipped; apt-get update runs only when something is missing.
set -euo pipefail

build_pkgs=(
  cmake g++ make pkg-config clang libclang-rt-14-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev
  libre2-dev libturbojpeg0-dev libjpeg62-turbo-dev libjpeg-turbo-progs
  zlib1g-dev  # reading gzip allocation traces in bench/mr_bench.cc
)
# Validation reference for the planner (real PyTorch on CPU) and tooling.
python_pkgs=(python3 python3-torch python3-torchvision python3-onnx python3-numpy python3-pil
  libopenblas0-serial  # an optimized BLAS for torch's Linear/MatMul (netlib is ~10x slower)
  python3-dev pybind11-dev)  # the oomguard Python package (python/)

want=("${build_pkgs[@]}")
if [ "${OOMGUARD_SKIP_PYTHON:-0}" != 1 ]; then want+=("${python_pkgs[@]}"); fi
# Screenshots of the pages for the docs (tools/screenshots.sh), not needed to build or test.
if [ "${OOMGUARD_SCREENSHOTS:-0}" = 1 ]; then want+=(chromium fonts-dejavu-core); fi

missing=()
for p in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#want[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
