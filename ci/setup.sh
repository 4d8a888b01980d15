#!/usr/bin/env bash
# Installs every build and test dependency of Gauntlet from Debian's packages.
# Idempotent: when everything is present it prints nothing and touches nothing.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libtorch-dev libgloo-dev libopenblas0-pthread
  libgtest-dev libgmock-dev libbenchmark-dev
  libsqlite3-dev sqlite3
  libboost-dev libboost-filesystem-dev
  libfmt-dev libyaml-cpp-dev nlohmann-json3-dev libsimdjson-dev libcli11-dev libxxhash-dev libzstd-dev libxml2-utils
  # A one-node Slurm cluster for the sharded-run test (ci/slurm_test.sh, ci/slurm/cluster.sh).
  slurm-wlm slurmctld slurmd slurm-client munge
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

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
