#!/usr/bin/env bash
# Soak helper (a documented command, not run in CI): runs bin/loadtest with the
# given arguments while sampling the gateway JVM every 10 s into a CSV: heap used and old gen used
# (jstat -gc), open file descriptors (/proc/PID/fd), threads and RSS (/proc/PID/status).
#
#   loadtest/soak.sh <gateway-pid> <out.csv> -- <bin/loadtest arguments>
#   loadtest/soak.sh 12345 soak.csv -- anthropic --rate 200 -d 10m -c 64 -q
#
# Prints a one-line summary (first/last/max of each column) at the end; exits with loadtest's code.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pid="${1:?gateway pid}"; csv="${2:?output csv}"; shift 2
[[ "${1:-}" == "--" ]] && shift
interval="${SOAK_INTERVAL_S:-10}"

sample() {
  local t="$1" heap old fds threads rss
  read -r heap old < <(jstat -gc "$pid" | awk 'NR==2 {printf "%.1f %.1f\n", ($3+$4+$6+$8)/1024, $8/1024}')
  fds=$(ls "/proc/$pid/fd" | wc -l)
  threads=$(awk '/^Threads:/ {print $2}' "/proc/$pid/status")
  rss=$(awk '/^VmRSS:/ {printf "%.1f", $2/1024}' "/proc/$pid/status")
  echo "$t,$heap,$old,$fds,$threads,$rss" >> "$csv"
}

echo "elapsed_s,heap_used_mb,old_gen_used_mb,open_fds,threads,rss_mb" > "$csv"
"$root/bin/loadtest" "$@" &
lt=$!
start=$(date +%s)
sample 0
while kill -0 "$lt" 2>/dev/null; do
  sleep "$interval"
  kill -0 "$pid" 2>/dev/null || { echo "soak: gateway $pid is gone" >&2; break; }
  sample $(( $(date +%s) - start ))
done
set +e
wait "$lt"; rc=$?
set -e
sample $(( $(date +%s) - start ))
awk -F, 'NR==2 {for(i=2;i<=6;i++){f[i]=$i; m[i]=$i}} NR>1 {for(i=2;i<=6;i++){l[i]=$i; if($i>m[i]) m[i]=$i}}
  END {split("heap_used_mb old_gen_used_mb open_fds threads rss_mb", n, " ");
       for(i=2;i<=6;i++) printf "%s first %s last %s max %s%s", n[i-1], f[i], l[i], m[i], (i<6?"; ":"\n")}' "$csv" >&2
exit "$rc"
