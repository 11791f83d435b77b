#!/usr/bin/env bash
# Cluster mode, 1 node vs 3 nodes, in one run (a documented benchmark command, not run in CI).
#
# Starts a provider simulator, ONE gateway with its journal in PostgreSQL (no cluster) and THREE
# gateway nodes as one cluster over another PostgreSQL database, all on this machine and all up
# together. Against each it runs bin/loadtest for two scenarios: the ledger API (POST
# /ledger/reservations) and a provider route (POST /anthropic/v1/messages, answered by the
# simulator). The load comes from three loadtest processes at once for both (each with a third of
# the callers): all three against the one node, or one per node of the cluster, so the client side
# costs the same and only the gateway side differs. The measured runs alternate, one node then
# three nodes at each caller level, for CLUSTER_BENCH_ROUNDS rounds: each ratio compares two runs
# a few seconds apart, so a machine whose speed drifts over the half hour (other VMs on the host,
# PostgreSQL's housekeeping) moves both sides of it alike. Then it kills (kill -9) the node holding
# the ledger while reserves keep going to the other two, and times the hand-over: from the first
# 503 (or refused call) after the kill to the first 201 for a reservation sent after that 503; the
# same for a SIGTERM of the next holder. It prints one table: calls/s, p50 and p99 per phase,
# scenario, level and round, the 3-node/1-node ratio of each pair, the hand-over times, the load
# average (1 min) beside each figure, and the CPU the side not measured used meanwhile (idle
# nodes still tick: heartbeats, the standby's journal poll, timers).
#
#   loadtest/cluster-bench.sh [seconds per measured run (default 20)]
#
# Environment (all optional):
#   CLUSTER_BENCH_CALLERS   the caller levels measured, callers in total per run, each split over
#                           three loadtest processes ("48 96 144"). Each phase and scenario warms up
#                           at the first level, then runs once per level; the ratio is printed per
#                           level and between the phases' best levels. A closed loop's throughput
#                           is callers / latency: a path with more steps (a node, the network, the
#                           ledger's node and back) needs more callers in flight before it is busy,
#                           so one fixed level can measure latency instead of capacity
#   CLUSTER_BENCH_ROUNDS    measured runs per phase, scenario and level (2); one node and three
#                           nodes alternate, and each round's pair gives one ratio; a second line
#                           gives each level's ratio over all its rounds (calls summed)
#   CLUSTER_BENCH_WARMUP    shortest closed-loop warm-up before each measured run, seconds (60)
#   CLUSTER_BENCH_WARMUP_MAX longest warm-up, seconds (420). The warm-up goes on in rounds of 20 s
#                           until the gateway JVMs' JIT compiler threads use under
#                           CLUSTER_BENCH_JIT_QUIET % (5) of the gateways' CPU in a round: each of
#                           three nodes sees a third of the calls, so its JIT needs about three times
#                           as long as one node's to compile the hot paths, and until then calls/s
#                           measures the compilers (on 2 cores, C2 alone took 0.4 ms per call after
#                           a 60 s warm-up of a 3-node cluster, 0.03 ms after 150 s)
#   CLUSTER_BENCH_BASE_PORT first of the ports used: simulator base, HTTP base+1..base+4,
#                           cluster base+11..base+13 (20800)
#   CLUSTER_BENCH_DIR       node logs and data dirs, kept after the run (data/cluster-bench)
#   CLUSTER_BENCH_HANDOVER_ONLY=1  skip the load runs: start the three nodes, time the hand-overs
#   PGHOST PGPORT PGUSER PGPASSWORD  the PostgreSQL server (127.0.0.1, 5432, postgres, none)
#   JAVA_OPTS               extra JVM options for every gateway node
# Needs: java 17, psql, curl, jq, and Maven the first time (bin/gateway and bin/loadtest build their
# jars when missing). Two databases named cluster_bench_<random> are created and dropped at the end.
# Everything binds 127.0.0.1 and is stopped on exit (Ctrl-C too).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
secs="${1:-20}"
read -r -a levels <<<"${CLUSTER_BENCH_CALLERS:-48 96 144}"
warmup="${CLUSTER_BENCH_WARMUP:-60}"
warmup_max="${CLUSTER_BENCH_WARMUP_MAX:-420}"
jit_quiet="${CLUSTER_BENCH_JIT_QUIET:-5}"
rounds="${CLUSTER_BENCH_ROUNDS:-2}"
warmup_round=20
base="${CLUSTER_BENCH_BASE_PORT:-20800}"
work="${CLUSTER_BENCH_DIR:-$root/data/cluster-bench}"
pg_host="${PGHOST:-127.0.0.1}"
pg_port="${PGPORT:-5432}"
pg_user="${PGUSER:-postgres}"
sim_port=$base
single_port=$((base + 4))
token="cluster-bench-token"
# per_process TOTAL: the callers of each of the three loadtests (a third of TOTAL, rounded up).
per_process() { echo $(( ($1 + 2) / 3 )); }

