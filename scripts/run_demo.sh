#!/usr/bin/env bash
# Set-up, then the main demo: MNIST training on the xla device (loss, then the metrics report).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
cd /tmp && "$ROOT/.venv/bin/python" "$ROOT/examples/train_mnist.py" "$@"
