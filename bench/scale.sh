#!/usr/bin/env bash
# How a replay's time and memory grow with the jobs and with the GPUs
# (issue 17 item 3), on one core: BenchmarkScale (sim/scale_bench_test.go)
# runs the built-in scale/1m-jobs scenario at 10^4, 10^5 and 10^6 jobs on
# its 1,024 GPUs, and 10^6 jobs on 1,024, 10,240 and 102,400 GPUs (arrival
# rate scaled with the GPUs), each once; scaleplot fits the log-log slopes
# and writes bench/out/scale.csv and bench/out/scale.{png,svg,pdf}.
# Needs ../shared/traces (the job mix). About 2 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-bench/out}
mkdir -p "$out"
go test -cpu 1 -run '^$' -bench 'BenchmarkScale' -benchtime 1x -benchmem -timeout 30m ./sim/ | tee "$out/scale-bench.txt"
go run ./bench/scaleplot -o "$out" < "$out/scale-bench.txt"
