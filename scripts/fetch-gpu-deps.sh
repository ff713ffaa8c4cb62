#!/usr/bin/env bash
# Downloads the Debian packages the GPU machine lacks (SQLite headers, cpp-httplib, toml++ and its
# shared library) into .deps/debs, an ignored folder that the device tool carries; scripts/gpu.sh
# unpacks them there.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .deps/debs
cd .deps/debs
apt-get download libsqlite3-dev libcpp-httplib-dev libtomlplusplus-dev libtomlplusplus3
