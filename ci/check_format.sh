#!/usr/bin/env bash
# Checks that every C++ file follows .clang-format (Debian 12's clang-format, version 14): prints
# each file that differs and exits 1. With --fix, formats them in place instead.
#   ci/check_format.sh [--fix]
# Generated templates (*.in) and fuzz corpora are not C++ to format.
set -euo pipefail
cd "$(dirname "$0")/.."

fix=0
case "${1:-}" in
  --fix) fix=1 ;;
  "") ;;
  *) echo "ci/check_format.sh: unknown option $1 (usage: ci/check_format.sh [--fix])" >&2; exit 2 ;;
esac

tool=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$tool" ]; then
  echo "ci/check_format.sh: clang-format is missing (ci/setup.sh installs it)" >&2
  exit 2
fi

# Tracked files when this is a git checkout, else every file under the source folders.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.h' | grep -v '/corpus/')
else
  mapfile -t files < <(find harness simulator golden models suites cmake -type f \( -name '*.cpp' -o -name '*.h' \) | grep -v '/corpus/' | sort)
fi

if [ $fix -eq 1 ]; then
  "$tool" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  if ! "$tool" --dry-run --Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "ci/check_format.sh: ${#bad[@]} of ${#files[@]} files are not formatted by .clang-format ($("$tool" --version | head -1)):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "ci/check_format.sh: run ci/check_format.sh --fix (or clang-format -i FILE) and commit the result" >&2
  exit 1
fi
echo "ci/check_format.sh: ${#files[@]} files formatted"
