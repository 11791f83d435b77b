#!/usr/bin/env bash
# CPU per call (a documented benchmark command, not run in CI): starts `bin/gateway --demo` from a
# checkout, warms it up, drives N closed-loop Anthropic calls through it with bin/loadtest, and
# prints the CPU the gateway JVM (with its in-process simulator) spent per call, from
# /proc/PID/stat. On a shared VM whose speed drifts from minute to minute, CPU per call compares two
# builds far more steadily than requests per second; run the two checkouts interleaved.
#
#   loadtest/cpu-per-call.sh [checkout dir (default: this one)] [label] [calls (default 15000)]
#   loadtest/cpu-per-call.sh /work/old old && loadtest/cpu-per-call.sh . new
#
# Prints one line: label, calls, CPU ms per call, rate and p50 of the measured run.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
checkout="$(cd "${1:-$here}" && pwd)"; label="${2:-$(basename "$checkout")}"; calls="${3:-15000}"
port="${CPU_BENCH_PORT:-20602}"
data="$(mktemp -d)"; out="$(mktemp)"; result="$(mktemp)"
cleanup() { [[ -n "${gw:-}" ]] && kill "$gw" 2>/dev/null && wait "$gw" 2>/dev/null; rm -rf "$data" "$out" "$result"; }
trap cleanup EXIT

cd "$checkout"
# Caps raised so the run measures calls, not refusals (the global default is $40/day).
JAVA_OPTS="-Dledger.caps.global-daily-usd=100000 -Dledger.caps.global-monthly-usd=1000000 -Dledger.caps.free-daily-usd=100000" \
  GATEWAY_PORT="$port" GATEWAY_DATA_DIR="$data" bin/gateway --demo >"$out" 2>&1 &
gw=$!   # bin/gateway execs java: this is the JVM's pid
for _ in $(seq 1 240); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.5; done
token="$(grep -o 'GATEWAY_TOKEN=[^ ]*' "$out" | head -1 | cut -d= -f2)"

echo "cpu-per-call: warming up $label for 8 s" >&2
GATEWAY_TOKEN="$token" GATEWAY_PORT="$port" bin/loadtest anthropic -c 32 -d 8s -q >/dev/null 2>&1
before=$(awk '{print $14 + $15}' "/proc/$gw/stat")   # utime + stime, in clock ticks
echo "cpu-per-call: measuring $calls calls" >&2
GATEWAY_TOKEN="$token" GATEWAY_PORT="$port" bin/loadtest anthropic -c 32 -n "$calls" -q >"$result" 2>&1
after=$(awk '{print $14 + $15}' "/proc/$gw/stat")
ticks=$(getconf CLK_TCK)
awk -v label="$label" -v used=$((after - before)) -v ticks="$ticks" '/^gateway/ {
  printf "%s: calls=%d cpu_ms_per_call=%.3f rate=%s/s p50=%s ms\n", label, $2, used * 1000 / ticks / $2, $3, $4 }' "$result"
