#!/usr/bin/env bash
# Installs kevo's build and test dependencies from Debian 12 packages (run as root or with sudo),
# LiteLLM's proxy from PyPI into .venv-litellm (ignored by git), the real OpenAI-compatible server of
# tests/test_litellm_proxy.cpp, and the pinned Triton from PyPI into .venv-triton (ignored), the
# compiler of Triton candidates (KEVO_TRITON_PYTHON names its Python; tests/test_triton.cpp). Open MPI
# and SLURM (slurm-wlm, munge) are for `mpirun kevo sweep` and its tests (tests/test_mpi_sweep.cpp,
# tests/test_slurm.cpp; docs/scale.md).
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
    build-essential cmake ninja-build pkg-config \
    libcli11-dev nlohmann-json3-dev libfmt-dev libcurl4-openssl-dev libsqlite3-dev libtomlplusplus-dev \
    ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo \
    libgtest-dev libgmock-dev libcpp-httplib-dev python3 python3-venv chromium \
    openmpi-bin libopenmpi-dev slurm-wlm munge

# One pinned version: the test relies on its mock responses, its cost header and its master-key rule.
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LITELLM_VERSION="1.108.7"
if ! "$ROOT/.venv-litellm/bin/litellm" --version 2>/dev/null | grep -q "$LITELLM_VERSION"; then
    python3 -m venv "$ROOT/.venv-litellm"
    "$ROOT/.venv-litellm/bin/pip" install --quiet --disable-pip-version-check "litellm[proxy]==$LITELLM_VERSION"
fi

# Triton: the version of the H200 image, which kevo's driver, seeds and checks are written against.
TRITON_VERSION="3.6.0"
if ! "$ROOT/.venv-triton/bin/python" -c "import triton, sys; sys.exit(triton.__version__ != '$TRITON_VERSION')" 2>/dev/null; then
    python3 -m venv "$ROOT/.venv-triton"
    "$ROOT/.venv-triton/bin/pip" install --quiet --disable-pip-version-check "triton==$TRITON_VERSION"
fi
