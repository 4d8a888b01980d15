#!/usr/bin/env bash
# A one-node Slurm cluster on this host, everything under one folder (munge key and socket,
# slurm.conf, state, spool, logs, pid files): for testing the sharded runs (ci/slurm_test.sh) and
# trying ci/slurm/submit.sh without a real cluster. Needs root and the packages of ci/setup.sh.
#   ci/slurm/cluster.sh start DIR    # munged, slurmctld, slurmd; waits until the node is idle
#   ci/slurm/cluster.sh status DIR   # which daemons run, sinfo, squeue; exit 1 unless all run
#   ci/slurm/cluster.sh stop DIR     # cancels jobs, stops the daemons (by pid), then munged
# Client commands need the configuration: export SLURM_CONF=DIR/slurm.conf (start prints it).
# The node offers max(4, cores) CPUs, so at least 4 one-CPU tasks run at once. Slurm's ports are
# fixed (6817 slurmctld, 6818 slurmd): start refuses while anything listens on them, so one such
# cluster runs at a time. Environment: START_TIMEOUT (seconds until the node must be idle, 30),
# STOP_TIMEOUT (seconds the daemons get to exit before kill -9, 10).
set -euo pipefail

me=ci/slurm/cluster.sh
die() { echo "$me: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

[ $# -eq 2 ] || { usage >&2; exit 2; }
cmd=$1
DIR=$2
case $DIR in /*) ;; *) DIR=$PWD/$DIR;; esac
START_TIMEOUT=${START_TIMEOUT:-30}
STOP_TIMEOUT=${STOP_TIMEOUT:-10}
PORTS=(6817 6818)

export SLURM_CONF=$DIR/slurm.conf
MUNGE_DIR=$DIR/munge
SOCKET=$MUNGE_DIR/munge.socket.2
MUNGED_PID=$MUNGE_DIR/munged.pid
CTLD_PID=$DIR/run/slurmctld.pid
SLURMD_PID=$DIR/run/slurmd.pid

# The pid in FILE when that process runs and is NAME (a pid file can outlive its process, and the
# pid be reused).
live_pid() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] || return 1
  echo "$pid"
}

port_in_use() {
  if command -v ss >/dev/null; then
    [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]
  else
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
  fi
}

log_tails() {
  local f
  for f in "$DIR"/log/slurmctld.log "$DIR"/log/slurmd.log "$DIR"/log/daemons.out "$MUNGE_DIR"/munged.log; do
    [ -f "$f" ] || continue
    echo "---- $f (last 25 lines)" >&2
    tail -n 25 "$f" >&2
  done
}

# Waits up to $1 seconds for every pid after it to exit; prints those still running.
wait_exit() {
  local timeout=$1 pid left
  shift
  local deadline=$((SECONDS + timeout))
  while :; do
    left=()
    for pid in "$@"; do kill -0 "$pid" 2>/dev/null && left+=("$pid"); done
    [ ${#left[@]} -eq 0 ] && return 0
    [ $SECONDS -ge $deadline ] && { echo "${left[*]}"; return 0; }
    sleep 0.1
  done
}

stop() {
  local ctld slurmd munged pids=() stuck pid
  ctld=$(live_pid "$CTLD_PID" slurmctld) || ctld=""
  slurmd=$(live_pid "$SLURMD_PID" slurmd) || slurmd=""
  munged=$(live_pid "$MUNGED_PID" munged) || munged=""
  if [ -n "$ctld" ]; then
    # Jobs first: slurmstepd outlives slurmd, and its job with it.
    local jobs
    jobs=$(timeout 10 squeue -h -o %A 2>/dev/null | sort -u | tr '\n' ' ') || jobs=""
    if [ -n "${jobs// /}" ]; then
      # shellcheck disable=SC2086
      timeout 10 scancel $jobs 2>/dev/null || true
      local deadline=$((SECONDS + STOP_TIMEOUT))
      while [ -n "$(timeout 5 squeue -h 2>/dev/null)" ] && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
    fi
    timeout 10 scontrol shutdown >/dev/null 2>&1 || kill -TERM "$ctld" ${slurmd:+"$slurmd"} 2>/dev/null || true
  elif [ -n "$slurmd" ]; then
    kill -TERM "$slurmd" 2>/dev/null || true
  fi
  [ -n "$ctld" ] && pids+=("$ctld")
  [ -n "$slurmd" ] && pids+=("$slurmd")
  if [ ${#pids[@]} -gt 0 ]; then
    stuck=$(wait_exit "$STOP_TIMEOUT" "${pids[@]}")
    if [ -n "$stuck" ]; then
      echo "$me: killing daemons that did not exit in ${STOP_TIMEOUT} s: $stuck" >&2
      for pid in $stuck; do kill -9 "$pid" 2>/dev/null || true; done
      # shellcheck disable=SC2086 # one pid per word
      wait_exit 5 $stuck >/dev/null
    fi
  fi
  if [ -n "$munged" ]; then
    kill -TERM "$munged" 2>/dev/null || true
    stuck=$(wait_exit 5 "$munged")
    if [ -n "$stuck" ]; then
      echo "$me: killing munged $stuck, which did not exit in 5 s" >&2
      kill -9 "$stuck" 2>/dev/null || true
      wait_exit 5 "$stuck" >/dev/null
    fi
  fi
  rm -f "$CTLD_PID" "$SLURMD_PID" "$MUNGED_PID"
  if [ -n "$ctld$slurmd$munged" ]; then
    echo "$me: stopped the cluster in $DIR (pids ${ctld:--} ${slurmd:--} ${munged:--})"
  else
    echo "$me: no cluster running in $DIR"
  fi
}

start() {
  [ "$(id -u)" -eq 0 ] || die "needs root (slurmd runs jobs as their users; munged runs as munge)"
  local tool
  for tool in munged mungekey slurmctld slurmd sinfo scontrol squeue scancel; do
    command -v "$tool" >/dev/null || die "$tool not found: install the Slurm packages (bash ci/setup.sh)"
  done
  id munge >/dev/null 2>&1 || die "no munge user: install the munge package (bash ci/setup.sh)"
  if live_pid "$CTLD_PID" slurmctld >/dev/null || live_pid "$SLURMD_PID" slurmd >/dev/null; then
    die "a cluster already runs in $DIR (stop it first)"
  fi
  local port
  for port in "${PORTS[@]}"; do
    port_in_use "$port" && die "port $port is in use: another Slurm cluster runs on this host (stop it first)"
  done

  mkdir -p "$DIR"
  chmod 0755 "$DIR" # munged (user munge) must reach its folder
  runuser -u munge -- test -x "$DIR" ||
    die "the munge user cannot reach $DIR: make the folders above it searchable (chmod o+x) or use another DIR"
  mkdir -p "$DIR"/{state,spool,log,run} "$MUNGE_DIR"
  chown munge:munge "$MUNGE_DIR"
  chmod 0755 "$MUNGE_DIR"
  if [ ! -f "$MUNGE_DIR/munge.key" ]; then
    mungekey --create --keyfile="$MUNGE_DIR/munge.key"
  fi
  chown munge:munge "$MUNGE_DIR/munge.key"
  chmod 0600 "$MUNGE_DIR/munge.key"
  runuser -u munge -- munged --socket="$SOCKET" --key-file="$MUNGE_DIR/munge.key" \
    --pid-file="$MUNGED_PID" --log-file="$MUNGE_DIR/munged.log" --seed-file="$MUNGE_DIR/munged.seed" \
    </dev/null >>"$DIR/log/daemons.out" 2>&1 || { log_tails; stop >/dev/null; die "munged did not start"; }
  local deadline=$((SECONDS + 10))
  until [ -S "$SOCKET" ] && live_pid "$MUNGED_PID" munged >/dev/null; do
    [ $SECONDS -lt $deadline ] || { log_tails; stop >/dev/null; die "munged did not come up in 10 s"; }
    sleep 0.1
  done

  local host cpus
  host=$(hostname -s)
  cpus=$(nproc)
  [ "$cpus" -ge 4 ] || cpus=4
  cat >"$SLURM_CONF" <<EOF
# A one-node test cluster, written by $me.
ClusterName=gauntlet
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
AuthInfo=socket=$SOCKET
CredType=cred/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$CTLD_PID
SlurmdPidFile=$SLURMD_PID
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerParameters=bf_interval=1
SlurmdParameters=config_overrides
ReturnToService=2
MailProg=/bin/true
KillWait=5
InactiveLimit=0
MinJobAge=300
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=gauntlet Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

  (cd "$DIR" && slurmctld -f "$SLURM_CONF" </dev/null >>"$DIR/log/daemons.out" 2>&1) ||
    { log_tails; stop >/dev/null; die "slurmctld did not start"; }
  (cd "$DIR" && slurmd -f "$SLURM_CONF" </dev/null >>"$DIR/log/daemons.out" 2>&1) ||
    { log_tails; stop >/dev/null; die "slurmd did not start"; }

  deadline=$((SECONDS + START_TIMEOUT))
  local state=""
  while :; do
    state=$(sinfo -h -N -o %T 2>/dev/null | head -n1) || state=""
    [ "$state" = idle ] && break
    if [ $SECONDS -ge $deadline ]; then
      echo "$me: the node is '${state:-unknown}', not idle, after ${START_TIMEOUT} s" >&2
      scontrol show node 2>&1 | sed 's/^/  /' >&2 || true
      log_tails
      stop >/dev/null
      die "the cluster did not come up (logs above)"
    fi
    sleep 0.2
  done
  echo "$me: cluster up in $DIR: node $host, $cpus CPUs, partition gauntlet"
  echo "export SLURM_CONF=$SLURM_CONF"
}

status() {
  local rc=0 name file pid
  for name in munged slurmctld slurmd; do
    case $name in munged) file=$MUNGED_PID;; slurmctld) file=$CTLD_PID;; slurmd) file=$SLURMD_PID;; esac
    if pid=$(live_pid "$file" "$name"); then
      echo "$name: running (pid $pid)"
    else
      echo "$name: not running"
      rc=1
    fi
  done
  if [ $rc -eq 0 ]; then
    echo "export SLURM_CONF=$SLURM_CONF"
    sinfo -N || rc=1
    squeue || rc=1
  fi
  return $rc
}

case $cmd in
  start) start;;
  stop) stop;;
  status) status;;
  *) usage >&2; exit 2;;
esac
