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
#
# Then, when ns-3 is there, the ratio issue 17 item 1 asks for: the
# engine's default through the simulator against ns-3's PriorityQueue at
# 1e4 pending, run alternately PAIRS times (default 7), with the median
# of each and the median of the pairs' ratios. One pair on a shared
# machine moves by 20% or more; the median of alternating pairs does not
# favour either side.
set -euo pipefail
cd "$(dirname "$0")/.."
have_ns3=
EVENTS=${EVENTS:-3000000}
PAIRS=${PAIRS:-7}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

{
if [ -e /usr/include/ns3/core-module.h ] && command -v g++ >/dev/null; then
  # ns3-core.pc also names libgsl, which the core library does not need.
  g++ -O2 -std=c++17 bench/ns3_hold.cc -lns3-core -o "$tmp/ns3_hold"
  have_ns3=1
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

[ -n "$have_ns3" ] || exit 0
go test -c -o "$tmp/engine.test" ./engine/
for i in $(seq "$PAIRS"); do
  a=$("$tmp/ns3_hold" PriorityQueue 10000 "$EVENTS" | awk '{print $4}')
  b=$("$tmp/engine.test" -test.run '^$' -test.bench '^BenchmarkSimHold$/^impl=default$/^n=10000$/^cancel=false$' \
        -test.benchtime "${EVENTS}x" -test.cpu 1 | awk '/^BenchmarkSimHold.*ns\/op/ {print $3}')
  echo "$a $b"
done | awk -v pairs="$PAIRS" '
  function median(x, n,    i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && x[j-1] > x[j]; j--) { t = x[j]; x[j] = x[j-1]; x[j-1] = t }
    return n % 2 ? x[(n+1)/2] : (x[n/2] + x[n/2+1]) / 2 }
  { ns3[NR] = $1; eng[NR] = $2; r[NR] = $2 / $1; printf "pair %d: ns-3 PriorityQueue %s, engine default %s ns/event, ratio %.2f\n", NR, $1, $2, $2 / $1 }
  END { printf "n=10000, median of %d alternating pairs: ns-3 PriorityQueue %.1f, engine default %.1f ns/event, median ratio %.2f\n",
        NR, median(ns3, NR), median(eng, NR), median(r, NR) }'
