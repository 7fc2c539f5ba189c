#!/usr/bin/env bash
# HOLD, side by side in one sitting (issue 17 item 1): ns-3's event
# schedulers (bench/ns3_hold.cc, built against Debian's libns3-dev when it
# is installed: apt-get install libns3-dev) and this engine's queues, raw
# (BenchmarkHold) and through the Simulator's API (BenchmarkSimHold), at
# 1e2, 1e4 and 1e6 pending events, EVENTS events each (default 3e6). Both
# sides draw their exponential increments (mean 1 s) from a precomputed
# ring, so neither times a random number generator. Prints ns per event.
# A measurement, not a test: run it on a quiet machine, and compare only
# figures taken in one run.
set -euo pipefail
cd "$(dirname "$0")/.."
EVENTS=${EVENTS:-3000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

{
if [ -e /usr/include/ns3/core-module.h ] && command -v g++ >/dev/null; then
  # ns3-core.pc also names libgsl, which the core library does not need.
  g++ -O2 -std=c++17 bench/ns3_hold.cc -lns3-core -o "$tmp/ns3_hold"
  for n in 100 10000 1000000; do
    for s in PriorityQueue Map Heap Calendar; do
      ev=$EVENTS
      # ns-3 3.37's calendar queue takes about 38 us per event at 1e6
      # pending: a fifth of the events is enough to show it.
      if [ "$s" = Calendar ] && [ "$n" = 1000000 ]; then ev=$((EVENTS / 5)); fi
      "$tmp/ns3_hold" "$s" "$n" "$ev" | awk -v s="ns-3 $s" '{print s, $3, $4}'
    done
  done
else
  echo "# ns-3 not installed (Debian: apt-get install libns3-dev): its rows are skipped" >&2
fi
go test -run '^$' -bench '^BenchmarkHold$' -benchtime "${EVENTS}x" ./engine/ |
  awk '/^BenchmarkHold\// {split($1, a, "/"); sub("impl=", "", a[2]); sub(/-[0-9]+$/, "", a[3]); print "engine " a[2], a[3], $3}'
go test -run '^$' -bench '^BenchmarkSimHold$///cancel=false' -benchtime "${EVENTS}x" ./engine/ |
  awk '/^BenchmarkSimHold\// {split($1, a, "/"); sub("impl=", "", a[2]); sub(/-[0-9]+$/, "", a[3]); print "engine " a[2] " (simulator)", a[3], $3}'
} > "$tmp/rows"

# One row per implementation, one column per pending-event count.
awk '{ impl = $0; sub(/ n=.*/, "", impl); n = $0; sub(/.* n=/, "", n); sub(/ .*/, "", n);
       if (!(impl in seen)) { seen[impl] = 1; order[++k] = impl }
       v[impl, n] = $NF }
     END { printf "%-36s %10s %10s %10s\n", "ns/event", "n=100", "n=10000", "n=1000000";
           for (i = 1; i <= k; i++) { im = order[i];
             printf "%-36s %10s %10s %10s\n", im, (v[im,"100"] == "" ? "-" : v[im,"100"]), (v[im,"10000"] == "" ? "-" : v[im,"10000"]), (v[im,"1000000"] == "" ? "-" : v[im,"1000000"]) } }' "$tmp/rows"
