#!/usr/bin/env bash
# Installs every build and test dependency of Gauntlet from Debian's packages.
# Idempotent: when everything is present it prints nothing and touches nothing.
#   ci/setup.sh [PACKAGE...]   # also these Debian packages (ci/fuzz.sh: clang and its runtimes)
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libtorch-dev libgloo-dev libopenblas0-pthread
  libgtest-dev libgmock-dev libbenchmark-dev
  libsqlite3-dev sqlite3
  libboost-dev libboost-filesystem-dev
  libfmt-dev libyaml-cpp-dev nlohmann-json3-dev libsimdjson-dev libcli11-dev libxxhash-dev libzstd-dev libxml2-utils
  # The format check and clang-tidy of ci/test.sh (ci/check_format.sh, ci/tidy.sh; Debian 12's are
  # version 14).
  clang-format clang-tidy
  # A one-node Slurm cluster for the sharded-run test (ci/slurm_test.sh, ci/slurm/cluster.sh).
  slurm-wlm slurmctld slurmd slurm-client munge
  # Debian's PyTorch for Python: exports the real-model corpus (ci/export_models.sh, models/real/)
  # and runs bundles' repro scripts. torchvision's and torchaudio's op libraries load without Python.
  python3-torch python3-torchvision python3-torchaudio python3-yaml
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

# libtorch must run on OpenBLAS, not the netlib reference BLAS (15-20x slower).
blas=$(readlink -f /etc/alternatives/libblas.so.3-x86_64-linux-gnu 2>/dev/null || true)
case "$blas" in
  *openblas*) ;;
  *)
    cand=$(update-alternatives --list libblas.so.3-x86_64-linux-gnu 2>/dev/null | grep openblas | head -n1 || true)
    if [ -n "$cand" ]; then
      ${SUDO:-} update-alternatives --quiet --set libblas.so.3-x86_64-linux-gnu "$cand"
    fi
    ;;
esac

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
