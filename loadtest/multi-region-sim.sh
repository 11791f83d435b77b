#!/usr/bin/env bash
# The multi-region allowance simulation (docs/MULTI-REGION.md): N seeded runs of 3-5 regions, each
# deciding with the ledger's own Decider against its allowance, over links of 50-200 ms with
# partitions, shifting traffic and ledger crashes. Prints, per rebalancing policy, the overshoot of
# the company-wide caps (must be 0) and the share of calls refused only because the local allowance
# ran out while the company still had headroom. Exit 1 on any violation (its seed and trace printed).
#
#   loadtest/multi-region-sim.sh [N (default 1000)] [--from S] [--policies GLOBAL,STATIC,PULL,PULL_NO_FLOOR,PUSH]
#   loadtest/multi-region-sim.sh --seed 42 --policies PULL --trace     # one run, its whole trace
#   loadtest/multi-region-sim.sh 50 --policies ADD_FIRST               # the broken order: violations
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$here"
# (an absolute output file: each module of the reactor writes it, region-sim last)
mvn -B -q -pl region-sim -am -DskipTests -Djacoco.skip=true -Dspotless.check.skip=true compile \
  dependency:build-classpath -Dmdep.outputFile="$here/region-sim/target/sim.classpath" >&2
cp="region-sim/target/classes:$(cat region-sim/target/sim.classpath)"
exec java -Xmx1g -cp "$cp" dev.spendgateway.regionsim.MultiRegionSim "$@"
