#!/usr/bin/env bash
# Heap a ledger of N ids needs, with and without a snapshot being serialized (a documented
# benchmark command, not run in CI). Runs ledger-actor's SnapshotHeapBench with smaller and smaller
# -Xmx (a binary search in steps of STEP MB, one fresh JVM per try) and prints, for each count of
# ids, the least heap that holds the state and the least that also serializes its snapshot; with two
# counts or more, the slope between the first and the last: heap per id, without the JVM's and the
# actor system's fixed part.
#
#   loadtest/snapshot-heap.sh [ids ...]        (default: 1000000 3000000)
#
# Environment (optional): STORE=1 (save the snapshot through the shipped H2 snapshot store, in a
# temporary data dir, as the ledger does, instead of serializing it only: the store's JDBC insert
# needs copies of its own), OPEN (open reservations besides the closed ids, 1000), STEP (MB, 16),
# GC (JVM option picking the collector, -XX:+UseG1GC: the gateway's default on a server-class
# machine). Needs Java 17 and Maven (builds ledger-actor's test classes the first time).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
counts=("$@"); (( ${#counts[@]} )) || counts=(1000000 3000000)
store="${STORE:-0}"; open="${OPEN:-1000}"; step="${STEP:-16}"; gc="${GC:--XX:+UseG1GC}"
for ids in "${counts[@]}"; do
  [[ "$ids" =~ ^[0-9]+$ && "$ids" -ge 1000 ]] || { echo "snapshot-heap: each count of ids must be a whole number >= 1000, not '$ids'" >&2; exit 2; }
done
cd "$root"
cp_file="$root/ledger-actor/target/snapshot-heap.classpath"
if [[ ! -f "$cp_file" || ! -d ledger-actor/target/test-classes ]]; then
  echo "snapshot-heap: building ledger-actor and its test classes" >&2
  mvn -B -q -pl ledger-actor -am install -DskipTests >&2
  mvn -B -q -pl ledger-actor test-compile >&2
  mvn -B -q -pl ledger-actor dependency:build-classpath -Dmdep.outputFile="$cp_file" -Dmdep.includeScope=test >&2
fi
cp="ledger-actor/target/test-classes:ledger-actor/target/classes:$(cat "$cp_file")"

# The line of a snapshot that fitted: serialized, or saved through the store.
if [[ "$store" == 1 ]]; then saved='^store: SaveSnapshotSuccess'; else saved='^snapshot:'; fi

# try MB: runs the bench with -Xmx MB; prints its output; 0 = both phases fit, 3 = OOM.
try() {
  java "-Xmx$1m" "$gc" -cp "$cp" -Dlogback.configurationFile=ledger-actor/src/test/resources/logback-bench.xml \
    -Dbench.ids="$ids" -Dbench.open="$open" -Dbench.store="$([[ $store == 1 ]] && echo true || echo false)" \
    dev.spendgateway.ledger.bench.SnapshotHeapBench
}

# least PATTERN LO HI: the least heap (MB, a multiple of STEP) between LO (fails) and HI (passes)
# whose output contains PATTERN.
least() {
  local pattern=$1 lo=$2 hi=$3 mid out
  while (( hi - lo > step )); do
    mid=$(( (lo + hi) / 2 / step * step ))
    (( mid <= lo )) && mid=$(( lo + step ))
    out=$(try "$mid" 2>&1 || true)
    if grep -q "$pattern" <<<"$out"; then hi=$mid; else lo=$mid; fi
    echo "snapshot-heap:   -Xmx${mid}m: $(grep -E '^(state|snapshot|store|OutOfMemory)' <<<"$out" | tail -1)" >&2
  done
  echo "$hi"
}

declare -A state_mb snap_mb
for ids in "${counts[@]}"; do
  echo "snapshot-heap: $ids ids" >&2
  # An upper bound that passes: double from 256 MB.
  hi=256
  until out=$(try "$hi" 2>&1) && grep -q "$saved" <<<"$out"; do
    hi=$(( hi * 2 ))
    (( hi <= 65536 )) || { echo "$out" >&2; echo "snapshot-heap: no heap up to 64 GB fits" >&2; exit 1; }
  done
  grep -E '^(state|snapshot|store)' <<<"$out"
  state_mb[$ids]=$(least '^state:' 16 "$hi")
  snap_mb[$ids]=$(least "$saved" "${state_mb[$ids]}" "$hi")
  echo "least heap (to $step MB) for $ids ids: the state alone ${state_mb[$ids]} MB; the state and its snapshot ${snap_mb[$ids]} MB$([[ $store == 1 ]] && echo " (saved through the H2 store)")"
done
if (( ${#counts[@]} >= 2 )); then
  first=${counts[0]}; last=${counts[-1]}
  awk -v n="$(( last - first ))" -v s="$(( state_mb[$last] - state_mb[$first] ))" -v p="$(( snap_mb[$last] - snap_mb[$first] ))" 'BEGIN {
    printf "per id (slope from %d more ids): the state %.0f bytes; the state and its snapshot %.0f bytes\n", n, s * 1048576 / n, p * 1048576 / n }'
fi
