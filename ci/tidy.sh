#!/usr/bin/env bash
# clang-tidy (Debian's clang-tidy 14) with the checks of .clang-tidy on the C++ files a change
# touched: by default those the last commit changed (what CI's fresh clone of main holds), or
# those changed since --base REF, or every file with --all (slow: about half a minute a file that
# includes torch). A finding of a check listed in .clang-tidy's WarningsAsErrors fails the script
# (exit 1); the other checks' findings are printed as warnings. Needs the build's
# compile_commands.json (ci/test.sh builds it first).
#   ci/tidy.sh                # the files of the last commit
#   ci/tidy.sh --base main    # the files changed since main (a branch's work)
#   ci/tidy.sh --all          # every file
#   ci/tidy.sh FILE...        # these files
#   ci/tidy.sh --torch-free   # with any of the above: only the files built without torch (what
#                             # ci/test.sh runs: a file with torch takes 30-50 s, one without 1-5 s)
# Environment: BUILD_DIR (build/dev), JOBS (number of cores).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build/dev}
JOBS=${JOBS:-$(nproc)}

mode=last
base=
files=()
torch_free=0
while [ $# -gt 0 ]; do
  case "$1" in
    --all) mode=all; shift ;;
    --torch-free) torch_free=1; shift ;;
    --base) mode=base; base="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "ci/tidy.sh: unknown option $1 (see ci/tidy.sh --help)" >&2; exit 2 ;;
    *) mode=files; files+=("$1"); shift ;;
  esac
done
command -v clang-tidy >/dev/null || { echo "ci/tidy.sh: clang-tidy not found: run ci/setup.sh" >&2; exit 2; }
db="$BUILD_DIR/compile_commands.json"
[ -f "$db" ] || { echo "ci/tidy.sh: $db not found: build first (cmake --preset dev && cmake --build build/dev)" >&2; exit 2; }

# The sources the build compiles (generated files and fetched ones excluded); with --torch-free,
# those compiled without the torch headers (no precompiled torch header, no torch include path).
compiled=$(python3 -c 'import json,os,sys
root=os.getcwd()
for e in json.load(open(sys.argv[1])):
    f=os.path.relpath(os.path.join(e["directory"], e["file"]), root)
    cmd=" ".join(e["arguments"]) if "arguments" in e else e["command"]
    if sys.argv[2] == "1" and ("cmake_pch" in cmd or "torch/csrc" in cmd): continue
    if not f.startswith(("build", "..")): print(f)' "$db" "$torch_free" | sort -u)
case "$mode" in
  all) candidates="$compiled" ;;
  last) candidates=$(git diff --name-only --diff-filter=AM HEAD~1 HEAD 2>/dev/null || true) ;;
  base) candidates=$(git diff --name-only --diff-filter=AM "$base"...HEAD) ;;
  files) candidates=$(printf '%s\n' "${files[@]}") ;;
esac
targets=$(comm -12 <(echo "$candidates" | sort -u) <(echo "$compiled"))
if [ -z "$targets" ]; then
  echo "ci/tidy.sh: no compiled C++ file to check"
  exit 0
fi
n=$(echo "$targets" | wc -l)
echo "ci/tidy.sh: clang-tidy on $n file(s)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The build's commands without GCC's precompiled header (clang cannot read a .gch: each file is
# checked with the includes it names itself) and without GCC-only warning options.
python3 - "$db" "$tmp/compile_commands.json" <<'PY'
import json, shlex, sys
out = []
for e in json.load(open(sys.argv[1])):
    args = e["arguments"] if "arguments" in e else shlex.split(e["command"])
    kept, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-include" or a == "-Xclang":
            skip = True
            continue
        if a.startswith("-include") or a in ("-Winvalid-pch", "-fpch-preprocess") or a.startswith("-fno-gnu-unique"):
            continue
        kept.append(a)
    kept.append("-Wno-unknown-warning-option")
    out.append({"directory": e["directory"], "file": e["file"], "arguments": kept})
json.dump(out, open(sys.argv[2], "w"))
PY
out="$tmp/findings"
start=$(date +%s)
# -quiet: no per-file banner; the findings go to $out, one clang-tidy per file, JOBS at once.
echo "$targets" | xargs -P "$JOBS" -n 1 clang-tidy -p "$tmp" -quiet >"$out" 2>/dev/null || true
errors=$(grep -c ': error: ' "$out" || true)
warnings=$(grep -c ': warning: ' "$out" || true)
grep -E ': (error|warning): ' "$out" | sort -u || true
echo "ci/tidy.sh: $n file(s) in $(( $(date +%s) - start )) s: $errors error(s), $warnings warning(s)"
[ "$errors" -eq 0 ]
