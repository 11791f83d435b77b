#!/usr/bin/env bash
# The ledger's write path, variant by variant, in one run (a documented benchmark command, not run
# in CI): LedgerBench (reserve+settle pairs from N concurrent callers straight at the ledger actor,
# H2 file journal under /tmp) once per journal setting, so the flush candidates and what durability
# costs are measured side by side on the same machine in the same minutes.
#
#   loadtest/ledger-write-path.sh [callers (default 1,16,256)] [seconds per level (default 8)]
#
# Variants (each a -D override of conf/ledger.conf):
#   shipped          the defaults: flush store-and-force, pipeline off, the gateway's settles linger
#   api-closes       the same, settles through the ledger API (every answer after its flush)
#   checkpoint-sync  H2's CHECKPOINT SYNC as the flush
#   no-pipeline      pipeline off set explicitly (the default now; the journal confirms after the flush)
#   flush-off        ledger.journal.sync = off: no fsync at all (NOT durable; what durability costs)
#   pekko-ask        the shipped settings, the client asking through Pekko's ask (a temporary actor
#                    per ask) instead of its direct reply target
#   provider-calls   the shipped settings, callers going on once a settle is sent (as a provider
#                    call does) instead of waiting for its answer
# LEDGER_BENCH_VARIANTS="shipped flush-off" picks some. uptime is printed before and after.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
callers="${1:-1,16,256}"
secs="${2:-8}"
variants="${LEDGER_BENCH_VARIANTS:-shipped api-closes checkpoint-sync no-pipeline flush-off}"
cd "$here"
echo "# uptime before: $(uptime)"
echo "# commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
# (an absolute output file: each module of the reactor writes it, ledger-actor last)
mvn -B -q -pl ledger-actor -am -DskipTests -Dspotless.check.skip=true test-compile \
  dependency:build-classpath -Dmdep.outputFile="$here/ledger-actor/target/bench.classpath" \
  -Dmdep.includeScope=test >&2
cp="ledger-actor/target/test-classes:ledger-actor/target/classes:$(cat ledger-actor/target/bench.classpath)"
for v in $variants; do
  case "$v" in
    shipped) opts=() ;;
    api-closes) opts=(-Dbench.closer=api) ;;
    checkpoint-sync) opts=(-Dledger.journal.flush=checkpoint-sync) ;;
    no-pipeline) opts=(-Dledger.journal.pipeline=off) ;;
    flush-off) opts=(-Dledger.journal.sync=off) ;;
    pekko-ask) opts=(-Dbench.ask=pekko) ;;
    provider-calls) opts=(-Dbench.settle=send) ;;
    *) echo "ledger-write-path: unknown variant '$v'" >&2; exit 2 ;;
  esac
  echo
  echo "## $v ${opts[*]:-}"
  java -Xms1g -Xmx1g -Dlogback.configurationFile=ledger-actor/src/test/resources/logback-bench.xml \
    -Dbench.seconds="$secs" -Dbench.warmup=2 -Dbench.callers="$callers" -Dbench.baseline=false \
    "${opts[@]}" -cp "$cp" dev.spendgateway.ledger.bench.LedgerBench 2>/dev/null \
    | grep -E '^# (journal|before|after)|^\| GlobalBudget' | awk '!seen[$0]++'
done
echo
echo "# uptime after: $(uptime)"
