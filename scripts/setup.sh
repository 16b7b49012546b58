#!/usr/bin/env bash
# Sets up a fresh Debian bookworm machine for torch_xla (C++): installs the apt packages it needs
# (only those missing), builds the C++ core and the torch_xla._XLAC extension, and installs the
# package into /usr/bin/python3's path. Safe to run again; run as root.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON=/usr/bin/python3

PACKAGES=(
  build-essential cmake ccache git
  python3 python3-dev python3-numpy python3-pytest
  python3-torch python3-torchvision libtorch-dev pybind11-dev libgtest-dev libopenblas-dev
  clang libclang-rt-14-dev iproute2  # the parser fuzzer (libFuzzer); the fault tests' hosts
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
  echo "[setup] apt packages present"
fi

echo "[setup] building (build/, ccache: $(command -v ccache >/dev/null && echo on || echo off))"
cmake -S "$ROOT" -B "$ROOT/build" -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE="$PYTHON" >/dev/null
cmake --build "$ROOT/build" -j "$(nproc)"

# The package is used in place from this checkout: a .pth file in the interpreter's site
# directory puts it on sys.path, so `import torch_xla` works from any directory.
SITE="$($PYTHON -c 'import site; print(site.getsitepackages()[0])')"
mkdir -p "$SITE"
echo "$ROOT" > "$SITE/torch_xla_cpp.pth"
(cd / && $PYTHON -c 'import torch_xla, torch_xla.core.xla_model as xm; print("[setup] torch_xla", torch_xla.__version__, "on", xm.xla_device())')
