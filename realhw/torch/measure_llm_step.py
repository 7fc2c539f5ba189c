#!/usr/bin/env python3
"""Measure whole LLM serving steps on a real GPU, for conspirator's step model.

Builds a Llama-style decoder (RMSNorm, rotary embedding, grouped-query
attention through PyTorch's scaled_dot_product_attention, a gated SiLU MLP,
the LM head) with random weights at a built-in model's shapes (the time
does not depend on the weights), and times one serving step on one CUDA GPU
(or the MIG instance the process sees), tensor parallelism 1:

  prefill  one prompt chunk of --prefill tokens, no cached context, eager;
  decode   --batches requests each reading --contexts tokens of KV cache
           and writing its new token's K and V, eager and replayed as a
           CUDA graph (as vLLM captures decode steps).

It writes the CSV that `go run ./bench/stepval -measured FILE` compares
with hw/llm's llm.Step, row by row, nothing fitted to it:

    # conspirator LLM step measurement (realhw/torch/measure_llm_step.py)
    # gpu_name: NVIDIA H200
    # torch: 2.11.0+cu130
    model,layers,gpu,mig,tp,phase,mode,batch,tokens,context,p50_us,p99_us,reps
    llama-3.1-8b,32,h200-141gb,,1,decode,graph,32,32,2048,9431.2,9502.8,100

context is the KV tokens each decode reads before its own (the step
attends over context + 1); the sampling of the next token and the
engine's scheduling are not in the time.

Each time is wall clock around one step followed by
torch.cuda.synchronize(), after warm-up; p50 and p99 over --reps. It changes no GPU setting (MIG included): run it inside a MIG instance to
measure one (give --mig, the profile, e.g. 3g.71gb).

Needs PyTorch 2.5 or later with CUDA (scaled_dot_product_attention with
enable_gqa); it is run on the GPU machine, not by the Go build.
"""

import argparse
import datetime
import statistics
import sys
import time

# Its sibling, copied beside it by realhw/cuda/device-check.sh.
from measure_compute import quantile

# Built-in shapes (HuggingFace config.json values), as hw/llm's catalog.
MODELS = {
    "llama-3.1-8b": dict(layers=32, hidden=4096, heads=32, kv_heads=8, head_dim=128, intermediate=14336, vocab=128256),
    "llama-2-7b": dict(layers=32, hidden=4096, heads=32, kv_heads=32, head_dim=128, intermediate=11008, vocab=32000),
    "qwen2-7b": dict(layers=28, hidden=3584, heads=28, kv_heads=4, head_dim=128, intermediate=18944, vocab=152064),
}
MODES = ("eager", "graph")


def ints(p, flag, text):
    try:
        v = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        p.error("%s %r: want comma-separated integers, e.g. 1,8,32" % (flag, text))
    if not v or min(v) < 1:
        p.error("%s: every value must be at least 1" % flag)
    return v


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="\n\n".join(__doc__.split("\n\n")[:3]),
        epilog="Example: python3 measure_llm_step.py --gpu-type h200-141gb -o steps.csv; then, with Go: "
               "go run ./bench/stepval -measured steps.csv",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--gpu-type", required=True,
                   help="the GPU's name in conspirator's catalog, e.g. h200-141gb, h100-80gb, a100-80gb")
    p.add_argument("--mig", default="", help="the MIG profile of the instance this runs in (e.g. 3g.71gb); empty: a whole GPU")
    p.add_argument("--model", default="llama-3.1-8b", choices=sorted(MODELS), help="built-in shapes (default llama-3.1-8b)")
    p.add_argument("--layers", type=int, default=0, help="decoder layers to build; 0: the model's (the LM head is always there)")
    p.add_argument("--prefill", default="128,512,2048,8192", help="prompt chunk sizes (default 128,512,2048,8192)")
    p.add_argument("--batches", default="1,8,32,128", help="decode batch sizes (default 1,8,32,128)")
    p.add_argument("--contexts", default="512,2048", help="decode contexts in tokens (default 512,2048)")
    p.add_argument("--modes", default="eager,graph", help="decode modes: eager, graph or both (default both)")
    p.add_argument("--attention", default="fused", choices=("fused", "any"),
                   help="fused: attention only in a fused kernel (flash, cuDNN or memory-efficient; the math fallback "
                        "refused), as serving engines run it; any: whatever PyTorch picks (default fused)")
    p.add_argument("--reps", type=int, default=100, help="timed repetitions per point (default 100)")
    p.add_argument("--warmup", type=int, default=10, help="untimed repetitions first (default 10)")
    p.add_argument("--device", type=int, default=0, help="CUDA device index (default 0)")
    p.add_argument("-o", "--output", required=True, help="CSV to write")
    a = p.parse_args(argv)
    a.prefill = ints(p, "--prefill", a.prefill)
    a.batches = ints(p, "--batches", a.batches)
    a.contexts = ints(p, "--contexts", a.contexts)
    a.modes = [m.strip() for m in a.modes.split(",") if m.strip()]
    for m in a.modes:
        if m not in MODES:
            p.error("--modes: %r is not one of %s" % (m, ", ".join(MODES)))
    if a.layers < 0:
        p.error("--layers %d: want 0 (the model's) or more" % a.layers)
    if a.reps < 10:
        p.error("--reps %d: at least 10, so that a p99 means something" % a.reps)
    return a


