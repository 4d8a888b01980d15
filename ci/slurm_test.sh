#!/usr/bin/env bash
# Integration test of the Slurm scripts (ci/slurm/): starts a one-node Slurm cluster in a temporary
# folder (ci/slurm/cluster.sh), runs a suite sharded over a job array with the merge job after it
# (ci/slurm/submit.sh), waits for both, checks that every array task and the merge job exited 0,
# that every shard database holds results and that the merged run is "merged N of N", then compares
# the merged database with a single-host `gauntlet run` of the same suite, filter, backend and
# release: the same number of results and, case by case, the same status. Stops the cluster (always,
# also on failure) and checks that no daemon it started is left and that Slurm's ports are free.
# Fails, never skips, when Slurm cannot start. Needs root and the packages of ci/setup.sh.
#   ci/slurm_test.sh
# Environment: GAUNTLET_BIN (default build/dev/harness/gauntlet, from the repository root),
#   SUITE (smoke), BACKEND (sim), SHARDS (4), FILTER (none), JOB_TIMEOUT (seconds, 300).
set -euo pipefail
cd "$(dirname "$0")/.."

me=ci/slurm_test.sh
GAUNTLET_BIN=${GAUNTLET_BIN:-build/dev/harness/gauntlet}
case $GAUNTLET_BIN in /*) ;; *) GAUNTLET_BIN=$PWD/$GAUNTLET_BIN;; esac
SUITE=${SUITE:-smoke}
BACKEND=${BACKEND:-sim}
SHARDS=${SHARDS:-4}
FILTER=${FILTER:-}
JOB_TIMEOUT=${JOB_TIMEOUT:-300}
RELEASE=slurm-test
PORTS=(6817 6818)

now_ms() { local t=${EPOCHREALTIME//[.,]/}; echo $((t / 1000)); }
secs() { printf '%d.%02d s' $(($1 / 1000)) $(($1 % 1000 / 10)); }
t_begin=$(now_ms)

work=""
cluster=""
out=""
cluster_up=0
fail() {
  echo "$me: FAIL: $*" >&2
  if [ -n "$out" ] && [ -d "$out/logs" ]; then
    local f
    for f in "$out"/logs/*.log; do
      [ -f "$f" ] || continue
      echo "---- $f (last 20 lines)" >&2
      tail -n 20 "$f" >&2
    done
  fi
  exit 1
}
cleanup() {
  local rc=$?
  if [ "$cluster_up" = 1 ]; then
    bash ci/slurm/cluster.sh stop "$cluster" >&2 || rc=1
  fi
  [ -n "$work" ] && rm -rf "$work"
  exit $rc
}
trap cleanup EXIT

[ -x "$GAUNTLET_BIN" ] || fail "no gauntlet binary at $GAUNTLET_BIN (build it, or set GAUNTLET_BIN)"
[ "$(id -u)" -eq 0 ] || fail "needs root to run a Slurm cluster"
for tool in sqlite3 ss sbatch squeue scontrol slurmctld slurmd munged; do
  command -v "$tool" >/dev/null || fail "$tool not found (bash ci/setup.sh installs it)"
done
for port in "${PORTS[@]}"; do
  [ -z "$(ss -Hltn "sport = :$port")" ] || fail "port $port is in use before the test: another Slurm runs here"
done

work=$(mktemp -d -t gauntlet-slurm.XXXXXX)
chmod 0755 "$work" # munged runs as the munge user, inside it
cluster=$work/cluster
out=$work/out
stepd_before=$(pgrep -x slurmstepd | sort || true)

# ---- the cluster
t0=$(now_ms)
cluster_up=1 # from here on, stop it whatever happens (start stops what it started when it fails)
bash ci/slurm/cluster.sh start "$cluster" || fail "the Slurm cluster did not start (logs above)"
export SLURM_CONF=$cluster/slurm.conf
t_start=$(($(now_ms) - t0))
pids=()
for f in "$cluster"/run/slurmctld.pid "$cluster"/run/slurmd.pid "$cluster"/munge/munged.pid; do
  [ -s "$f" ] || fail "no pid file $f after start"
  pids+=("$(cat "$f")")
done

# ---- the sharded run
t0=$(now_ms)
submit_env=(GAUNTLET_BIN="$GAUNTLET_BIN" SUITE="$SUITE" BACKEND="$BACKEND" SHARDS="$SHARDS"
  OUT="$out" RELEASE="$RELEASE" FILTER="$FILTER")
env "${submit_env[@]}" bash ci/slurm/submit.sh || fail "ci/slurm/submit.sh failed"
[ -f "$out/jobs.env" ] || fail "submit.sh wrote no $out/jobs.env"
ARRAY_JOB=$(sed -n 's/^ARRAY_JOB=//p' "$out/jobs.env")
MERGE_JOB=$(sed -n 's/^MERGE_JOB=//p' "$out/jobs.env")
[[ $ARRAY_JOB =~ ^[0-9]+$ && $MERGE_JOB =~ ^[0-9]+$ ]] || fail "bad job ids in $out/jobs.env"
deadline=$((SECONDS + JOB_TIMEOUT))
while :; do
  pending=$(squeue -h -j "$ARRAY_JOB,$MERGE_JOB" -o '%i %T') || fail "squeue failed"
  [ -z "$pending" ] && break
  [ $SECONDS -lt $deadline ] || fail "jobs $ARRAY_JOB and $MERGE_JOB not done after $JOB_TIMEOUT s: $pending"
  sleep 0.2
done
t_jobs=$(($(now_ms) - t0))

# Every array task, then the merge job: COMPLETED with exit code 0.
tasks=$(scontrol -o show job "$ARRAY_JOB") || fail "scontrol show job $ARRAY_JOB failed"
ntasks=$(grep -c "ArrayJobId=$ARRAY_JOB " <<<"$tasks" || true)
[ "$ntasks" -eq "$SHARDS" ] || fail "array job $ARRAY_JOB has $ntasks tasks, expected $SHARDS"
while read -r line; do
  task=$(grep -oE 'ArrayTaskId=[0-9]+' <<<"$line")
  state=$(grep -oE 'JobState=[A-Z_]+' <<<"$line")
  code=$(grep -oE ' ExitCode=[0-9]+:[0-9]+' <<<"$line")
  [ "$state $code" = "JobState=COMPLETED  ExitCode=0:0" ] ||
    fail "array job $ARRAY_JOB $task: $state$code, expected COMPLETED, exit 0"
done <<<"$tasks"
line=$(scontrol -o show job "$MERGE_JOB") || fail "scontrol show job $MERGE_JOB failed"
state=$(grep -oE 'JobState=[A-Z_]+' <<<"$line")
code=$(grep -oE ' ExitCode=[0-9]+:[0-9]+' <<<"$line")
[ "$state $code" = "JobState=COMPLETED  ExitCode=0:0" ] ||
  fail "merge job $MERGE_JOB: $state$code, expected COMPLETED, exit 0"

# Every shard database holds a finished run with results; the merged run holds all of them.
q() { sqlite3 -batch -noheader "$1" "$2"; }
sum=0
for ((i = 0; i < SHARDS; i++)); do
  db=$out/shard-$i.sqlite
  [ -f "$db" ] || fail "no shard database $db"
  n=$(q "$db" "SELECT count(*) FROM results")
  [ "$n" -gt 0 ] || fail "$db holds no results"
  [ "$(q "$db" "SELECT shard FROM runs")" = "$i/$SHARDS" ] || fail "$db is not shard $i/$SHARDS"
  [ -n "$(q "$db" "SELECT finished_at FROM runs")" ] || fail "$db: the shard's run did not finish"
  sum=$((sum + n))
done
merged=$out/all.sqlite
[ -f "$merged" ] || fail "no merged database $merged"
[ "$(q "$merged" "SELECT count(*) FROM runs")" = 1 ] || fail "$merged holds more than one run"
shard=$(q "$merged" "SELECT shard FROM runs")
[ "$shard" = "merged $SHARDS of $SHARDS" ] || fail "$merged: shard is '$shard', expected 'merged $SHARDS of $SHARDS'"
n_merged=$(q "$merged" "SELECT count(*) FROM results")
[ "$n_merged" -eq "$sum" ] || fail "$merged holds $n_merged results, the shards $sum"

# ---- the single-host reference run, compared case by case
t0=$(now_ms)
single=$work/single.sqlite
args=(run --suite "$SUITE" --backend "$BACKEND" --db "$single" --release "$RELEASE" --quiet)
[ -n "$FILTER" ] && args+=(--filter "$FILTER")
"$GAUNTLET_BIN" "${args[@]}" >"$work/single.log" 2>&1 || { cat "$work/single.log" >&2; fail "the single-host run failed"; }
t_single=$(($(now_ms) - t0))
n_single=$(q "$single" "SELECT count(*) FROM results")
[ "$n_single" -gt 0 ] || fail "the single-host run has no results"
[ "$n_merged" -eq "$n_single" ] || fail "merged: $n_merged results, single host: $n_single"
by_case="SELECT c.key, r.status FROM results r JOIN cases c ON c.id = r.case_id ORDER BY 1"
q "$merged" "$by_case" >"$work/merged.txt"
q "$single" "$by_case" >"$work/single.txt"
[ "$(cut -d'|' -f1 "$work/merged.txt" | sort -u | wc -l)" -eq "$n_merged" ] || fail "$merged holds a case twice"
if ! diff "$work/single.txt" "$work/merged.txt" >"$work/diff.txt"; then
  echo "---- single host (<) vs merged (>), first 40 lines" >&2
  head -n 40 "$work/diff.txt" >&2
  fail "the merged statuses differ from the single-host run's"
fi
counts=$(q "$merged" "SELECT status || ' ' || count(*) FROM results GROUP BY status ORDER BY 1" | paste -sd' ')

# ---- stop, and nothing of the cluster is left
t0=$(now_ms)
bash ci/slurm/cluster.sh stop "$cluster"
cluster_up=0
t_stop=$(($(now_ms) - t0))
for pid in "${pids[@]}"; do
  ! kill -0 "$pid" 2>/dev/null || fail "daemon $pid ($(cat "/proc/$pid/comm" 2>/dev/null)) still runs after stop"
done
for p in /proc/[0-9]*; do
  if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF "$work/"; then
    fail "process ${p#/proc/} still runs after stop: $(tr '\0' ' ' <"$p/cmdline")"
  fi
done
stepd_after=$(pgrep -x slurmstepd | sort || true)
left=$(comm -13 <(echo "$stepd_before") <(echo "$stepd_after") | paste -sd' ')
[ -z "$left" ] || fail "slurmstepd processes left after stop: $left"
for port in "${PORTS[@]}"; do
  [ -z "$(ss -Hltn "sport = :$port")" ] || fail "port $port is still in use after stop"
done

echo
echo "$me: $SUITE on $BACKEND${FILTER:+ (filter $FILTER)}: $SHARDS shards merged, $n_merged results, the same statuses as the single-host run ($counts)"
echo "$me: cluster start $(secs "$t_start"), jobs $(secs "$t_jobs"), single-host run $(secs "$t_single"), stop $(secs "$t_stop"), total $(secs $(($(now_ms) - t_begin)))"
echo "$me: PASS"
