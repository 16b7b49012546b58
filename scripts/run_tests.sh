#!/usr/bin/env bash
# Set-up, then every test: the C++ unit tests (GoogleTest through ctest), then the Python tests.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
echo "[tests] C++ (ctest)"
(cd "$ROOT/build" && ctest --output-on-failure -j 2 --timeout 600)
echo "[tests] Python (pytest)"
cd "$ROOT" && "$ROOT/.venv/bin/python" -m pytest -q -p no:cacheprovider tests/python "$@"
