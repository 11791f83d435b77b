#!/usr/bin/env bash
# Ten thousand open streams on one node, in one command (a documented benchmark, not run in CI).
#
# Starts the provider simulator, the gateway and `bin/loadtest streams` as three processes, each
# with its own heap and its own file limit, holds N streamed calls open through the gateway at
# once (each silent after its first content event until all are open and the probes are in, then
# --pause more), and prints: the file limit, the load average, the gateway's open file descriptors
# at the peak (sampled every second), its RSS and live heap before and at the peak, streams served
# at once (the client's count and the simulator's), time to first content of new calls made while
# the N are held (probes), how many finished whole, refusals by kind, and the brand's books.
#
#   loadtest/streams-10k.sh [N (default 10000)]
#
# Environment (all optional):
#   STREAMS_PROTOCOL  h2c (default): the calls reach the gateway over HTTP/2 with prior knowledge
#                     on its gateway.http2-port, multiplexed on a few connections, as a proxy in
#                     front would send them: one socket per open call in the gateway (the
#                     provider's). http1: one HTTP/1.1 connection per call, two sockets per call
#                     (10,000 need `ulimit -n` >= ~21,000 in the gateway).
#   STREAMS_PAUSE     silence after all are open, before they are released (default 20s)
#   STREAMS_PROBES    new calls timed while the N are held (default 200)
#   STREAMS_OPENING   calls waiting for their response headers at once while opening (default 200;
#                     lower it on a loaded machine, where a burst makes the ledger's fsync'd
#                     reservations miss ledger.ask-timeout: 503 ledger_unavailable)
#   STREAMS_BASE_PORT simulator on it, gateway HTTP/1.1 on +1, HTTP/2 on +2 (default 19100)
#   GATEWAY_HEAP      the gateway's -Xms/-Xmx (default 2g), pre-touched, so RSS growth is what
#                     open streams cost outside the heap
#   STREAMS_ARGS      more `bin/loadtest streams` options, e.g. "--prompt-bytes 32768"
#   STREAMS_KEEP=1    keep the work dir (logs, the loadtest's JSON) after the run
#
# Run it on a quiet machine (the script prints the load average; opening rate and latencies are
# the machine's when it is loaded). Everything binds 127.0.0.1 and is stopped on exit. Exit status
# is the loadtest's: 0 when every stream was served and finished whole and the books are exact.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n="${1:-10000}"
protocol="${STREAMS_PROTOCOL:-h2c}"
pause="${STREAMS_PAUSE:-20s}"
probes="${STREAMS_PROBES:-200}"
opening="${STREAMS_OPENING:-200}"
base="${STREAMS_BASE_PORT:-19100}"
heap="${GATEWAY_HEAP:-2g}"
sim_port=$base; gw_port=$((base + 1)); h2_port=$((base + 2))
token="streams-10k-token"
work="$(mktemp -d /tmp/streams-10k.XXXXXX)"
pids=()

cleanup() {
  # The gateway first (SIGTERM: it drains and exits 0), then the simulator.
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [[ "${STREAMS_KEEP:-}" == 1 ]]; then
    echo "streams-10k: logs and results kept in $work" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

for tool in curl jq jcmd jstat; do
  command -v "$tool" >/dev/null || { echo "streams-10k: '$tool' not found (needs curl, jq and a JDK's jcmd, jstat)" >&2; exit 2; }
done
for port in "$sim_port" "$gw_port" "$h2_port"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "streams-10k: port $port is in use (a run still going?); set STREAMS_BASE_PORT" >&2; exit 2
  fi
done

case "$protocol" in
  h2c) per_call=1 ;;
  http1) per_call=2 ;;
  *) echo "streams-10k: STREAMS_PROTOCOL must be h2c or http1" >&2; exit 2 ;;
esac

echo "== streams-10k: $n streams over $protocol, pause $pause, $probes probes"
echo "date:          $(date -u +%FT%TZ)"
echo "load average:  $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
echo "ulimit -n:     $(ulimit -Sn) (hard $(ulimit -Hn)); the gateway needs ~$((n * per_call + probes * per_call + 500))"
if (( $(ulimit -Sn) < n * per_call + probes * per_call + 500 )); then
  echo "streams-10k: warning: the file limit is below what the gateway needs; raise it (ulimit -n) or" \
    "use STREAMS_PROTOCOL=h2c" >&2
fi

# --- the simulator and the gateway -----------------------------------------------------------------
JAVA_OPTS="-Xmx2g -XX:+UseParallelGC" "$here/bin/provider-sim" --port "$sim_port" >"$work/sim.log" 2>&1 &
pids+=($!)

