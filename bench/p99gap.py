#!/usr/bin/env python3
"""The paper's R2 gap on the median, mean and p99: conspirator below
host-rdma, in % of host-rdma, per background load, mean +- 95% CI over the
seeds of a `conspirator sweep` directory (each point's summary.json).

    bench/p99gap.py SWEEP_DIR [LABEL]

Prints one line per load: mean gap and p99 gap (and both p99s).
"""
import glob
import json
import math
import statistics
import sys

# Student t, two-sided 95%, by degrees of freedom (the sweep's seeds - 1).
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
       10: 2.228, 14: 2.145, 19: 2.093, 29: 2.045}


def ci(xs):
    if len(xs) < 2:
        return statistics.fmean(xs), float("nan")
    df = len(xs) - 1
    t = T95.get(df) or T95[max(k for k in T95 if k <= df)]
    return statistics.fmean(xs), t * statistics.stdev(xs) / math.sqrt(len(xs))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    label = sys.argv[2] if len(sys.argv) > 2 else sys.argv[1]
    by = {}
    for f in sorted(glob.glob(sys.argv[1] + "/points/*/summary.json")):
        d = json.load(open(f))
        load = d["inputs"]["datapath"]["host"]["background_load"]
        p = {x["name"]: x["latency_us"] for x in d["paths"]}
        h, c = p["host-rdma"], p["conspirator"]
        by.setdefault(load, []).append(((h["mean"] - c["mean"]) / h["mean"] * 100,
                                        (h["p99"] - c["p99"]) / h["p99"] * 100, h["p99"], c["p99"]))
    if not by:
        sys.exit("no points/*/summary.json under " + sys.argv[1])
    for load in sorted(by, key=lambda s: float(s.rstrip("%"))):
        rows = by[load]
        m, mh = ci([r[0] for r in rows])
        q, qh = ci([r[1] for r in rows])
        hp, _ = ci([r[2] for r in rows])
        cp, _ = ci([r[3] for r in rows])
        print(f"{label}: load {load}: mean gap {m:.1f}% +- {mh:.1f}, p99 gap {q:.1f}% +- {qh:.1f} "
              f"(p99 host-rdma {hp:.0f} us, conspirator {cp:.0f} us; {len(rows)} seeds)")


if __name__ == "__main__":
    main()
