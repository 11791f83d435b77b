#!/usr/bin/env bash
# How fast streams start (a documented benchmark, not run in CI): a burst of N streamed calls over
# HTTP/1.1, each pausing after its first content event, first straight to the provider simulator,
# then through the gateway once its upstream connections have closed (each call opens one, as in a
# burst beyond the pool's idle connections), then through the gateway again at once (reusing them);
# prints the three bursts' time to first content (p50/p90/p99/max) side by side, with `uptime`
# before and after.
#
#   loadtest/stream-burst.sh [N (default 1500)]
#
# Environment (all optional):
#   BURST_PAUSE      silence after each stream's first content event (default 20s)
#   BURST_WARMUP     calls in an unmeasured burst sent first to each target (default 200)
#   BURST_BASE_PORT  simulator on it, gateway on +1 (default 19200)
#   BURST_CLIENT     the bench's HTTP client: lean (default; one thread, non-blocking sockets) or
#                    jdk (java.net.http.HttpClient, what this bench used first: it costs more CPU
#                    per connection than the simulator, on the same cores as the gateway)
#   BURST_UPSTREAM   how the gateway reaches the simulator: http1 (default; one pooled connection per
#                    call) or h2c (HTTP/2 with prior knowledge on the simulator's second port, base+2:
#                    providers.*.http2 = prior-knowledge, calls as streams on a few connections). The
#                    direct burst is HTTP/1.1 either way: it is the figure the gateway is held to.
#   GATEWAY_OPTS     more JVM options / -D config overrides for the gateway (e.g. to try a pool key)
#   BURST_KEEP=1     keep the work dir (logs) after the run
#
# Starts the simulator and the gateway as their own processes (each with its own file limit; an
# HTTP/1.1 stream holds two sockets in the gateway), raises the gateway's open-call limits above N
# so the burst measures start-up, not refusals, and stops both on exit. Run it on a quiet machine:
# the figures are the machine's when it is loaded (the script prints the load average).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
n="${1:-1500}"
pause="${BURST_PAUSE:-20s}"
warmup="${BURST_WARMUP:-200}"
base="${BURST_BASE_PORT:-19200}"
sim_port=$base; gw_port=$((base + 1)); h2c_port=$((base + 2))
upstream="${BURST_UPSTREAM:-http1}"
case "$upstream" in
  http1) sim_args=(); upstream_url="http://127.0.0.1:$sim_port"; upstream_opts="" ;;
  h2c)
    sim_args=(--h2c-port "$h2c_port"); upstream_url="http://127.0.0.1:$h2c_port"
    upstream_opts="-Dproviders.openai.http2=prior-knowledge -Dproviders.anthropic.http2=prior-knowledge" ;;
  *) echo "stream-burst: BURST_UPSTREAM must be http1 or h2c, got '$upstream'" >&2; exit 2 ;;
esac
token="stream-burst-token"
work="$(mktemp -d /tmp/stream-burst.XXXXXX)"
pids=()

cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [[ "${BURST_KEEP:-}" == 1 ]]; then echo "stream-burst: logs kept in $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

for port in "$sim_port" "$gw_port" "$h2c_port"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "stream-burst: port $port is in use (a run still going?); set BURST_BASE_PORT" >&2; exit 2
  fi
done

echo "== stream-burst: $n streamed calls at once over HTTP/1.1, pause $pause, warm-up $warmup, gateway to provider: $upstream"
echo "date:          $(date -u +%FT%TZ)"
echo "uptime:        $(uptime) ($(nproc) cores, before)"

JAVA_OPTS="-Xmx1g -XX:+UseParallelGC" "$here/bin/provider-sim" --port "$sim_port" "${sim_args[@]}" >"$work/sim.log" 2>&1 &
pids+=($!)
limit=$((n + warmup + 100))
# shellcheck disable=SC2086
JAVA_OPTS="-Xms1g -Xmx1g -Dgateway.max-open-calls=$limit -Dfailover.rate-limits.enabled=off \
  -Dproviders.openai.max-connections=$limit -Dproviders.anthropic.max-connections=$limit \
  -Dfailover.pools.interactive.concurrency.openai=$limit \
  -Dfailover.pools.interactive.concurrency.anthropic=$limit \
  -Dledger.caps.global-daily-usd=1000000 -Dledger.caps.global-monthly-usd=10000000 $upstream_opts \
  ${GATEWAY_OPTS:-}" \
  GATEWAY_TOKEN="$token" OPENAI_API_KEY="sk-burst" ANTHROPIC_API_KEY="sk-ant-burst" \
  OPENAI_BASE_URL="$upstream_url" ANTHROPIC_BASE_URL="$upstream_url" \
  GATEWAY_PORT="$gw_port" GATEWAY_DATA_DIR="$work/data" \
  "$here/bin/gateway" >"$work/gateway.log" 2>&1 &
gw_pid=$!
pids=("$gw_pid" "${pids[@]}")

ready=false
for _ in $(seq 1 600); do
  if ! kill -0 "$gw_pid" 2>/dev/null; then break; fi
  if [[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$gw_port/readyz" || true)" == 200 ]] \
    && curl -s -o /dev/null "http://127.0.0.1:$sim_port/_sim/streams" \
    && { [[ "$upstream" != h2c ]] || curl -s -o /dev/null --http2-prior-knowledge "$upstream_url/_sim/streams"; }; then
    ready=true; break
  fi
  sleep 0.5
done
if ! $ready; then
  echo "stream-burst: the gateway or the simulator did not become ready; last gateway log lines:" >&2
  tail -20 "$work/gateway.log" >&2
  exit 1
fi

set +e
GATEWAY_TOKEN="$token" GATEWAY_PORT="$gw_port" LOADTEST_JAVA_OPTS="-Xmx1g -XX:+UseParallelGC" \
  "$here/bin/loadtest" burst --sim "http://127.0.0.1:$sim_port" -n "$n" --pause "$pause" \
  --warmup "$warmup" --client "${BURST_CLIENT:-lean}" 2>"$work/loadtest.log"
status=$?
set -e
echo "uptime:        $(uptime) (after)"
exit "$status"
