#!/usr/bin/env python3
"""Pools the repetitions of bench/host-validate.sh run: per validation
load, the real and model p50/p99 over the repetitions (mean, min-max),
the error of the means, and the tail shares. The machine's own
repeatability (the real quantiles' spread over repetitions) is the floor
under which a single repetition's error says nothing.

usage: bench/hvpool.py DIR   (DIR holds rep1/validation.json, rep2/...)"""
import glob, json, os, sys


def main():
    d = sys.argv[1]
    reps = sorted(glob.glob(os.path.join(d, "rep*", "validation.json")),
                  key=lambda p: int(os.path.basename(os.path.dirname(p))[3:]))
    if not reps:
        print("hvpool: no rep*/validation.json under %s" % d)
        return 1
    by = {}
    fits = []
    for path in reps:
        v = json.load(open(path))
        f = v["fit"]
        fits.append((f.get("wakeup_miss_floor", 0), f["wakeup_miss"], f.get("unloaded_tail_share"), f.get("fit_tail_shares"), f["fit_loads"]))
        for l in v["levels"]:
            by.setdefault(l["load"], []).append(l)
    print("pooled over %d repetitions (mean, min-max; error of the means = mean model / mean real - 1):" % len(reps))
    print("%5s %9s %20s %9s %7s %20s %9s %7s %15s %15s" % ("load", "measured", "real p50 us", "model", "error", "real p99 us", "model", "error", "tail real %", "tail model %"))
    for u in sorted(by):
        ls = by[u]
        mean = lambda k: sum(l[k] for l in ls) / len(ls)
        rng = lambda k: "%.0f-%.0f" % (min(l[k] for l in ls), max(l[k] for l in ls))
        e50 = mean("model_p50_us") / mean("real_p50_us") - 1
        e99 = mean("model_p99_us") / mean("real_p99_us") - 1
        print("%4.0f%% %8.1f%% %8.1f (%9s) %9.1f %+6.1f%% %8.1f (%9s) %9.1f %+6.1f%% %6.2f (%.2f-%.2f) %6.2f" % (
            100 * u, 100 * mean("measured_load"), mean("real_p50_us"), rng("real_p50_us"), mean("model_p50_us"), 100 * e50,
            mean("real_p99_us"), rng("real_p99_us"), mean("model_p99_us"), 100 * e99,
            100 * mean("real_tail_share"), 100 * min(l["real_tail_share"] for l in ls), 100 * max(l["real_tail_share"] for l in ls),
            100 * mean("model_tail_share")))
    for i, (fl, m, s0, fs, fl_loads) in enumerate(fits):
        print("rep%d fit: wake-up miss %.3g%% + %.3g x load; unloaded tail share %s; fit runs' shares %s at loads %s" % (
            i + 1, 100 * fl, m, s0, fs, ["%.3f" % x for x in fl_loads]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
