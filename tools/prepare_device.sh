#!/usr/bin/env bash
# Run once on the development machine, in the project root, before using the GPU machine:
# fills the ignored .device/ with PyCUDA's source and the wheels (../shared/device/prepare.sh)
# plus Debian's Google Highway packages, which the C++ module needs and the GPU machine lacks.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
bash ../shared/device/prepare.sh
(cd .device && apt-get download libhwy-dev libhwy1 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
