#!/usr/bin/env bash
# Sets up a fresh Debian bookworm machine for torch_xla (C++), as root, and is safe to run again:
#  1. installs the Debian packages it needs (only those missing);
#  2. makes .venv in the checkout from the machine's python3 (3.10+; TXLA_BASE_PYTHON overrides);
#  3. installs into it the torch and the MKL pinned in pyproject.toml (PyPI's wheels; pip's cache
#     makes a second install quick) and the test tools;
#  4. builds the C++ core and torch_xla._XLAC against that torch (ccache), into build/;
#  5. makes this checkout the venv's torch_xla (a .pth file): `.venv/bin/python -c 'import torch_xla'`
#     works from any directory.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

PACKAGES=(
  build-essential cmake ccache git python3 python3-dev python3-venv libgtest-dev libopenblas-dev libdnnl-dev
  clang libclang-rt-14-dev iproute2  # the parser fuzzer (libFuzzer); the fault tests' hosts
  graphviz  # XLA_SAVE_TENSORS_FMT=dot dumps are rendered by a test
  libjemalloc2  # the allocator README's "Memory allocator" preloads (bench/train_step.py --allocator)
)
missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "[setup] installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "[setup] Debian packages present"
fi

BASE_PYTHON="${TXLA_BASE_PYTHON:-$(command -v python3)}"
"$BASE_PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || {
  echo "[setup] $BASE_PYTHON is older than Python 3.10; set TXLA_BASE_PYTHON to a newer one" >&2; exit 1; }
VENV="$ROOT/.venv"
PYTHON="$VENV/bin/python"
if [ ! -x "$PYTHON" ]; then
  echo "[setup] creating $VENV from $BASE_PYTHON"
  "$BASE_PYTHON" -m venv "$VENV"
fi

# The pins live in pyproject.toml (torch and mkl in dependencies; torchvision and the model zoo's
# libraries with the test extras).
pin() { grep -o "\"$1==[^\"]*\"" "$ROOT/pyproject.toml" | head -1 | tr -d '"'; }
REQUIREMENTS=("$(pin torch)" "$(pin torchvision)" "$(pin mkl)" "$(pin transformers)" "$(pin timm)" "$(pin diffusers)"
              "$(pin rich)" numpy pytest scikit-build-core)
if ! "$PYTHON" - "${REQUIREMENTS[@]}" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
for req in sys.argv[1:]:
    name, _, want = req.partition("==")
    have = version(name)
    if want and have.split('+')[0] != want:
        sys.exit(1)
PY
then
  echo "[setup] installing ${REQUIREMENTS[*]} into $VENV"
  "$PYTHON" -m pip install -q --upgrade pip
  "$PYTHON" -m pip install -q "${REQUIREMENTS[@]}"
else
  echo "[setup] ${REQUIREMENTS[*]} present in $VENV"
fi

echo "[setup] building (build/, ccache: $(command -v ccache >/dev/null && echo on || echo off))"
# A build directory configured for another Python (or torch) is configured afresh.
if [ -f "$ROOT/build/CMakeCache.txt" ] && ! grep -q "^Python3_EXECUTABLE:[A-Z]*=$PYTHON\$" "$ROOT/build/CMakeCache.txt"; then
  rm -rf "$ROOT/build/CMakeCache.txt" "$ROOT/build/CMakeFiles"
fi
cmake -S "$ROOT" -B "$ROOT/build" -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$PYTHON" >/dev/null
cmake --build "$ROOT/build" -j "$(nproc)"

SITE="$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo "$ROOT" > "$SITE/torch_xla_cpp.pth"
(cd / && "$PYTHON" -c 'import torch, torch_xla, torch_xla.core.xla_model as xm; print("[setup] torch_xla", torch_xla.__version__, "with torch", torch.__version__, "on", xm.xla_device())')
