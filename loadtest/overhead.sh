#!/usr/bin/env bash
# Gateway overhead, side by side in one run (a documented benchmark command, not run in CI).
#
# Starts nginx on loopback answering every POST with one fixed OpenAI chat completion (usage
# included), then the gateway with that nginx as its OpenAI upstream, and Portkey's open-source
# gateway (npm @portkey-ai/gateway) pointed at the same nginx. wrk then sends the same chat
# completion request to each of the three — nginx directly, through our gateway's full path (auth,
# policy, reserve, upstream, settle), through Portkey — at 1 and at 64 connections, and the script
# prints one table: requests/s, p50 and p99 for each, and the gateway's and Portkey's added p50 over
# the direct call. The gateway runs twice, on its two journals: the embedded H2 file
# ("gateway-h2") and PostgreSQL ("gateway-pg", a fresh database on 127.0.0.1:5432 made for the run
# and dropped after it). Each also gets a row for its ledger reserve API alone ("ledger-h2",
# "ledger-pg": POST /ledger/reservations with a new id per request, answered 201 after the flush),
# the ledger's write path without a provider call. The machine's own limits are printed beside
# them: the gateway's /healthz rate (the HTTP framework with no work behind it) and one fsync's
# latency on the data directory's disk.
#
#   loadtest/overhead.sh [seconds per run (default 15)]
#
# OVERHEAD_SKIP_PG=1 leaves out the PostgreSQL gateway (also left out when psql is missing).
# Needs: nginx and wrk (Debian: apt-get install -y nginx-light wrk), node + npm (Portkey is
# installed on first use into ~/.cache/spendgateway-bench; OVERHEAD_SKIP_PORTKEY=1 skips it), and
# a built gateway jar (bin/gateway builds it when missing). Ports: OVERHEAD_BASE_PORT (default
# 20700) .. +3. Everything binds 127.0.0.1 and is stopped on exit.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
secs="${1:-15}"
base="${OVERHEAD_BASE_PORT:-20700}"
nginx_port=$base; gw_port=$((base + 1)); portkey_port=$((base + 2)); pg_gw_port=$((base + 3))
work="$(mktemp -d)"
pids=()
pg_db="overhead_$$"
pg=true
if [[ "${OVERHEAD_SKIP_PG:-}" == 1 ]] || ! command -v psql >/dev/null; then pg=false; fi
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [[ -f "$work/nginx.pid" ]] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  wait 2>/dev/null || true
  $pg && psql -q -h 127.0.0.1 -U postgres -d postgres -c "drop database if exists $pg_db" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

need() { command -v "$1" >/dev/null || { echo "overhead: '$1' not found; $2" >&2; exit 2; }; }
need wrk "install it with: apt-get install -y wrk"
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
[[ -x "$nginx_bin" ]] || { echo "overhead: nginx not found; install it with: apt-get install -y nginx-light" >&2; exit 2; }

# --- the upstream: nginx answering a fixed chat completion ---------------------------------------
completion='{"id":"chatcmpl-bench","object":"chat.completion","created":1764547200,"model":"gpt-6.1-sol-mini","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":1,"total_tokens":13}}'
mkdir -p "$work/nginx"
cat >"$work/nginx.conf" <<EOF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $work/nginx; proxy_temp_path $work/nginx; fastcgi_temp_path $work/nginx;
  uwsgi_temp_path $work/nginx; scgi_temp_path $work/nginx;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$nginx_port;
    location / { default_type application/json; return 200 '$completion'; }
  }
}
EOF
"$nginx_bin" -c "$work/nginx.conf" -p "$work/nginx"

# --- our gateway, on each journal -----------------------------------------------------------------
token="bench-caller-token"
start_gateway() {  # port data-dir log [journal url]
  # Caps raised so the run measures calls, not refusals (the global default is $40/day); the pace
  # (on by default at the providers' Tier 1) off, as the upstream here has no tier.
  JAVA_OPTS="${JAVA_OPTS:-} -Dfailover.rate-limits.enabled=off -Dledger.caps.global-daily-usd=1000000 -Dledger.caps.global-monthly-usd=10000000 -Dledger.caps.free-daily-usd=1000000" \
    GATEWAY_TOKEN="$token" OPENAI_API_KEY="sk-bench" ANTHROPIC_API_KEY="sk-ant-bench" \
    OPENAI_BASE_URL="http://127.0.0.1:$nginx_port" GATEWAY_PORT="$1" GATEWAY_DATA_DIR="$2" \
    GATEWAY_JOURNAL_URL="${4:-}" GATEWAY_JOURNAL_USER="${4:+postgres}" \
    "$here/bin/gateway" >"$work/$3.log" 2>&1 &
  pids+=($!)
}
start_gateway "$gw_port" "$work/data" gateway
if $pg; then
  psql -q -h 127.0.0.1 -U postgres -d postgres -c "create database $pg_db" >/dev/null
  start_gateway "$pg_gw_port" "$work/data-pg" gateway-pg "jdbc:postgresql://127.0.0.1:5432/$pg_db"
