#!/usr/bin/env bash
# Prints the Python of the torch environment Gauntlet builds against (Note [Which torch] in
# cmake/torch.cmake): $GAUNTLET_PYTHON, else $GAUNTLET_VENV/bin/python, else the environment
# ci/setup.sh makes (/opt/gauntlet/torch-2.14.1). Scripts run models/real/export.py and their
# PyTorch peers with it, never with a python3 found on PATH.
set -euo pipefail
if [ -n "${GAUNTLET_PYTHON:-}" ]; then
  echo "$GAUNTLET_PYTHON"
else
  echo "${GAUNTLET_VENV:-/opt/gauntlet/torch-2.14.1}/bin/python"
fi
