#!/usr/bin/env bash
# calibrate --backend host --validate on a quiet many-core machine (issue
# 37: the 16-core GPU machine), which has no Go toolchain: build a static
# binary here, run it there.
#
#   bench/host-validate.sh build   # on the development machine (needs Go):
#                                  # writes bench/out/static/conspirator and
#                                  # commit.txt (the commit it was built from)
#   bench/host-validate.sh run     # on the quiet machine (no Go needed): runs
#                                  # the static binary REPEATS times (default 3;
#                                  # validation loads VALIDATION_LOADS, default
#                                  # 0%,20%,40%,60%), pools them (bench/hvpool.py:
#                                  # the machine's repeatability beside the
#                                  # model's error), then `r2` with the first
#                                  # repetition's profile
#   bench/host-validate.sh r2 PROFILE  # the paper's R2 gap (mean and p99,
#                                  # conspirator vs host-rdma, 0% and 80% load,
#                                  # SEEDS seeds, default 10) from the catalog,
#                                  # with PROFILE, and with PROFILE but constant
#                                  # stage costs (how much of the p99 the spread
#                                  # carries); needs python3 for bench/p99gap.py
#
# `run` writes, under $OUT (default bench/out), two files:
# host-validate-<N>core-summary.txt (machine: nproc, lscpu, load average
# before and after, a quiet machine has one near 0; each repetition's
# printed table: p50, p99 and p99.9 error per held-out load, the load the
# generator measured, met or missed; the R2 gaps) and
# host-validate-<N>core.tar.gz (rep<i>/ validation.json, profile.yaml,
# plots/, rep<i>.log, the r2 sweeps). With the device tool, carry the binary (it is ignored by git):
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
		# The whole output is kept (an error prints before the table, and
		# a failed repetition must not stop the others or go unsaid).
		rc=0
		"$bin" calibrate --backend host --validate --validation-loads "${VALIDATION_LOADS:-0%,20%,40%,60%}" -o "$dir/rep$i" >"$dir/rep$i.log" 2>&1 || rc=$?
		if [ "$rc" != 0 ]; then
			echo "repetition $i failed (exit $rc); its output:" | tee -a "$dir/table.txt"
			tail -20 "$dir/rep$i.log" | tee -a "$dir/table.txt"
		else
			sed -n '/^validation:/,$p' "$dir/rep$i.log" | tee -a "$dir/table.txt"
		fi
	done
	echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$dir/machine.txt"
	python3 bench/hvpool.py "$dir" 2>&1 | tee -a "$dir/table.txt" || true
	if [ -f "$dir/rep1/profile.yaml" ]; then
		OUT="$dir" bash bench/host-validate.sh r2 "$dir/rep1/profile.yaml" 2>&1 | tee "$dir/r2.txt" || true
	else
		echo "no profile from repetition 1: r2 skipped" | tee "$dir/r2.txt"
	fi
	# The device tool brings back only a few files from $OUT: one summary
	# to read at once and one archive of everything.
	out="${OUT:-bench/out}"
	cat "$dir/machine.txt" "$dir/table.txt" "$dir/r2.txt" >"$out/host-validate-${n}core-summary.txt"
	# The r2 sweeps' per-request records (2 MB a point, 60 points) are
	# what bench/p99gap.py read; its figures are in the summary, and
	# without them the archive stays under the device tool's 16 MiB a file.
	tar -czf "$out/host-validate-${n}core.tar.gz" --exclude=requests.csv --exclude=report.html -C "$(dirname "$dir")" "$(basename "$dir")"
	rm -rf "$dir"
	echo "written: $out/host-validate-${n}core-summary.txt and $out/host-validate-${n}core.tar.gz (rep*/validation.json, profile.yaml, logs, r2 sweeps)"
	if grep -q ' missed ' "$out/host-validate-${n}core-summary.txt"; then
		echo "some held-out load missed the target (|p50| <= 10%, |p99| <= 25%): see the summary"
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