fi

# --- Portkey's gateway, the peer -----------------------------------------------------------------
portkey=true
if [[ "${OVERHEAD_SKIP_PORTKEY:-}" == 1 ]]; then portkey=false; fi
if $portkey; then
  need npm "install Node.js and npm, or set OVERHEAD_SKIP_PORTKEY=1"
  cache="$HOME/.cache/spendgateway-bench"
  pk="$cache/node_modules/@portkey-ai/gateway/build/start-server.js"
  if [[ ! -f "$pk" ]]; then
    echo "overhead: installing @portkey-ai/gateway@1.15.2 into $cache" >&2
    mkdir -p "$cache" && (cd "$cache" && npm install --no-audit --no-fund @portkey-ai/gateway@1.15.2 >&2)
  fi
  node "$pk" --port="$portkey_port" --headless >"$work/portkey.log" 2>&1 &
  pids+=($!)
fi

wait_for() {  # url, name
  for _ in $(seq 1 480); do curl -s -o /dev/null "$1" && return 0; sleep 0.25; done
  echo "overhead: $2 did not start; its log:" >&2; cat "$work/$2.log" >&2 2>/dev/null; exit 1
}
wait_for "http://127.0.0.1:$nginx_port/" nginx
for _ in $(seq 1 480); do curl -sf "http://127.0.0.1:$gw_port/readyz" >/dev/null && break; sleep 0.25; done
curl -sf "http://127.0.0.1:$gw_port/readyz" >/dev/null || { echo "overhead: gateway not ready" >&2; cat "$work/gateway.log" >&2; exit 1; }
if $pg; then
  for _ in $(seq 1 480); do curl -sf "http://127.0.0.1:$pg_gw_port/readyz" >/dev/null && break; sleep 0.25; done
  curl -sf "http://127.0.0.1:$pg_gw_port/readyz" >/dev/null || { echo "overhead: PostgreSQL gateway not ready" >&2; cat "$work/gateway-pg.log" >&2; exit 1; }
fi
$portkey && wait_for "http://127.0.0.1:$portkey_port/" portkey

body='{"model":"gpt-6.1-sol-mini","max_tokens":16,"messages":[{"role":"user","content":"Say ok."}]}'
cat >"$work/post.lua" <<EOF
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["content-type"] = "application/json"
wrk.headers["authorization"] = "Bearer $token"
wrk.headers["x-spend-lane"] = "app"
wrk.headers["x-spend-brand"] = "bench"
wrk.headers["x-spend-brand-daily-usd"] = "100000"
wrk.headers["x-spend-brand-monthly-usd"] = "1000000"
wrk.headers["x-portkey-provider"] = "openai"
wrk.headers["x-portkey-custom-host"] = "http://127.0.0.1:$nginx_port/v1"
EOF

# The ledger reserve API alone: a new id for every request (a repeated id would be answered from
# the books without a write); each run gets its own prefix.
cat >"$work/reserve.lua" <<EOF
local n = 0
local prefix = string.format("ovh-%d-%d", os.time(), math.random(1, 1000000000))
wrk.method = "POST"
wrk.headers["content-type"] = "application/json"
wrk.headers["authorization"] = "Bearer $token"
request = function()
  n = n + 1
  return wrk.format(nil, nil, nil, '{"id":"' .. prefix .. '-' .. n .. '","lane":"app","brand":"bench","amountUsd":0.000001,"brandDailyUsd":1000000,"brandMonthlyUsd":1000000}')
end
EOF

# One probe each so a misconfigured target fails loudly instead of measuring error pages.
probe() {  # url name
  local code
  code=$(curl -s -o "$work/probe.out" -w '%{http_code}' -X POST "$1" -H 'content-type: application/json' \
    -H "authorization: Bearer $token" -H 'x-spend-lane: app' -H 'x-spend-brand: bench' \
    -H 'x-spend-brand-daily-usd: 100000' -H 'x-spend-brand-monthly-usd: 1000000' \
    -H 'x-portkey-provider: openai' -H "x-portkey-custom-host: http://127.0.0.1:$nginx_port/v1" -d "$body")
  [[ "$code" == 200 ]] || { echo "overhead: $2 answered $code: $(head -c 300 "$work/probe.out")" >&2; exit 1; }
}
direct="http://127.0.0.1:$nginx_port/v1/chat/completions"
gateway="http://127.0.0.1:$gw_port/openai/v1/chat/completions"
peer="http://127.0.0.1:$portkey_port/v1/chat/completions"
gateway_pg="http://127.0.0.1:$pg_gw_port/openai/v1/chat/completions"
ledger="http://127.0.0.1:$gw_port/ledger/reservations"
ledger_pg="http://127.0.0.1:$pg_gw_port/ledger/reservations"
probe "$direct" nginx; probe "$gateway" gateway; $portkey && probe "$peer" portkey
$pg && probe "$gateway_pg" gateway-pg

