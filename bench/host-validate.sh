#!/usr/bin/env bash
# calibrate --backend host --validate on a quiet many-core machine (issue
# 37: the 16-core GPU machine), which has no Go toolchain: build a static
# binary here, run it there.
#
#   bench/host-validate.sh build   # on the development machine (needs Go):
#                                  # writes bench/out/static/conspirator and
#                                  # commit.txt (the commit it was built from)
#   bench/host-validate.sh run     # on the quiet machine (no Go needed): runs
#                                  # the static binary REPEATS times (default 3),
#                                  # then `r2` with the first repetition's profile
#   bench/host-validate.sh r2 PROFILE  # the paper's R2 gap (mean and p99,
#                                  # conspirator vs host-rdma, 0% and 80% load,
#                                  # SEEDS seeds, default 10) from the catalog,
#                                  # with PROFILE, and with PROFILE but constant
#                                  # stage costs (how much of the p99 the spread
#                                  # carries); needs python3 for bench/p99gap.py
#
# `run` writes, under $OUT (default bench/out), host-validate-<N>core/:
# machine.txt (nproc, lscpu, load average before and after: a quiet machine
# has a load average near 0), rep<i>/ (validation.json, profile.yaml,
# plots/) and table.txt (each repetition's printed table: p50, p99 and
# p99.9 error per held-out load, the load the generator measured, met or
# missed). With the device tool, carry the binary (it is ignored by git):
#   run(command="bench/host-validate.sh run", carry=["bench/out/static"])
# About 15-25 s per repetition on 16 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=bench/out/static/conspirator
case "${1:-}" in
build)
	mkdir -p bench/out/static
	CGO_ENABLED=0 go build -trimpath -o "$bin" ./cmd/conspirator
	c=$(git rev-parse HEAD)
	git diff --quiet HEAD || c="$c (with uncommitted changes)"
	echo "$c" >bench/out/static/commit.txt
	echo "built $bin ($(git rev-parse --short HEAD)); carry it to the quiet machine and run: bench/host-validate.sh run"
	;;
run)
	[ -x "$bin" ] || { echo "no $bin: run 'bench/host-validate.sh build' on a machine with Go first" >&2; exit 2; }
	n=$(nproc)
	dir="${OUT:-bench/out}/host-validate-${n}core"
	mkdir -p "$dir"
	{
		echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "binary: $("$bin" version 2>/dev/null | head -1), built from $(cat bench/out/static/commit.txt 2>/dev/null || echo 'an unrecorded commit')"
		echo "nproc: $n"
		echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
		lscpu 2>/dev/null | grep -E '^(Model name|CPU\(s\)|Thread|Core|Socket|CPU max MHz)' || true
	} >"$dir/machine.txt"
	: >"$dir/table.txt"
	for i in $(seq 1 "${REPEATS:-3}"); do
		echo "== repetition $i of ${REPEATS:-3}" | tee -a "$dir/table.txt"
		"$bin" calibrate --backend host --validate -o "$dir/rep$i" 2>&1 | sed -n '/^validation:/,$p' | tee -a "$dir/table.txt"
	done
	echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$dir/machine.txt"
	"$0" r2 "$dir/rep1/profile.yaml" | tee "$dir/r2.txt"
	echo "written: $dir (table.txt, r2.txt, machine.txt, rep*/validation.json)"
	if grep -q ' missed ' "$dir/table.txt"; then
		echo "some held-out load missed the target (|p50| <= 10%, |p99| <= 25%): see $dir/table.txt"
	fi
	;;
r2)
	prof=${2:?usage: bench/host-validate.sh r2 PROFILE}
	[ -x "$bin" ] || bin=./conspirator
	out="${OUT:-bench/out}/r2"
	rm -rf "$out"
	flat=()
	for k in network copy cpu_work reply; do flat+=(--set "datapath.host.spread.$k={distribution: constant}"); done
	sweep() { "$bin" sweep paper/e2e --param datapath.host.background_load=0%,80% --seeds "${SEEDS:-10}" -o "$out/$1" "${@:2}" >"$out-$1.log" 2>&1; }
	mkdir -p "$out"
	sweep catalog
	sweep profile --set "calibration=$(realpath "$prof")"
	sweep profile-constant --set "calibration=$(realpath "$prof")" "${flat[@]}"
	for v in catalog profile profile-constant; do python3 bench/p99gap.py "$out/$v" "$v"; done
	;;
*)
	echo "usage: bench/host-validate.sh build|run|r2 PROFILE (see the comment at the top)" >&2
	exit 2
	;;
esac
