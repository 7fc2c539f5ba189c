#!/usr/bin/env bash
# The GPU checks of issue 42 in one script, for a GPU machine without a Go
# toolchain. Two steps:
#
#   realhw/cuda/device-check.sh build DIR     # here (Go, a C compiler; no GPU, no CUDA toolkit)
#   DIR/device-check.sh run OUT [GPU_TYPE]    # there, in DIR (GPU_TYPE default h200-141gb)
#
# build compiles, with -tags cuda against the no-device stand-in libraries
# carrying the real sonames (libcuda.so.1, libcudart.so.$CUDART_MAJOR,
# default 13), the conspirator binary and realhw/cuda's test binary, and
# copies this script, realhw/torch/measure_compute.py and the H200 scenario
# beside them. The binaries link glibc dynamically (this machine's: built
# on Debian 12, glibc 2.36); the GPU machine's must be as new.
#
# run writes into OUT, and never stops at a failed step (each step's exit
# code is in OUT/steps.tsv, its output in OUT/NN-name.log; the commands in
# OUT/commands.log):
#   01 nvidia-smi (name, driver, CUDA) and nvidia-smi mig -lgip / -lgipp (read only)
#   02 conspirator mig import of those two files (the device's geometry)
#   03 realhw/cuda's tests on the GPU (TestMeasure, TestBackend)
#   04 its CSV measurement (cuda.csv, as ../shared's realhw-cuda-measure.csv)
#   05 conspirator calibrate --backend cuda --validate (profile + validation.json)
#   06 measure_compute.py: ResNet-50 FP16, batches 1/8/32/128, eager and graph
#   07 conspirator calibrate --import cuda.csv compute.csv (the measured profile)
#   08 conspirator run paper/e2e --backend cuda on this GPU under step 07's
#      profile (backend.json: the model's stages beside the real ones)
#   09 the shipped H200 scenario under step 07's profile
#   10 measure_llm_step.py: whole Llama-3.1-8B steps (prefill chunks, decode
#      batches eager and as CUDA graphs) for issue 54's held-out check:
#      `go run ./bench/stepval -measured OUT/llm-steps.csv` here afterwards
# About 4-7 minutes on an H200. Commit OUT's small files as fixtures
# (testdata) with OUT/commands.log, and compare with realhw/data/h200-2026-11-27.
set -uo pipefail

build() {
  local dir=$1
  local root
  root="$(cd "$(dirname "$0")/../.." && pwd)"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  local stub
  stub=$(mktemp -d)
  trap 'rm -rf "$stub"' RETURN
  (
    set -e
    cd "$root"
    eval "$(SONAMES=1 realhw/cuda/testdata/stub/build.sh "$stub")"
    go build -tags cuda -o "$dir/conspirator" ./cmd/conspirator
    go test -c -tags cuda -o "$dir/cuda.test" ./realhw/cuda/
    cp realhw/cuda/device-check.sh realhw/torch/measure_compute.py realhw/torch/measure_llm_step.py "$dir/"
    mkdir -p "$dir/h200"
    cp realhw/data/h200-2026-11-27/e2e-h200.yaml "$dir/h200/"
    git rev-parse HEAD > "$dir/COMMIT" 2>/dev/null || echo unknown > "$dir/COMMIT"
  ) || return 1
  echo "built into $dir; on the GPU machine: cd DIR && ./device-check.sh run OUT [GPU_TYPE]"
  readelf -d "$dir/conspirator" 2>/dev/null | grep NEEDED || true
}