# Caps raised so the run measures open streams, not refusals. The open-call limits (10,000 by
# default, exactly N for the 10,000 run) are raised by the probes and a margin: the probes are new
# calls timed while the N are held, and at the shipped limits they are refused (503 open_calls),
# as a full node should. All of them: the interactive admission pool's concurrency too, or the
# probes would wait in its queue for a held stream to end.
limit=$((n + probes + 100))
JAVA_OPTS="-Xms$heap -Xmx$heap -XX:+AlwaysPreTouch -Dgateway.http2-port=$h2_port \
  -Dgateway.max-open-calls=$limit -Dproviders.openai.max-connections=$limit -Dfailover.rate-limits.enabled=off \
  -Dproviders.anthropic.max-connections=$limit -Dpekko.http.server.max-connections=$((limit + 2000)) \
  -Dfailover.pools.interactive.concurrency.openai=$limit \
  -Dfailover.pools.interactive.concurrency.anthropic=$limit \
  -Dledger.caps.global-daily-usd=1000000 -Dledger.caps.global-monthly-usd=10000000" \
  GATEWAY_TOKEN="$token" OPENAI_API_KEY="sk-streams" ANTHROPIC_API_KEY="sk-ant-streams" \
  OPENAI_BASE_URL="http://127.0.0.1:$sim_port" ANTHROPIC_BASE_URL="http://127.0.0.1:$sim_port" \
  GATEWAY_PORT="$gw_port" GATEWAY_DATA_DIR="$work/data" \
  "$here/bin/gateway" >"$work/gateway.log" 2>&1 &
gw_pid=$!
pids=("$gw_pid" "${pids[@]}")

ready=false
for _ in $(seq 1 600); do
  if ! kill -0 "$gw_pid" 2>/dev/null; then break; fi
  if [[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$gw_port/readyz" || true)" == 200 ]] \
    && curl -s -o /dev/null "http://127.0.0.1:$sim_port/_sim/streams"; then
    ready=true; break
  fi
  sleep 0.5
done
if ! $ready; then
  echo "streams-10k: the gateway or the simulator did not become ready; last gateway log lines:" >&2
  tail -20 "$work/gateway.log" >&2
  exit 1
fi
echo "gateway:       pid $gw_pid, HTTP/1.1 on $gw_port, h2c on $h2_port, heap $heap"

# --- the gateway's descriptors and RSS, every second, for the peak ---------------------------------
(
  while kill -0 "$gw_pid" 2>/dev/null; do
    fds=$(ls "/proc/$gw_pid/fd" 2>/dev/null | wc -l)
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$gw_pid/status" 2>/dev/null || echo 0)
    echo "$(date +%s) $fds $rss"
    sleep 1
  done
) >"$work/fds.log" &
pids+=($!)

# --- the run ---------------------------------------------------------------------------------------
args=(streams --sim "http://127.0.0.1:$sim_port" --gateway-pid "$gw_pid" --live-heap --hold
  -n "$n" --pause "$pause" --probes "$probes" --opening "$opening" --call-usd 0.000200 --json)
if [[ "$protocol" == h2c ]]; then args+=(--h2-port "$h2_port"); fi
# shellcheck disable=SC2206
args+=(${STREAMS_ARGS:-})
set +e
GATEWAY_TOKEN="$token" GATEWAY_PORT="$gw_port" LOADTEST_JAVA_OPTS="-Xmx3g -XX:+UseParallelGC" \
  "$here/bin/loadtest" "${args[@]}" >"$work/result.json" 2>"$work/loadtest.log"
status=$?
set -e

# --- the report ------------------------------------------------------------------------------------
echo "load average:  $(cut -d' ' -f1-3 /proc/loadavg) (after the run)"
read -r peak_fds peak_rss < <(awk '$2 > f {f = $2} $3 > r {r = $3} END {print f + 0, r + 0}' "$work/fds.log")
echo "gateway fds:   peak $peak_fds (sampled every second)"
echo "gateway RSS:   peak $((peak_rss / 1024)) MB"
if ! jq -e . "$work/result.json" >/dev/null 2>&1; then
  echo "streams-10k: the loadtest printed no result (exit $status); its last lines:" >&2
  tail -20 "$work/loadtest.log" >&2
  exit "${status:-1}"
fi
jq -r '
  def ms(x): "p50 \(x.p50) ms, p90 \(x.p90) ms, p99 \(x.p99) ms (\(x.count) calls)";
  "protocol:      \(.protocol)",
  "opened in:     \(.openedInSec) s",
  "served at once: \(.servedAtOnce) of \(.streams) (client), \(.servedAtOnceWithProbes) with probes; simulator: open at peak \(.simAtPeak.open), peak \(.simAtEnd.peak), finished \(.simAtEnd.finished), cut \(.simAtEnd.cut)",
  "before:        RSS \(.before.rssMB) MB, live heap \(.before.heapUsedMB) MB, fds \(.before.openFds)",
  "at peak:       RSS \(.atPeak.rssMB) MB, live heap \(.atPeak.heapUsedMB) MB, fds \(.atPeak.openFds)",
  "per stream:    RSS +\(.rssGrowthPerStreamKB) KB, live heap +\(.heapGrowthPerStreamKB) KB",
  "TTFB probes:   \(ms(.ttfbMsProbes))",
  "TTFB held:     \(ms(.ttfbMsHeld))",
  "whole:         \(.finishedWhole) of \(.streams + .probes) ended whole; still open \(.stillOpen)",
  "refusals:      \(.refusals)",
  "books:         \(.books)",
  "RESULT:        \(if .ok then "PASS" else "FAIL" end)"
' "$work/result.json"
exit "$status"