# wrk prints latency in us/ms/s; normalise to ms.
to_ms() { awk '{ v=$1; if (v ~ /us$/) { sub(/us$/,"",v); v/=1000 } else if (v ~ /ms$/) { sub(/ms$/,"",v) } else if (v ~ /s$/) { sub(/s$/,"",v); v*=1000 } printf "%.3f", v }' <<<"$1"; }
run() {  # name url connections [script] -> "rps p50 p99 non2xx"
  local out
  out=$(wrk -t1 -c"$3" -d"${secs}s" --latency -s "${4:-$work/post.lua}" "$2" 2>&1)
  local rps p50 p99 bad
  rps=$(awk '/^Requests\/sec/ {printf "%.0f", $2}' <<<"$out")
  p50=$(to_ms "$(awk '$1=="50%" {print $2}' <<<"$out")")
  p99=$(to_ms "$(awk '$1=="99%" {print $2}' <<<"$out")")
  bad=$(awk '/Non-2xx/ {print $NF}' <<<"$out"); bad=${bad:-0}
  echo "$rps $p50 $p99 $bad"
}
warm() { wrk -t1 -c16 -d5s -s "$work/post.lua" "$1" >/dev/null 2>&1 || true; }

echo "overhead: warming up (JIT) ..." >&2
warm "$gateway"; $pg && warm "$gateway_pg"; $portkey && warm "$peer"; warm "$direct"

# The machine's own limits, measured in the same run.
healthz=$(wrk -t1 -c64 -d5s "http://127.0.0.1:$gw_port/healthz" 2>&1 | awk '/^Requests\/sec/ {printf "%.0f", $2}')
fsync_us=$(python3 - "$work" <<'PY' 2>/dev/null || echo "?"
import os, sys, time
p = os.path.join(sys.argv[1], "fsync.probe"); fd = os.open(p, os.O_WRONLY | os.O_CREAT, 0o600)
samples = []
for i in range(200):
    os.write(fd, b"x" * 512); t = time.perf_counter(); os.fsync(fd); samples.append(time.perf_counter() - t)
samples.sort(); print("%.0f" % (samples[len(samples) // 2] * 1e6))
PY
)

printf '\n%-10s %4s %10s %10s %10s %10s %12s\n' target conns "req/s" "p50 ms" "p99 ms" non-2xx "added p50"
for c in 1 64; do
  read -r d_rps d_p50 d_p99 d_bad <<<"$(run direct "$direct" "$c")"
  printf '%-10s %4s %10s %10s %10s %10s %12s\n' nginx "$c" "$d_rps" "$d_p50" "$d_p99" "$d_bad" "-"
  row() {  # name url [script]: one table row, with its added p50 over nginx
    local rps p50 p99 bad
    read -r rps p50 p99 bad <<<"$(run "$1" "$2" "$c" "${3:-}")"
    printf '%-10s %4s %10s %10s %10s %10s %12s\n' "$1" "$c" "$rps" "$p50" "$p99" "$bad" \
      "$(awk -v a="$p50" -v b="$d_p50" 'BEGIN {printf "+%.3f ms", a - b}')"
  }
  row gateway-h2 "$gateway"
  $pg && row gateway-pg "$gateway_pg"
  if $portkey; then
    read -r p_rps p_p50 p_p99 p_bad <<<"$(run portkey "$peer" "$c")"
    printf '%-10s %4s %10s %10s %10s %10s %12s\n' portkey "$c" "$p_rps" "$p_p50" "$p_p99" "$p_bad" \
      "$(awk -v a="$p_p50" -v b="$d_p50" 'BEGIN {printf "+%.3f ms", a - b}')"
  fi
  row ledger-h2 "$ledger" "$work/reserve.lua"
  $pg && row ledger-pg "$ledger_pg" "$work/reserve.lua"
done
echo
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); gateway /healthz c=64: ${healthz} req/s; fsync (512 B, median of 200): ${fsync_us} us"
echo "gateway log: $(grep -c '"route"' "$work/gateway.log" 2>/dev/null || true) access lines; errors: $(grep -c '"level":"ERROR"\|ERROR' "$work/gateway.log" 2>/dev/null || true)"