run() {
  local out=$1 gpu=${2:-h200-141gb}
  local here
  here="$(cd "$(dirname "$0")" && pwd)"
  mkdir -p "$out"
  out="$(cd "$out" && pwd)"
  cd "$here" || return 1
  # libcudart.so.N: the CUDA toolkit's, or the one PyTorch's wheels bring.
  local libs=""
  for d in /usr/local/cuda/lib64 /usr/local/cuda-*/lib64 /usr/lib/x86_64-linux-gnu; do
    [ -d "$d" ] && libs="$libs:$d"
  done
  local site
  site=$(python3 -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null || true)
  for s in $site; do
    for f in $(find "$s" -name 'libcudart.so.*' 2>/dev/null); do libs="$libs:$(dirname "$f")"; done
  done
  export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}$libs"
  : > "$out/commands.log"
  printf 'step\texit\tseconds\n' > "$out/steps.tsv"
  n=0
  step() { # step NAME COMMAND...
    local name=$1
    shift
    n=$((n + 1))
    local log
    log=$(printf '%s/%02d-%s.log' "$out" "$n" "$name")
    printf '%02d %s: %s\n' "$n" "$name" "$*" >> "$out/commands.log"
    local t0=$SECONDS
    timeout "${STEP_TIMEOUT:-600}" "$@" > "$log" 2>&1
    local rc=$?
    printf '%02d-%s\t%d\t%d\n' "$n" "$name" "$rc" $((SECONDS - t0)) >> "$out/steps.tsv"
    echo "step $n $name: exit $rc"
  }
  {
    echo "commit $(cat COMMIT 2>/dev/null)"
    echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  } >> "$out/commands.log"
  step nvidia-smi sh -c "nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.max,pcie.link.width.max --format=csv && nvidia-smi | head -4 && nvidia-smi mig -lgip > '$out/mig-lgip.txt' && nvidia-smi mig -lgipp > '$out/mig-lgipp.txt'"
  local driver
  driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
  step mig-import ./conspirator mig import "$out/mig-lgip.txt" "$out/mig-lgipp.txt" --name "$gpu" -o "$out/mig-geometry.yaml"
  step cuda-tests ./cuda.test -test.v -test.count=1 -test.run 'TestMeasure$|TestBackend|TestCudaStageNamesKnown'
  step cuda-csv env CONSPIRATOR_CUDA_CSV="$out/cuda.csv" ./cuda.test -test.v -test.count=1 -test.run TestWriteMeasurementsCSV
  step calibrate-cuda ./conspirator calibrate --backend cuda --validate --gpu-type "$gpu" --gpu-driver "$driver" -o "$out/calibrate-cuda"
  step compute python3 measure_compute.py --gpu-type "$gpu" --batches 1,8,32,128 --modes eager,graph --precision fp16 -o "$out/compute.csv"
  step calibrate-import ./conspirator calibrate --import "$out/cuda.csv" --import "$out/compute.csv" --gpu-type "$gpu" --gpu-driver "$driver" -o "$out/calibrate-import"
  step run-cuda ./conspirator run paper/e2e --backend cuda --set "datapath.gpus=[{type: $gpu, count: 2}]" --set datapath.host.gpu_link=gen5-x16 --set datapath.record_requests=true --set "calibration=$out/calibrate-import/profile.yaml" --no-sensitivity -o "$out/run-cuda"
  step run-h200-profile ./conspirator run h200/e2e-h200.yaml --set "calibration=$out/calibrate-import/profile.yaml" --no-sensitivity -o "$out/run-h200-profile"
  step llm-steps python3 measure_llm_step.py --gpu-type "$gpu" --reps 50 -o "$out/llm-steps.csv"
  # Keep what is small: the result directories' plots are left out.
  find "$out" -name '*.png' -delete 2>/dev/null || true
  echo "done: $out (steps.tsv, commands.log)"
}

case "${1:-}" in
  build) [ $# -eq 2 ] || { echo "usage: $0 build DIR" >&2; exit 2; }; build "$2" ;;
  run) [ $# -ge 2 ] || { echo "usage: $0 run OUT [GPU_TYPE]" >&2; exit 2; }; run "$2" "${3:-h200-141gb}" ;;
  *) echo "usage: $0 build DIR (here) | run OUT [GPU_TYPE] (on the GPU machine, in DIR)" >&2; exit 2 ;;
esac