def build(torch, cfg, layers, dev, dtype):
    """The decoder's weights (random, scaled small), one dict a layer."""
    h, hd, nh, nkv, inter = cfg["hidden"], cfg["head_dim"], cfg["heads"], cfg["kv_heads"], cfg["intermediate"]

    def w(*shape):
        return (torch.randn(*shape, device=dev, dtype=dtype) * 0.02)

    ls = []
    for _ in range(layers):
        ls.append(dict(
            ln1=torch.ones(h, device=dev, dtype=dtype), ln2=torch.ones(h, device=dev, dtype=dtype),
            qkv=w((nh + 2 * nkv) * hd, h), o=w(h, nh * hd),
            gate_up=w(2 * inter, h), down=w(h, inter)))
    emb = w(cfg["vocab"], h)
    head = w(cfg["vocab"], h)
    norm = torch.ones(h, device=dev, dtype=dtype)
    return ls, emb, head, norm


def rms(torch, x, g):
    v = x.float().pow(2).mean(-1, keepdim=True)
    return (x.float() * torch.rsqrt(v + 1e-5)).to(x.dtype) * g


def rope_tables(torch, pos, hd, dtype):
    """cos and sin [t, hd/2] of the rotary embedding at positions pos [t],
    once a step, as serving engines compute them."""
    inv = 1.0 / (500000.0 ** (torch.arange(0, hd, 2, device=pos.device, dtype=torch.float32) / hd))
    f = torch.outer(pos.float(), inv)
    return f.cos().to(dtype), f.sin().to(dtype)


def rope(torch, x, cos, sin, hd):
    """Rotary embedding on x [b, heads, t, hd]."""
    x1, x2 = x[..., : hd // 2], x[..., hd // 2:]
    return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)


def forward(torch, F, cfg, model, ids, pos, cache, start):
    """One step: ids [b, t] at positions pos [t]; cache a list of (K, V)
    [b, kv_heads, max_ctx, hd] per layer or None (prefill without
    cache); writes the new tokens' K and V at start; returns the logits of
    each sequence's last token."""
    ls, emb, head, norm = model
    nh, nkv, hd = cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
    b, t = ids.shape
    x = F.embedding(ids, emb)
    cos, sin = rope_tables(torch, pos, hd, x.dtype)
    for i, l in enumerate(ls):
        y = rms(torch, x, l["ln1"])
        q, k, v = F.linear(y, l["qkv"]).split([nh * hd, nkv * hd, nkv * hd], dim=-1)
        q = rope(torch, q.view(b, t, nh, hd).transpose(1, 2), cos, sin, hd)
        k = rope(torch, k.view(b, t, nkv, hd).transpose(1, 2), cos, sin, hd)
        v = v.view(b, t, nkv, hd).transpose(1, 2)
        if cache is None:
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        else:
            kc, vc = cache[i]
            kc[:, :, start:start + t] = k
            vc[:, :, start:start + t] = v
            a = F.scaled_dot_product_attention(q, kc[:, :, :start + t], vc[:, :, :start + t], enable_gqa=True)
        x = x + F.linear(a.transpose(1, 2).reshape(b, t, nh * hd), l["o"])
        y = rms(torch, x, l["ln2"])
        g, u = F.linear(y, l["gate_up"]).chunk(2, dim=-1)
        x = x + F.linear(F.silu(g) * u, l["down"])
    return F.linear(rms(torch, x[:, -1], norm), head)


def timed(torch, dev, step, warmup, reps):
    for _ in range(warmup):
        step()
    torch.cuda.synchronize(dev)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize(dev)
        times.append((time.perf_counter() - t0) * 1e6)
    times.sort()
    return statistics.median(times), quantile(times, 0.99)


