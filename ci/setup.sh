#!/usr/bin/env bash
# Installs every build and test dependency of Gauntlet: Debian's packages, the pinned PyTorch 2.x
# stack from PyPI into a virtual environment outside the checkout (Note [Which torch] in
# cmake/torch.cmake), and the dashboard's npm packages.
# Idempotent: when everything is present it prints nothing and touches nothing.
#   ci/setup.sh [PACKAGE...]   # also these Debian packages (ci/fuzz.sh: clang and its runtimes)
# Environment: GAUNTLET_VENV (default /opt/gauntlet/torch-2.14.1), the environment to make or reuse;
#   GAUNTLET_TORCH or GAUNTLET_PYTHON set: your own torch 2.x is used and no environment is made.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  # Debian's Python 3.11 with its shared libpython (python3-dev): it makes the torch environment,
  # and is the interpreter a worker embeds (never a Python built without --enable-shared).
  python3 python3-venv python3-dev
  # Gloo's headers, for the one translation unit that creates a Gloo process group: the torch wheel
  # ships none (Note [Gloo headers] in harness/plugin/include/gauntlet/plugin/torch_compat.h). Nothing links libgloo.
  libgloo-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libsqlite3-dev sqlite3
  libboost-dev libboost-filesystem-dev
  libfmt-dev libyaml-cpp-dev nlohmann-json3-dev libsimdjson-dev libcli11-dev libxxhash-dev libzstd-dev libxml2-utils
  # The format check and clang-tidy of ci/test.sh (ci/check_format.sh, ci/tidy.sh; Debian 12's are
  # version 14).
  clang-format clang-tidy
  # A one-node Slurm cluster for the sharded-run test (ci/slurm_test.sh, ci/slurm/cluster.sh).
  slurm-wlm slurmctld slurmd slurm-client munge
  # Headless Chromium for the dashboard's browser tests (dashboards/test/), driven by playwright-core.
  chromium
  "$@"
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

# Node.js and npm for the dashboard's chart library and browser tests: Debian's, unless the machine
# has a node and npm of its own on PATH already (a fresh Debian 12 has neither).
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  for p in nodejs npm; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then missing+=("$p"); fi
  done
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "ci/setup.sh: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The PyTorch stack, pinned. torch 2.14.1 is the newest torch a torchvision release pairs with
# (torchvision 0.29.2 pins it; 2.15.0 has no torchvision yet). torchaudio's newest release, 2.11.0,
# pins torch 2.11, but its op library is built on torch's stable ABI (libtorchaudio.abi3.so) and its
# models are plain torch.nn: it goes in without its dependencies. pyyaml: models/real/export.py.
TORCH_PINS=(torch==2.14.1 torchvision==0.29.2 pyyaml==6.0.4)
NO_DEPS_PINS=(torchaudio==2.11.0)
if [ -z "${GAUNTLET_TORCH:-}" ] && [ -z "${GAUNTLET_PYTHON:-}" ]; then
  venv=${GAUNTLET_VENV:-/opt/gauntlet/torch-2.14.1}
  want="${TORCH_PINS[*]} | ${NO_DEPS_PINS[*]}"
  stamp="$venv/.gauntlet-pins"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    t0=$(date +%s)
    echo "ci/setup.sh: installing $want from PyPI into $venv (about 3 GB of downloads, 5.5 GB on disk)"
    SUDO=${SUDO:-}
    if [ ! -x "$venv/bin/python" ]; then
      if [ ! -w "$(dirname "$venv")" ] && [ "$(id -u)" -ne 0 ]; then
        sudo mkdir -p "$venv" && sudo chown "$(id -u):$(id -g)" "$venv"
      fi
      # Debian's interpreter, by path: a pyenv or conda python3 earlier on PATH would make an
      # environment whose libpython a worker could not embed.
      /usr/bin/python3 -m venv "$venv"
    fi
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --progress-bar off "${TORCH_PINS[@]}"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --progress-bar off --no-deps "${NO_DEPS_PINS[@]}"
    "$venv/bin/python" -c 'import torch, torchvision, torchaudio, yaml' ||
      { echo "ci/setup.sh: $venv cannot import torch, torchvision, torchaudio and yaml after installing them" >&2; exit 1; }
    echo "$want" >"$stamp"
    echo "ci/setup.sh: $venv ready in $(( $(date +%s) - t0 )) s ($(du -sh "$venv" | cut -f1) on disk)"
  fi
fi

# The dashboard's npm packages (uPlot for the site, playwright-core for its browser tests), from
# dashboards/package-lock.json; only when node_modules is missing or older than the lock file.
dash="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/dashboards"
if [ -f "$dash/package-lock.json" ]; then
  command -v npm >/dev/null 2>&1 || { echo "ci/setup.sh: npm is missing after installing nodejs and npm" >&2; exit 1; }
  if [ ! -d "$dash/node_modules" ] || [ "$dash/package-lock.json" -nt "$dash/node_modules" ]; then
    echo "ci/setup.sh: npm ci in dashboards/"
    (cd "$dash" && npm ci --no-audit --no-fund --loglevel=error >/dev/null && touch node_modules)
  fi
fi