need() { command -v "$1" >/dev/null || { echo "cluster-bench: '$1' not found; $2" >&2; exit 2; }; }
need java "install a Java 17 JDK"
need psql "install the PostgreSQL client"
need curl "install curl"
need jq "install jq (apt-get install -y jq)"
(( ${#levels[@]} >= 1 )) || { echo "cluster-bench: CLUSTER_BENCH_CALLERS must list at least one caller level" >&2; exit 2; }
for level in "${levels[@]}"; do
  [[ "$level" =~ ^[0-9]+$ && "$level" -ge 3 ]] || { echo "cluster-bench: each level in CLUSTER_BENCH_CALLERS must be a whole number >= 3 (one caller per loadtest at least), not '$level'" >&2; exit 2; }
done
[[ "$secs" =~ ^[0-9]+$ && "$secs" -ge 1 ]] || { echo "cluster-bench: seconds must be a whole number >= 1, not '$secs'" >&2; exit 2; }
[[ "$warmup" =~ ^[0-9]+$ && "$warmup" -ge 1 ]] || { echo "cluster-bench: CLUSTER_BENCH_WARMUP must be a whole number >= 1, not '$warmup'" >&2; exit 2; }
[[ "$warmup_max" =~ ^[0-9]+$ && "$warmup_max" -ge "$warmup" ]] || { echo "cluster-bench: CLUSTER_BENCH_WARMUP_MAX must be a whole number >= CLUSTER_BENCH_WARMUP ($warmup), not '$warmup_max'" >&2; exit 2; }
[[ "$rounds" =~ ^[0-9]+$ && "$rounds" -ge 1 ]] || { echo "cluster-bench: CLUSTER_BENCH_ROUNDS must be a whole number >= 1, not '$rounds'" >&2; exit 2; }
[[ "$jit_quiet" =~ ^[0-9]+$ && "$jit_quiet" -ge 1 && "$jit_quiet" -le 100 ]] || { echo "cluster-bench: CLUSTER_BENCH_JIT_QUIET must be a whole percent 1-100, not '$jit_quiet'" >&2; exit 2; }

psql_do() { PGPASSWORD="${PGPASSWORD:-}" psql -h "$pg_host" -p "$pg_port" -U "$pg_user" -d postgres -qtAc "$1"; }
psql_do 'select 1' >/dev/null 2>&1 || {
  echo "cluster-bench: cannot reach PostgreSQL at $pg_host:$pg_port as $pg_user (set PGHOST/PGPORT/PGUSER, or start it:" \
    "pg_ctlcluster --skip-systemctl-redirect \$(ls /etc/postgresql) main start)" >&2
  exit 2
}

suffix="$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')"
db_single="cluster_bench_${suffix}_one"
db_cluster="cluster_bench_${suffix}_three"
rm -rf "$work"
mkdir -p "$work"

pids=()          # every process this script started (simulator, nodes, loadtests, probes)
declare -A node_pid   # node number -> pid
cleanup() {
  trap - INT TERM EXIT
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 1 60); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$p" 2>/dev/null || true
  done
  psql_do "DROP DATABASE IF EXISTS $db_single WITH (FORCE)" >/dev/null 2>&1 || true
  psql_do "DROP DATABASE IF EXISTS $db_cluster WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

psql_do "CREATE DATABASE $db_single" >/dev/null
psql_do "CREATE DATABASE $db_cluster" >/dev/null

load1() { cut -d' ' -f1 /proc/loadavg; }

# ms_of_day: now, in milliseconds since midnight in the local time zone (the gateways' log time).
ms_of_day() { date +%H:%M:%S.%3N | awk -F'[:.]' '{ print (($1 * 60 + $2) * 60 + $3) * 1000 + $4 }'; }

# snapshots_during FROM TO LOG...: how many ledger snapshots the logs say were being written at some
# point between FROM and TO (ms of day). A snapshot is written beside the ledger, so it holds no
# answer, but it takes one core for seconds (the whole state serialized): a run it overlaps
# measures less, so the table says which runs had one. A run across midnight (TO before FROM) counts
# the log's times from shortly before FROM on as that day, the smaller ones as the next.
snapshots_during() {
  local from=$1 to=$2; shift 2
  cat "$@" 2>/dev/null | awk -v from="$from" -v to="$to" '
    BEGIN { day = 86400000; wraps = to < from; if (wraps) to += day }
    /ledger snapshot at journal row .* written in [0-9]+ ms/ {
      split($1, t, /[:.]/); done = ((t[1] * 60 + t[2]) * 60 + t[3]) * 1000 + t[4]
      if (wraps && done < from - 3600000) done += day
      match($0, /written in [0-9]+ ms/); took = substr($0, RSTART + 11, RLENGTH - 14) + 0
      if (done >= from && done - took <= to) n++
    }
    END { print n + 0 }'
}
log() { echo "cluster-bench: $*" >&2; }

# Build once, before anything runs in parallel (each launcher builds its jar when it is stale).
"$root/bin/gateway" --version >/dev/null
"$root/bin/loadtest" --version >/dev/null
"$root/bin/provider-sim" --version >/dev/null

"$root/bin/provider-sim" --port "$sim_port" >"$work/provider-sim.log" 2>&1 &
pids+=($!)

# Caps far above what a run reserves: the runs measure decisions, not refusals (the global daily
# default, $40, would stop a ledger run within seconds).
node_opts="-Dledger.caps.global-daily-usd=1000000 -Dledger.caps.global-monthly-usd=1000000"
node_opts+=" -Dledger.caps.free-daily-usd=1000000 ${JAVA_OPTS:-}"
# The simulator has no provider tier: the node's pace (on by default at Tier 1) would measure itself.
node_opts="-Dfailover.rate-limits.enabled=off $node_opts"

# start_node NAME HTTP_PORT DATABASE [CLUSTER_PORT SEEDS]: sets $started to the node's pid.
started=""
start_node() {
  local name=$1 port=$2 db=$3 cport=${4:-} seeds=${5:-}
  (
    export JAVA_OPTS="$node_opts" GATEWAY_TOKEN="$token" GATEWAY_HOST=127.0.0.1 GATEWAY_PORT="$port"
    export GATEWAY_DATA_DIR="$work/$name"
    export GATEWAY_JOURNAL_URL="jdbc:postgresql://$pg_host:$pg_port/$db" GATEWAY_JOURNAL_USER="$pg_user"
    export GATEWAY_JOURNAL_PASSWORD="${PGPASSWORD:-}"
    export OPENAI_BASE_URL="http://127.0.0.1:$sim_port" ANTHROPIC_BASE_URL="http://127.0.0.1:$sim_port"
    export OPENAI_API_KEY=sim-openai-key ANTHROPIC_API_KEY=sim-anthropic-key
    if [[ -n "$cport" ]]; then export GATEWAY_CLUSTER_PORT="$cport" GATEWAY_CLUSTER_SEEDS="$seeds"; fi
    exec "$root/bin/gateway"
  ) >"$work/$name.log" 2>&1 &
  started=$!
  pids+=($started)
}

# await_ready PORT PID NAME: /readyz 200 within 5 minutes (a loaded machine starts JVMs slowly).
await_ready() {
  local port=$1 pid=$2 name=$3
  for _ in $(seq 1 1500); do
    kill -0 "$pid" 2>/dev/null || { log "$name exited while starting; its log:"; tail -20 "$work/$name.log" >&2; exit 1; }
    [[ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$port/readyz")" == 200 ]] && return 0
    sleep 0.2
  done
  log "$name not ready after 5 minutes; its log:"; tail -20 "$work/$name.log" >&2; exit 1
}

# cpu_ticks PID...: user + system CPU time the processes used so far, in clock ticks.
cpu_ticks() {
  local total=0 p f
  for p in "$@"; do
    # Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    f=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null) || continue
    read -r -a stat <<<"$f"
    total=$((total + stat[11] + stat[12]))
  done
  echo "$total"
}
hz=$(getconf CLK_TCK)

# jit_ticks PID...: CPU time the processes' JIT compiler threads (C1, C2) used so far, clock ticks.
jit_ticks() {
  local total=0 p t f
  for p in "$@"; do
    for t in /proc/"$p"/task/*; do
      case "$(cat "$t/comm" 2>/dev/null)" in "C1 CompilerThre"*|"C2 CompilerThre"*) ;; *) continue ;; esac
      f=$(sed 's/^.*) //' "$t/stat" 2>/dev/null) || continue
      read -r -a stat <<<"$f"
      total=$((total + stat[11] + stat[12]))
    done
  done
  echo "$total"
}

# jit_share CPU0 JIT0: percent of the gateways' CPU since (CPU0, JIT0) that their JIT threads used.
jit_share() {
  local cpu=$(( $(cpu_ticks "${gw_pids[@]}") - $1 )) jit=$(( $(jit_ticks "${gw_pids[@]}") - $2 ))
  if (( cpu > 0 )); then echo $(( jit * 100 / cpu )); else echo 0; fi
}

# load_round SCENARIO FILE-PREFIX SECONDS CALLERS-PER-PROCESS PORT...: one loadtest per port at
# once, each with the given callers, for the given seconds; their JSON goes to FILE-PREFIX-<i>.json.
# Fails if one of them reported a problem.
load_round() {
  local scenario=$1 prefix=$2 run_secs=$3 each=$4; shift 4
  local extra=() i=0 lp=() failed=0 port p
  # Every reservation is one cent under caps that never bind (brand caps per run from the flags).
  if [[ "$scenario" == ledger ]]; then extra=(--brand-daily-usd 1000000 --brand-monthly-usd 1000000); fi
  for port in "$@"; do
    i=$((i + 1))
    GATEWAY_TOKEN="$token" LOADTEST_JAVA_OPTS="-XX:+UseParallelGC -Xms128m -XX:TieredStopAtLevel=1" \
      "$root/bin/loadtest" "$scenario" --port "$port" -c "$each" --duration "${run_secs}s" \
      --json -q "${extra[@]}" >"$prefix-$i.json" 2>"$prefix-$i.err" &
    lp+=($!); pids+=($!)
  done
  for p in "${lp[@]}"; do wait "$p" || failed=1; done
  return $failed
}

# warm_up SCENARIO LABEL PORT PORT PORT: closed-loop rounds of 20 s at the first caller level (not
# counted) until the gateways' JIT is quiet. Sets $warmed to the seconds it took.
warmed=0
warm_up() {
  local scenario=$1 label=$2 cpu0 jit0 share; shift 2
  warmed=0
  while true; do
    cpu0=$(cpu_ticks "${gw_pids[@]}"); jit0=$(jit_ticks "${gw_pids[@]}")
    load_round "$scenario" "$work/$label-warmup" "$warmup_round" "$(per_process "${levels[0]}")" "$@" \
      || log "$label: a warm-up loadtest reported a problem; see $work/$label-warmup-*.json / .err"
    warmed=$((warmed + warmup_round))
    share=$(jit_share "$cpu0" "$jit0")
    log "    warm-up ${warmed}s: JIT compilers ${share} % of the gateways' CPU"
    if (( warmed >= warmup_max )); then
      log "    still compiling after ${warmup_max}s (CLUSTER_BENCH_WARMUP_MAX): measuring anyway"
      return
    elif (( warmed >= warmup && share < jit_quiet )); then
      return
    fi
  done
}

# measure SCENARIO LABEL CALLERS PORT PORT PORT: one measured run with CALLERS in all (a third per
# loadtest). Sets $measured to "from-ms to-ms calls/s p50 p99 non-2xx cpu-ms-per-call jit-%
# warm-up-s idle-%-of-a-core loadavg": the run's start and end (ms of day, for the snapshot count
# in the report, made once every log has the snapshots that were still being written when the run
# ended); throughputs summed; of the three runs' p50 and p99 the highest (the figure the slowest
# node's callers saw); the CPU the gateway processes ($gw_pids) used during the run per call, which
# depends far less on what else the machine runs than calls/s does, and the share of it their JIT
# compilers took; what the gateways not measured ($idle_pids) used meanwhile, in % of one core.
measured=""
measure() {
  local scenario=$1 label=$2 total=$3 before after cpu0 cpu1 jit0 share from to start idle0 idle; shift 3
  cpu0=$(cpu_ticks "${gw_pids[@]}"); jit0=$(jit_ticks "${gw_pids[@]}"); idle0=$(cpu_ticks "${idle_pids[@]}")
  before=$(load1); from=$(ms_of_day); start=$(date +%s%3N)
  load_round "$scenario" "$work/$label-measure-$total" "$secs" "$(per_process "$total")" "$@" \
    || log "$label: a loadtest reported a problem (exit != 0); see $work/$label-measure-$total-*.json / .err"
  share=$(jit_share "$cpu0" "$jit0")
  cpu1=$(cpu_ticks "${gw_pids[@]}")
  after=$(load1); to=$(ms_of_day)
  idle=$(( ($(cpu_ticks "${idle_pids[@]}") - idle0) * 100000 / hz / ($(date +%s%3N) - start + 1) ))
  measured="$from	$to	"$(jq -s -r --arg la "$before-$after" --argjson cpu "$(( (cpu1 - cpu0) * 1000 / hz ))" \
    --argjson jit "$share" --argjson warmed "$warmed" --argjson idle "$idle" '
    (map(.ops | to_entries | map(select(.key == "reserve" or .key == "gateway"))[0].value)) as $ops
    | ($ops | map(.calls) | add) as $calls
    | [ ($ops | map(.throughputPerSec) | add | round),
        ($ops | map(.latencyMs.p50) | max),
        ($ops | map(.latencyMs.p99) | max),
        ($ops | map(.statuses | to_entries | map(select(.key != "201" and .key != "200"))
          | map(.value) | add // 0) | add),
        (if $calls > 0 then ($cpu / $calls * 100 | round) / 100 else "-" end),
        $jit, $warmed, $idle, $la ] | @tsv' "$work/$label-measure-$total"-?.json)
}

# The two sides: the one node's pid and ports (all three loadtests on its port), the cluster's.
single_pids=()
cluster_pids=()
single_ports=("$single_port" "$single_port" "$single_port")
cluster_ports=($((base + 1)) $((base + 2)) $((base + 3)))

# on_side PHASE: points $gw_pids at the side measured and $idle_pids at the other one.
gw_pids=()
idle_pids=()
on_side() {
  if [[ "$1" == "1 node" ]]; then gw_pids=("${single_pids[@]}"); idle_pids=("${cluster_pids[@]}")
  else gw_pids=("${cluster_pids[@]}"); idle_pids=("${single_pids[@]}"); fi
}

# compare SCENARIO: both sides warmed up, then per round and level one measured run on one node and
# one on three, one right after the other, each added to $results ("phase|scenario|level|round|…").
declare -A warmed_for
compare() {
  local scenario=$1 round total
  on_side "1 node"; warm_up "$scenario" "one-$scenario" "${single_ports[@]}"; warmed_for["1 node"]=$warmed
  on_side "3 nodes"; warm_up "$scenario" "three-$scenario" "${cluster_ports[@]}"; warmed_for["3 nodes"]=$warmed
  for round in $(seq 1 "$rounds"); do
    for total in "${levels[@]}"; do
      on_side "1 node"; warmed=${warmed_for["1 node"]}
      measure "$scenario" "one-$scenario-r$round" "$total" "${single_ports[@]}"
      results+=("1 node|$scenario|$total|$round|$measured")
      local one; one=$(cut -f3 <<<"$measured")
      on_side "3 nodes"; warmed=${warmed_for["3 nodes"]}
      measure "$scenario" "three-$scenario-r$round" "$total" "${cluster_ports[@]}"
      results+=("3 nodes|$scenario|$total|$round|$measured")
      log "    round $round, $total callers: 1 node $one calls/s, 3 nodes $(cut -f3 <<<"$measured")"
    done
  done
}

row() { printf '%-31s %9s %9s %9s %8s %12s %6s %10s %8s %10s   %s\n' "$@"; }
results=()

only_handover="${CLUSTER_BENCH_HANDOVER_ONLY:-0}"

# --- both sides up: one node (PostgreSQL journal, no cluster) and three nodes (one cluster) -------
seeds="127.0.0.1:$((base + 11)),127.0.0.1:$((base + 12))"
if [[ "$only_handover" != 1 ]]; then
  log "one node (PostgreSQL journal) on :$single_port"
  start_node single "$single_port" "$db_single"
  single_pids=("$started")
fi
log "three nodes (HTTP :$((base + 1))-:$((base + 3)), cluster :$((base + 11))-:$((base + 13)))"
for n in 1 2 3; do
  start_node "node$n" $((base + n)) "$db_cluster" $((base + 10 + n)) "$seeds"
  node_pid[$n]=$started
done
[[ "$only_handover" == 1 ]] || await_ready "$single_port" "${single_pids[0]}" single
for n in 1 2 3; do await_ready $((base + n)) "${node_pid[$n]}" "node$n"; done
cluster_pids=("${node_pid[1]}" "${node_pid[2]}" "${node_pid[3]}")

# --- load: per scenario, both sides warmed up, then one node and three nodes alternately ----------
for scenario in ledger anthropic; do
  [[ "$only_handover" == 1 ]] && break
  log "  $scenario: warm-up of each side (${warmup}-${warmup_max}s), then $rounds round(s) of ${secs}s at each of ${levels[*]} callers, one node then three"
  compare "$scenario"
done
if [[ "$only_handover" != 1 ]]; then
  kill -TERM "${single_pids[0]}"; wait "${single_pids[0]}" 2>/dev/null || true
fi

# --- hand-over: kill -9 of the ledger's node, then SIGTERM of the next one -----------------------
# The node holding the ledger is the one that started the singleton last among those alive.
holder() {
  local found=""
  for n in 1 2 3; do
    if kill -0 "${node_pid[$n]}" 2>/dev/null \
        && grep -q 'Singleton manager starting singleton actor' "$work/node$n.log"; then
      found=$n
    fi
  done
  echo "$found"
}

# probe OUT PORT...: one reserve after the other (new id each), "sent_ms answered_ms status" lines.
probe() {
  local out=$1 tag=$2; shift 2
  local i=0 port t0 code
  while true; do
    for port in "$@"; do
      i=$((i + 1))
      t0=$(date +%s%3N)
      code=$(curl -s -o /dev/null -m 10 -w '%{http_code}' "http://127.0.0.1:$port/ledger/reservations" \
        -H "x-api-key: $token" -H 'content-type: application/json' \
        -d "{\"id\":\"ho-$tag-$i\",\"lane\":\"app\",\"brand\":\"handover\",\"amountUsd\":0.01,\"brandDailyUsd\":1000000,\"brandMonthlyUsd\":1000000}" \
        || true)
      echo "$t0 $(date +%s%3N) $code" >>"$out"
      [[ "$code" == 201 || "$code" == 402 ]] || sleep 0.05
    done
  done
}

# handover SIGNAL LABEL: signals the ledger's node while four probes reserve through the others;
# sets $handed to "first-503-to-first-201 signal-to-first-201 refused-calls loadavg" (seconds).
handed=""
handover() {
  local signal=$1 label=$2 victim ports=() probes=()
  victim=$(holder)
  [[ -n "$victim" ]] || { log "no node holds the ledger"; handed="- - - -"; return; }
  for n in 1 2 3; do
    if [[ $n != "$victim" ]] && kill -0 "${node_pid[$n]}" 2>/dev/null; then ports+=($((base + n))); fi
  done
  if [[ ${#ports[@]} == 0 ]]; then log "no other node is up to reserve through"; handed="- - - -"; return; fi
  : >"$work/$label.probe"
  for k in 1 2; do
    probe "$work/$label.probe" "$label-$k" "${ports[@]}" & probes+=($!); pids+=($!)
    probe "$work/$label.probe" "$label-$k-b" "${ports[@]}" & probes+=($!); pids+=($!)
  done
  sleep 2
  local la; la=$(load1)
  local at; at=$(date +%s%3N)
  log "  $label: kill -$signal node$victim (pid ${node_pid[$victim]}), reserving through ports ${ports[*]}"
  kill "-$signal" "${node_pid[$victim]}"
  # Until a reservation sent after the first refusal is accepted, or 90 s.
  local result=""
  for _ in $(seq 1 900); do
    sleep 0.1
    result=$(awk -v at="$at" '
      $1 >= at && $3 != 201 && $3 != 402 && (first == "" || $2 < first) { first = $2 }
      { rows[NR] = $0 }
      END {
        if (first == "") exit
        for (r in rows) { split(rows[r], f, " ")
          if ((f[3] == 201 || f[3] == 402) && f[1] > first && (back == "" || f[2] < back)) back = f[2] }
        n = 0; for (r in rows) { split(rows[r], f, " "); if (f[1] >= at && f[3] != 201 && f[3] != 402) n++ }
        if (back != "") printf "%.1f %.1f %d\n", (back - first) / 1000, (back - at) / 1000, n
      }' "$work/$label.probe")
    [[ -n "$result" ]] && break
  done
  for p in "${probes[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${probes[@]}"; do wait "$p" 2>/dev/null || true; done
  # Reaped, so that "alive" (kill -0) is false for it from now on; a SIGTERM'd node exits on its own.
  # (stderr off meanwhile: bash would report the killed job on it)
  exec 3>&2 2>/dev/null
  wait "${node_pid[$victim]}" || true
  exec 2>&3 3>&-
  handed="${result:-"- - -"} $la"
}

log "hand-over: kill -9 of the ledger's node"
handover KILL kill9
crash=$handed
sleep 3
log "hand-over: SIGTERM of the next ledger node"
handover TERM sigterm
graceful=$handed

# --- report --------------------------------------------------------------------------------------
echo
echo "Cluster bench: $(date -u +%FT%TZ), $(nproc) cores, ${secs}s runs (after warm-up until the JIT is quiet)," \
  "callers ${levels[*]} (each level split over 3 loadtests), $rounds round(s) of one node then three, PostgreSQL $pg_host:$pg_port"
row "" "calls/s" "p50 ms" "p99 ms" "non-2xx" "CPU ms/call" "JIT %" "snapshots" "warm-up" "idle side" "load avg (1 min, before-after)"
declare -A tput best best_at
for r in "${results[@]}"; do
  IFS='|' read -r phase scenario total round fig <<<"$r"
  read -r from to t p50 p99 bad cpu jit warmed idle la <<<"$fig"
  if [[ "$phase" == "1 node" ]]; then logs=("$work/single.log"); else logs=("$work"/node?.log); fi
  snaps=$(snapshots_during "$from" "$to" "${logs[@]}")
  tput["$phase/$scenario/$total/$round"]=$t
  if (( t > ${best["$phase/$scenario"]:-0} )); then best["$phase/$scenario"]=$t; best_at["$phase/$scenario"]=$total; fi
  row "$phase, $scenario, $total, r$round" "$t" "$p50" "$p99" "$bad" "$cpu" "$jit" "$snaps" "${warmed}s" "${idle} %" "$la"
done
# One decimal: a ratio judged against a 70 % target must not round 69.8 up to it.
percent() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", 100 * a / b; else print "-" }'; }
below() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
for scenario in ledger anthropic; do
  line="3 nodes / 1 node, $scenario, each pair (one node, then three):"
  levels_line="3 nodes / 1 node, $scenario, all rounds of a level (calls summed over its runs):"
  lowest=""; lowest_level=""
  for total in "${levels[@]}"; do
    pairs=""; sum_one=0; sum_three=0
    for round in $(seq 1 "$rounds"); do
      t1=${tput["1 node/$scenario/$total/$round"]:-0}; t3=${tput["3 nodes/$scenario/$total/$round"]:-0}
      ratio=$(percent "$t3" "$t1")
      pairs+="${pairs:+/}$ratio"
      if [[ "$ratio" != - ]] && { [[ -z "$lowest" ]] || below "$ratio" "$lowest"; }; then lowest=$ratio; fi
      sum_one=$((sum_one + t1)); sum_three=$((sum_three + t3))
    done
    line+=" $pairs % at $total callers;"
    # The level's rounds together: every measured second of both sides, so one pair whose one-node
    # run happened to be the fastest of the day weighs as much as any other.
    ratio=$(percent "$sum_three" "$sum_one")
    levels_line+=" $ratio % at $total callers;"
    if [[ "$ratio" != - ]] && { [[ -z "$lowest_level" ]] || below "$ratio" "$lowest_level"; }; then lowest_level=$ratio; fi
  done
  one=${best["1 node/$scenario"]:-0}; three=${best["3 nodes/$scenario"]:-0}
  echo "$line lowest ${lowest:--} %; best against best $(percent "$three" "$one") % ($three calls/s at ${best_at["3 nodes/$scenario"]:--} callers vs $one at ${best_at["1 node/$scenario"]:--})"
  echo "$levels_line lowest ${lowest_level:--} %"
done
read -r ho1 kt1 n1 la1 <<<"$crash"
read -r ho2 kt2 n2 la2 <<<"$graceful"
echo "hand-over after kill -9:  first 503 -> first 201 ${ho1} s (kill -> first 201 ${kt1} s; ${n1} probe calls refused; load avg $la1)"
echo "hand-over after SIGTERM:  first 503 -> first 201 ${ho2} s (stop -> first 201 ${kt2} s; ${n2} probe calls refused; load avg $la2)"
echo "logs and loadtest output: $work"