def main(argv):
    a = parse_args(argv)
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        sys.exit("measure_llm_step.py: %s; install PyTorch with CUDA on the GPU machine" % e)
    if not torch.cuda.is_available():
        sys.exit("measure_llm_step.py: no CUDA GPU visible to PyTorch (torch.cuda.is_available() is False)")
    dev = torch.device("cuda", a.device)
    dtype = torch.bfloat16
    import contextlib
    attention = contextlib.nullcontext()
    if a.attention == "fused":
        try:
            from torch.nn.attention import SDPBackend, sdpa_kernel
        except ImportError as e:
            sys.exit("measure_llm_step.py: %s; --attention fused needs torch.nn.attention (PyTorch 2.3+), or give --attention any" % e)
        attention = sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION, SDPBackend.EFFICIENT_ATTENTION])
    cfg = MODELS[a.model]
    layers = a.layers or cfg["layers"]
    model = build(torch, cfg, layers, dev, dtype)
    rows = []

    def row(phase, mode, batch, tokens, context, p50, p99):
        rows.append((a.model, layers, a.gpu_type, a.mig, 1, phase, mode, batch, tokens, context, p50, p99, a.reps))
        print("%s %s batch %d tokens %d context %d: p50 %.1f us, p99 %.1f us" % (phase, mode, batch, tokens, context, p50, p99),
              file=sys.stderr)

    try:
        with torch.inference_mode(), attention:
            measure(torch, F, a, cfg, model, layers, dev, dtype, row)
    except RuntimeError as e:
        if a.attention == "fused" and "kernel" in str(e).lower():
            sys.exit("measure_llm_step.py: no fused attention kernel takes these shapes here (%s); give --attention any "
                     "to let PyTorch fall back to its math kernel, and say so beside the results" % e)
        raise
    write(torch, a, dev, layers, rows)


def measure(torch, F, a, cfg, model, layers, dev, dtype, row):
    """Times every prefill chunk and decode point, calling row for each."""
    for n in a.prefill:
        ids = torch.randint(0, cfg["vocab"], (1, n), device=dev)
        pos = torch.arange(n, device=dev)
        p50, p99 = timed(torch, dev, lambda: forward(torch, F, cfg, model, ids, pos, None, 0), a.warmup, a.reps)
        row("prefill", "eager", 1, n, 0, p50, p99)
        del ids, pos
    for c in a.contexts:
        for b in a.batches:
            try:
                cache = [(torch.zeros(b, cfg["kv_heads"], c + 1, cfg["head_dim"], device=dev, dtype=dtype),
                          torch.zeros(b, cfg["kv_heads"], c + 1, cfg["head_dim"], device=dev, dtype=dtype))
                         for _ in range(layers)]
            except torch.cuda.OutOfMemoryError:
                print("decode batch %d context %d: the KV cache does not fit; skipped" % (b, c), file=sys.stderr)
                torch.cuda.empty_cache()
                continue
            ids = torch.randint(0, cfg["vocab"], (b, 1), device=dev)
            pos = torch.tensor([c], device=dev)

            # The step reads c cached tokens and writes the new one
            # at position c (the cache's last slot).
            def step():
                return forward(torch, F, cfg, model, ids, pos, cache, c)

            for mode in a.modes:
                run = step
                if mode == "graph":
                    s = torch.cuda.Stream(dev)
                    s.wait_stream(torch.cuda.current_stream(dev))
                    with torch.cuda.stream(s):
                        for _ in range(3):
                            step()
                    torch.cuda.current_stream(dev).wait_stream(s)
                    g = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(g):
                        step()
                    run = g.replay
                p50, p99 = timed(torch, dev, run, a.warmup, a.reps)
                row("decode", mode, b, b, c, p50, p99)
            del cache
            torch.cuda.empty_cache()


def write(torch, a, dev, layers, rows):
    with open(a.output, "w") as f:
        f.write("# conspirator LLM step measurement (realhw/torch/measure_llm_step.py)\n")
        f.write("# gpu_name: %s\n" % torch.cuda.get_device_name(dev))
        f.write("# torch: %s, cuda %s\n" % (torch.__version__, torch.version.cuda))
        f.write("# attention: %s\n" % ("fused kernels only (flash, cuDNN, memory-efficient)" if a.attention == "fused" else "any backend PyTorch picks"))
        f.write("# date: %s\n" % datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"))
        f.write("model,layers,gpu,mig,tp,phase,mode,batch,tokens,context,p50_us,p99_us,reps\n")
        for r in rows:
            f.write("%s,%d,%s,%s,%d,%s,%s,%d,%d,%d,%.3f,%.3f,%d\n" % r)
    print("wrote %s (%d rows)" % (a.output, len(rows)), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
