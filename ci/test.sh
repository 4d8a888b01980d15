#!/usr/bin/env bash
# The test command: installs what is missing, configures, builds and runs every test, then the
# Slurm integration test (ci/slurm_test.sh: needs root, starts a one-node cluster).
#   ci/test.sh            # build/dev (warnings are errors)
# Environment: BUILD_DIR (default build/dev), JOBS (default: number of cores).
set -euo pipefail
cd "$(dirname "$0")/.."

bash ci/setup.sh

# Before the build, in seconds: the layering rules the compiler cannot check (no SQL on the
# results database outside the store, no torch in the torch-free targets), and the format of every
# C++ file (.clang-format; ci/check_format.sh --fix formats them).
bash ci/check_layers.sh
bash ci/check_format.sh

BUILD_DIR=${BUILD_DIR:-build/dev}
JOBS=${JOBS:-$(nproc)}
start=$(date +%s)

cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGAUNTLET_WERROR=ON >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS"
echo "ci/test.sh: built in $(( $(date +%s) - start )) s"

# clang-tidy (.clang-tidy: every finding an error) on the last commit's files that build without
# torch, a few seconds each; ci/tidy.sh --all checks every file (half a minute each with torch).
BUILD_DIR="$BUILD_DIR" JOBS="$JOBS" bash ci/tidy.sh --torch-free

# The real-model corpus's CI subset (suite models_real_smoke; cached after the first time).
bash ci/export_models.sh smoke

# Unit, torch and end-to-end tests (ctest runs each gtest case as its own test).
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" --timeout 900

# The sharded run on a one-node Slurm cluster: array, merge, and the same statuses as one host.
GAUNTLET_BIN="$BUILD_DIR/harness/gauntlet" bash ci/slurm_test.sh
echo "ci/test.sh: done in $(( $(date +%s) - start )) s"
