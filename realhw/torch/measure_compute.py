#!/usr/bin/env python3
"""Measure a real model's GPU compute time per batch, for conspirator.

Runs a torchvision model (ResNet-50 by default, random weights: the time
does not depend on them) on one CUDA GPU at several batch sizes, in eager
mode and replayed as a CUDA graph, at a stated precision, and writes the
CSV that `conspirator calibrate --import FILE` reads into the compute table
of that GPU:

    # conspirator compute measurement (realhw/torch/measure_compute.py)
    # gpu_name: NVIDIA H200
    # driver: 580.159.04
    # cuda: 13.0
    # torch: 2.11.0+cu130
    # date: 2026-11-27
    gpu,model,precision,mode,batch,p50_us,p99_us,reps
    h200-141gb,resnet50,fp16,graph,8,1201.571,1219.650,300

Each time is wall clock around one forward pass followed by
torch.cuda.synchronize(), after warm-up (cudnn.benchmark picks kernels
first); p50 and p99 over --reps repetitions. The input is already on the
GPU: copies are measured separately (realhw/cuda).

Another model or serving stack: write the same CSV from your own
measurement (one row per GPU, model, precision, mode and batch; times in
microseconds) and import it the same way.

Needs PyTorch with CUDA and torchvision; it is run on the GPU machine, not
by the Go build.
"""

import argparse
import datetime
import statistics
import subprocess
import sys
import time

MODES = ("eager", "graph")
PRECISIONS = ("fp32", "fp16", "bf16")


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="\n\n".join(__doc__.split("\n\n")[:2]),
        epilog="Example: python3 measure_compute.py --gpu-type h200-141gb --batches 1,8,32,128 -o compute.csv",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--gpu-type", required=True,
                   help="the GPU's name in conspirator's catalog (conspirator scenarios schema lists them), e.g. h200-141gb")
    p.add_argument("--model", default="resnet50", help="torchvision model name (default resnet50)")
    p.add_argument("--batches", default="1,8,32,128", help="comma-separated batch sizes (default 1,8,32,128)")
    p.add_argument("--modes", default="eager,graph", help="eager, graph or both (default both)")
    p.add_argument("--precision", default="fp16", choices=PRECISIONS, help="weights and activations (default fp16)")
    p.add_argument("--size", type=int, default=224, help="input height and width (default 224)")
    p.add_argument("--reps", type=int, default=300, help="timed repetitions per point (default 300)")
    p.add_argument("--warmup", type=int, default=30, help="untimed repetitions first (default 30)")
    p.add_argument("--device", type=int, default=0, help="CUDA device index (default 0)")
    p.add_argument("-o", "--output", required=True, help="CSV to write")
    a = p.parse_args(argv)
    try:
        a.batches = [int(b) for b in a.batches.split(",")]
    except ValueError:
        p.error("--batches %r: want comma-separated integers, e.g. 1,8,32" % a.batches)
    if not a.batches or min(a.batches) < 1:
        p.error("--batches: every batch size must be at least 1")
    a.modes = [m.strip() for m in a.modes.split(",") if m.strip()]
    for m in a.modes:
        if m not in MODES:
            p.error("--modes: %r is not one of %s" % (m, ", ".join(MODES)))
    if a.reps < 10:
        p.error("--reps %d: at least 10, so that a p99 means something" % a.reps)
    return a


def quantile(sorted_values, q):
    i = min(len(sorted_values) - 1, max(0, int(round(q * (len(sorted_values) - 1)))))
    return sorted_values[i]


def driver_version():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def main(argv):
    a = parse_args(argv)
    try:
        import torch
        import torchvision
    except ImportError as e:
        sys.exit("measure_compute.py: %s; install PyTorch with CUDA and torchvision on the GPU machine" % e)
    if not torch.cuda.is_available():
        sys.exit("measure_compute.py: no CUDA GPU visible to PyTorch (torch.cuda.is_available() is False)")
    dev = torch.device("cuda", a.device)
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[a.precision]
    torch.backends.cudnn.benchmark = True
    model = getattr(torchvision.models, a.model)(weights=None).to(dev, dtype).eval()
    model = model.to(memory_format=torch.channels_last)
    rows = []
    with torch.inference_mode():
        for batch in a.batches:
            x = torch.randn(batch, 3, a.size, a.size, device=dev, dtype=dtype).to(memory_format=torch.channels_last)
            for mode in a.modes:
                if mode == "graph":
                    s = torch.cuda.Stream(dev)
                    s.wait_stream(torch.cuda.current_stream(dev))
                    with torch.cuda.stream(s):
                        for _ in range(3):
                            model(x)
                    torch.cuda.current_stream(dev).wait_stream(s)
                    g = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(g):
                        model(x)
                    step = g.replay
                else:
                    def step():
                        model(x)
                for _ in range(a.warmup):
                    step()
                torch.cuda.synchronize(dev)
                times = []
                for _ in range(a.reps):
                    t0 = time.perf_counter()
                    step()
                    torch.cuda.synchronize(dev)
                    times.append((time.perf_counter() - t0) * 1e6)
                times.sort()
                rows.append((a.gpu_type, a.model, a.precision, mode, batch,
                             statistics.median(times), quantile(times, 0.99), a.reps))
                print("%s %s %s batch %d: p50 %.1f us, p99 %.1f us" % (a.model, a.precision, mode, batch, rows[-1][5], rows[-1][6]),
                      file=sys.stderr)
    with open(a.output, "w") as f:
        f.write("# conspirator compute measurement (realhw/torch/measure_compute.py)\n")
        f.write("# gpu_name: %s\n" % torch.cuda.get_device_name(dev))
        f.write("# driver: %s\n" % driver_version())
        f.write("# cuda: %s\n" % torch.version.cuda)
        f.write("# torch: %s\n" % torch.__version__)
        f.write("# date: %s\n" % datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"))
        f.write("gpu,model,precision,mode,batch,p50_us,p99_us,reps\n")
        for r in rows:
            f.write("%s,%s,%s,%s,%d,%.3f,%.3f,%d\n" % r)
    print("wrote %s (%d rows)" % (a.output, len(rows)), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
