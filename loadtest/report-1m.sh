#!/usr/bin/env bash
# Times `gateway-admin report` on a journal of one million events (a documented benchmark command,
# not run in CI; results in docs/BENCHMARKS.md, "Spend report on a million events").
#
#   loadtest/report-1m.sh [report flags ...]     (default: --by day,brand,tag --format csv)
#
# The journal is ReplayBench's (ledger-actor test sources): 1,000,000 ReservationMade and
# ReservationSettled facts in an H2 file, written through the real journal plugin, generated once
# into ledger-actor/target/replay-bench (REGENERATE=1 writes it again; EVENTS=N another size;
# FACTS_PER_ROW=N writes N facts per journal row, as the ledger's group commit does, into
# ledger-actor/target/replay-bench-rows-of-N). Its
# reservations are all on 2026-11-02 (UTC), so the report's period is November 2026. The report is
# run through bin/gateway-admin, exactly as an operator runs it (JVM start, config, journal read,
# grouping, output); wall time and the process's CPU time are printed, then the report's totals
# next to `replay`'s global_monthly spend for the same journal (they must be equal).
# Needs Java 17 and Maven.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
per_row="${FACTS_PER_ROW:-1}"
dir="ledger-actor/target/replay-bench"
if (( per_row > 1 )); then dir="$dir-rows-of-$per_row"; fi
events="${EVENTS:-1000000}"
if [[ "${REGENERATE:-0}" == 1 || ! -f "$dir/ledger.mv.db" ]]; then
  echo "report-1m: generating a journal of $events events in $dir (minutes)" >&2
  mvn -B -q -pl ledger-actor -am -Preplay-bench -DskipTests verify \
    -Dreplay.events="$events" -Dreplay.runs=0 -Dreplay.generate=true \
    -Dreplay.jvmArgs=-Dreplay.factsPerRow="$per_row" >&2
fi
flags=("$@"); (( ${#flags[@]} )) || flags=(--by day,brand,tag --format csv)
out="$(mktemp)"; trap 'rm -f "$out"' EXIT
bin/gateway-admin --version >/dev/null  # builds the jar first when needed, outside the timing

echo "report-1m: bin/gateway-admin report --data-dir $dir --from 2026-11-01 --to 2026-11-30 ${flags[*]}" >&2
/usr/bin/time -f "report-1m: wall %e s, CPU %U s user + %S s system, max RSS %M KB" \
  bin/gateway-admin report --data-dir "$dir" --from 2026-11-01 --to 2026-11-30 "${flags[@]}" >"$out"
echo "report-1m: $(wc -l <"$out") lines of output; the first:" >&2
head -3 "$out" >&2

# Totals: settled_usd + expired_usd over every row (CSV), next to replay's company-wide spend.
if [[ "${flags[*]}" == *"--format csv"* ]]; then
  awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
           { calls += $col["calls"]; spent += $col["settled_usd"] + $col["expired_usd"] }
           END { printf "report-1m: report total calls %d, spent %.6f USD\n", calls, spent }' "$out" >&2
  echo "report-1m: replay's global_monthly row for 2026-11:" >&2
  /usr/bin/time -f "report-1m: replay wall %e s" \
    bin/gateway-admin replay --data-dir "$dir" --until 2026-11-30T23:59:59Z 2>&1 \
    | grep -E 'global_monthly|replay wall' >&2 || true
fi
