#!/usr/bin/env bash
# Exports the real-model corpus (models/real/export.py, docs/models.md "The real-model corpus"):
# weightless TorchScript files and their manifests, written with the torch environment's Python
# (torch, torchvision and torchaudio: ci/setup.sh installs them; ci/torch_python.sh). Cached by content: a
# model already exported by the same export.py and library versions is not exported again.
#   ci/export_models.sh          # the CI subset (models_real_smoke, models_real_scenarios): 7 models, ~20 s
#   ci/export_models.sh all      # every architecture (suite models_real): 66 models, ~21 min on 2 cores
# Environment: GAUNTLET_REAL_MODELS (default models/real/exported), the folder to write.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
set_name=${1:-smoke}
case "$set_name" in
  smoke|all) ;;
  *) echo "ci/export_models.sh: unknown set '$set_name' (smoke or all)" >&2; exit 2 ;;
esac
out=${GAUNTLET_REAL_MODELS:-$root/models/real/exported}
# The environment's interpreter: a python3 earlier on PATH (pyenv) has no torch.
python=$(bash "$root/ci/torch_python.sh")
if ! "$python" -c 'import torch, torchvision, torchaudio, yaml' 2>/dev/null; then
  echo "ci/export_models.sh: $python cannot import torch, torchvision, torchaudio and yaml: run ci/setup.sh" >&2
  exit 1
fi
mkdir -p "$out"
exec "$python" "$root/models/real/export.py" --out "$out" --set "$set_name"
