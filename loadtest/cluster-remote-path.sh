#!/usr/bin/env bash
# The remote path alone: three gateway nodes as one cluster (PostgreSQL journal), load only on the
# two nodes that do NOT hold the ledger, so every call crosses to the ledger and back. Prints
# calls/s, p99 and the gateway CPU per call on each node (from /proc, during the measured run),
# then the busiest threads of the ledger's node and of node 2 (CPU ms per call, by thread name: the
# JIT's compiler threads, Pekko's dispatcher, remoting, ...). A documented benchmark command, not
# run in CI. To compare a setting, run it twice with different JAVA_OPTS, e.g. batching off:
#
#   loadtest/cluster-remote-path.sh batched
#   loadtest/cluster-remote-path.sh per-call "-Dgateway.cluster.node-batch.max-commands=1 -Dgateway.cluster.node-batch.max-in-flight=100000"
#
# Environment (optional): WARM (warm-up seconds, 40), SECS (measured seconds, 20), CALLERS (per
# loaded node, 16), RATE (calls/s per loaded node, open loop; unset: closed loop, as fast as the
# nodes answer), BASE_PORT (21800: simulator; HTTP +1..+3; cluster +11..+13); PGHOST/PGPORT/PGUSER
# as for psql (127.0.0.1, 5432, postgres). Results are appended to
# data/cluster-remote-path/results.txt; node logs stay in data/cluster-remote-path/LABEL/. Besides
# CPU per call it prints each node's thread sleeps per call (voluntary context switches of all its
# threads): every hand-off of a call from one thread to a sleeping one shows there, and on this
# box's two cores that count moved far less from run to run than calls/s did.
# Needs java 17, psql, curl, jq; a database cluster_remote_<random> is created and dropped.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
label=${1:?usage: cluster-remote-path.sh LABEL [JAVA_OPTS]}
opts=${2:-}
warm=${WARM:-40}; secs=${SECS:-20}; callers=${CALLERS:-16}; base=${BASE_PORT:-21800}
rate=(); [[ -n "${RATE:-}" ]] && rate=(--rate "$RATE")
pg_host=${PGHOST:-127.0.0.1}; pg_port=${PGPORT:-5432}; pg_user=${PGUSER:-postgres}
token=cluster-remote-path-token
out_dir="$root/data/cluster-remote-path"; work="$out_dir/$label"
rm -rf "$work"; mkdir -p "$work"
for tool in java psql curl jq; do command -v $tool >/dev/null || { echo "cluster-remote-path: '$tool' not found" >&2; exit 2; }; done
psql_do() { psql -h "$pg_host" -p "$pg_port" -U "$pg_user" -d postgres -qtAc "$1"; }
db="cluster_remote_$(head -c4 /dev/urandom | od -An -tx1 | tr -d ' \n')"
psql_do "CREATE DATABASE $db" >/dev/null || { echo "cluster-remote-path: cannot create a database on $pg_host:$pg_port" >&2; exit 2; }
pids=()
cleanup() {
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${pids[@]}"; do for _ in $(seq 1 40); do kill -0 "$p" 2>/dev/null || break; sleep 0.25; done; kill -KILL "$p" 2>/dev/null; done
  psql_do "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$root/bin/gateway" --version >/dev/null && "$root/bin/loadtest" --version >/dev/null
"$root/bin/provider-sim" --port "$base" >"$work/sim.log" 2>&1 & pids+=($!)
seeds="127.0.0.1:$((base + 11)),127.0.0.1:$((base + 12))"
declare -A node_pid
for n in 1 2 3; do
  (
    export JAVA_OPTS="-Dfailover.rate-limits.enabled=off -Dledger.caps.global-daily-usd=1000000 -Dledger.caps.global-monthly-usd=1000000 -Dledger.caps.free-daily-usd=1000000 $opts"
    export GATEWAY_TOKEN=$token GATEWAY_HOST=127.0.0.1 GATEWAY_PORT=$((base + n)) GATEWAY_DATA_DIR="$work/node$n"
    export GATEWAY_JOURNAL_URL="jdbc:postgresql://$pg_host:$pg_port/$db" GATEWAY_JOURNAL_USER="$pg_user"
    export OPENAI_BASE_URL="http://127.0.0.1:$base" ANTHROPIC_BASE_URL="http://127.0.0.1:$base"
    export OPENAI_API_KEY=sim-key ANTHROPIC_API_KEY=sim-key
    export GATEWAY_CLUSTER_PORT=$((base + 10 + n)) GATEWAY_CLUSTER_SEEDS="$seeds"
    exec "$root/bin/gateway"
  ) >"$work/node$n.log" 2>&1 &
  node_pid[$n]=$!; pids+=($!)
  sleep 2 # node 1 first, so that it is the oldest and holds the ledger
done
for n in 1 2 3; do
  for _ in $(seq 1 1000); do
    [[ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$((base + n))/readyz")" == 200 ]] && break
    kill -0 "${node_pid[$n]}" 2>/dev/null || { echo "node$n exited; see $work/node$n.log" >&2; exit 1; }
    sleep 0.3
  done
done
grep -q 'Singleton manager starting singleton actor' "$work/node1.log" || echo "cluster-remote-path: warning: node 1 does not hold the ledger" >&2

ticks() { local f; f=$(sed 's/^.*) //' "/proc/$1/stat"); read -r -a s <<<"$f"; echo $((s[11] + s[12])); }
threads() { local t; for t in /proc/"$1"/task/*; do echo "$(tr ' ' '_' <"$t/comm" 2>/dev/null) $(sed 's/^.*) //' "$t/stat" 2>/dev/null | awk '{print $12 + $13}')"; done; }
load() { # ROUND SECONDS: closed-loop reserves on nodes 2 and 3
  local lp=() port
  for port in $((base + 2)) $((base + 3)); do
    GATEWAY_TOKEN=$token LOADTEST_JAVA_OPTS="-XX:+UseParallelGC -Xms128m -XX:TieredStopAtLevel=1" \
      "$root/bin/loadtest" ledger --port "$port" -c "$callers" "${rate[@]}" --duration "${2}s" --json -q \
      --brand-daily-usd 1000000 --brand-monthly-usd 1000000 >"$work/$1-$port.json" 2>"$work/$1-$port.err" &
    lp+=($!)
  done
  for p in "${lp[@]}"; do wait "$p"; done
}
# Context switches of all a node's threads: each time a thread goes to sleep (voluntary) or is
# pushed off a core (involuntary). Hand-offs between threads show up here as voluntary switches.
switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ { v += $2 } END { print v + 0 }'; }
load warm "$warm"
declare -A c0 s0
for n in 1 2 3; do c0[$n]=$(ticks "${node_pid[$n]}"); s0[$n]=$(switches "${node_pid[$n]}"); done
for n in 1 2; do threads "${node_pid[$n]}" >"$work/threads0-$n"; done
load measure "$secs"
for n in 1 2; do threads "${node_pid[$n]}" >"$work/threads1-$n"; done
hz=$(getconf CLK_TCK)
calls=$(jq -s 'map(.ops.reserve.calls) | add' "$work"/measure-*.json)
line="$label: $(jq -s 'map(.ops.reserve.throughputPerSec) | add | round' "$work"/measure-*.json) calls/s,"
line+=" p99 $(jq -s 'map(.ops.reserve.latencyMs.p99) | max' "$work"/measure-*.json) ms; gateway CPU ms per call:"
total=0
for n in 1 2 3; do
  d=$(( $(ticks "${node_pid[$n]}") - c0[$n] )); total=$((total + d))
  line+=" node$n $(awk -v d="$d" -v c="$calls" -v hz="$hz" 'BEGIN { printf "%.3f", d * 1000 / hz / c }')"
done
line+=" all $(awk -v d="$total" -v c="$calls" -v hz="$hz" 'BEGIN { printf "%.3f", d * 1000 / hz / c }');"
line+=" thread sleeps per call:"
for n in 1 2 3; do
  line+=" node$n $(awk -v d="$(( $(switches "${node_pid[$n]}") - s0[$n] ))" -v c="$calls" 'BEGIN { printf "%.1f", d / c }')"
done
line+=" (load $(cut -d' ' -f1 /proc/loadavg))"
echo "$line" | tee -a "$out_dir/results.txt"
for n in 1 2; do
  echo "  node$n busiest threads, CPU ms per call:"
  # Thread names without their trailing numbers, summed: the pool, not the thread.
  join -a2 <(sed -E 's/[-#]?[0-9]+ / /' "$work/threads0-$n" | awk '{a[$1]+=$2} END {for (k in a) print k, a[k]}' | sort) \
           <(sed -E 's/[-#]?[0-9]+ / /' "$work/threads1-$n" | awk '{a[$1]+=$2} END {for (k in a) print k, a[k]}' | sort) \
    | awk -v c="$calls" -v hz="$hz" 'NF == 3 { printf "%.3f %s\n", ($3 - $2) * 1000 / hz / c, $1 } NF == 2 { printf "%.3f %s\n", $2 * 1000 / hz / c, $1 }' \
    | sort -rn | head -8 | sed 's/^/    /'
done
