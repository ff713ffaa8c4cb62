#!/usr/bin/env bash
# Installs kevo's build and test dependencies from Debian 12 packages (run as root or with sudo).
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
    build-essential cmake ninja-build pkg-config \
    libcli11-dev nlohmann-json3-dev libfmt-dev libcurl4-openssl-dev libsqlite3-dev \
    ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo \
    libgtest-dev libgmock-dev libcpp-httplib-dev python3
