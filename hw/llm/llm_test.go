package llm

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/gpu"
)

func mustGPU(t *testing.T, name string) gpu.Spec {
	t.Helper()
	g, err := gpu.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func mustModel(t *testing.T, name string) Model {
	t.Helper()
	m, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func decodes(n, ctx int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = ctx
	}
	return s
}

func step(t *testing.T, model, g string, tp int, b Batch) StepTime {
	t.Helper()
	spec := mustGPU(t, g)
	eff, err := FittedEfficiency(spec)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Step(mustModel(t, model), Placement{GPU: spec, TP: tp}, b, eff)
	if err != nil {
		t.Fatalf("%s on %s TP %d: %v", model, g, tp, err)
	}
	return st
}

// KV bytes per token = 2 x layers x KV heads x head dim x 2 bytes.
func TestKVBytesPerTokenLLM(t *testing.T) {
	for _, c := range []struct {
		model string
		want  int64
	}{
		{"llama-3.1-8b", 131072}, // 2 x 32 x 8 x 128 x 2 = 128 KiB
		{"llama-3-8b", 131072},
		{"llama-2-7b", 524288},  // 2 x 32 x 32 x 128 x 2 = 512 KiB (no GQA)
		{"llama-2-13b", 819200}, // 2 x 40 x 40 x 128 x 2
		{"llama-2-70b", 327680}, // 2 x 80 x 8 x 128 x 2 = 320 KiB, not 2.5 MiB
		{"mixtral-8x7b", 131072},
		{"qwen2-7b", 57344}, // 2 x 28 x 4 x 128 x 2
		{"opt-13b", 819200}, // 2 x 40 x 40 x 128 x 2
	} {
		if got := mustModel(t, c.model).KVBytesPerToken(); got != c.want {
			t.Errorf("%s: KV bytes per token %d, want %d", c.model, got, c.want)
		}
	}
	// Per GPU: Llama-2-70B's 8 KV heads split over TP 4 (2 each), and are
	// replicated, one per GPU, beyond 8.
	m := mustModel(t, "llama-2-70b")
	if got := m.KVBytesPerTokenPerGPU(4); got != 327680/4 {
		t.Errorf("70b TP4 per GPU %d, want %d", got, 327680/4)
	}
}

func TestWeightBytesLLM(t *testing.T) {
	for _, c := range []struct {
		model string
		want  int64
	}{
		// Llama-2-7B: embedding and LM head 2 x 32000 x 4096 = 262,144,000;
		// per layer 4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096 = 202,383,360,
		// x 32 = 6,476,267,520; final norm 4096: 6,738,415,616 params,
		// x 2 bytes = 13.48 GB.
		{"llama-2-7b", 13476831232},
		// Llama-2-70B: 68,976,648,192 params (HF reports 68.98B) x 2.
		{"llama-2-70b", 137953296384},
	} {
		if got := mustModel(t, c.model).WeightBytes(); got != c.want {
			t.Errorf("%s: weight bytes %d, want %d", c.model, got, c.want)
		}
	}
}

// A step is never faster than the bytes it must read over the bandwidth.
func TestDecodeFloorLLM(t *testing.T) {
	// Hand-derived floor for llama-2-7b, one decode of 512 tokens on an
	// A100-80GB: GEMM weights per layer 4 x 4096^2 + 3 x 4096 x 11008 =
	// 202,375,168, x 32 = 6,476,005,376, + LM head 131,072,000 =
	// 6,607,077,376 params = 13,214,154,752 B; KV 512 x 524,288 =
	// 268,435,456 B; total over 2,039 GB/s = 6.6124 ms.
	st := step(t, "llama-2-7b", "a100-80gb", 1, Batch{Decode: []int{512}})
	want := (13214154752.0 + 268435456.0) / 2039e9
	if math.Abs(st.MemoryFloor-want) > 1e-12 {
		t.Errorf("floor %.6f ms, want %.6f ms", st.MemoryFloor*1e3, want*1e3)
	}
	for _, c := range []struct {
		model, gpu string
		tp         int
		b          Batch
	}{
		{"llama-2-7b", "a100-80gb", 1, Batch{Decode: []int{512}}},
		{"llama-2-7b", "a100-40gb", 2, Batch{Decode: decodes(300, 200)}}, // eager: above the graph sizes
		{"llama-2-13b", "h100-80gb", 2, Batch{Decode: decodes(32, 2000)}},
		{"llama-2-70b", "h100-80gb", 8, Batch{Decode: []int{1}}},
		{"llama-2-70b", "a100-80gb", 4, Batch{Decode: decodes(128, 1024)}},
		{"llama-3.1-8b", "h200-141gb", 1, Batch{Decode: decodes(64, 8192)}},
		{"llama-3.1-70b", "h200-141gb", 4, Batch{Decode: decodes(8, 32768)}},
		{"mixtral-8x7b", "h100-80gb", 2, Batch{Decode: decodes(8, 1024)}},
		{"qwen2-7b", "l4", 1, Batch{Decode: decodes(4, 4096)}},
		{"opt-13b", "a100-80gb", 1, Batch{Decode: decodes(16, 2048), Prefill: []Chunk{{512, 0}}}},
		{"llama-2-7b", "t4", 1, Batch{Decode: []int{100}}},
	} {
		st := step(t, c.model, c.gpu, c.tp, c.b)
		if st.Seconds < st.MemoryFloor || st.MemoryFloor <= 0 {
			t.Errorf("%s on %s TP %d: step %.4f ms below its memory floor %.4f ms", c.model, c.gpu, c.tp, st.Seconds*1e3, st.MemoryFloor*1e3)
		}
		if sum := st.Compute + st.Memory + st.Communication + st.Overhead; math.Abs(sum-st.Seconds) > 1e-9*st.Seconds {
			t.Errorf("%s: parts add to %g, step %g", c.model, sum, st.Seconds)
		}
	}
}

func TestBoundLLM(t *testing.T) {
	for _, c := range []struct {
		model, gpu string
		tp         int
		b          Batch
		want       string
	}{
		// 4096 tokens x 13.2 GFLOP each = 54 TFLOP against 13 GB of weights.
		{"llama-2-7b", "a100-80gb", 1, Batch{Prefill: []Chunk{{4096, 0}}}, "compute"},
		{"llama-3.1-8b", "h100-80gb", 1, Batch{Prefill: []Chunk{{2048, 2048}}}, "compute"},
		// One token: 13 GFLOP against 13 GB.
		{"llama-2-7b", "a100-80gb", 1, Batch{Decode: []int{128}}, "memory"},
		{"llama-3.1-8b", "h100-80gb", 1, Batch{Decode: []int{4096}}, "memory"},
	} {
		if st := step(t, c.model, c.gpu, c.tp, c.b); st.Bound != c.want {
			t.Errorf("%s on %s %+v: bound %s, want %s (compute %g memory %g comm %g overhead %g)", c.model, c.gpu, c.b, st.Bound, c.want, st.Compute, st.Memory, st.Communication, st.Overhead)
		}
	}
}

// TP > 1 adds two all-reduces per layer, on NVLink within the NVLink
// domain and on PCIe beyond it; at TP 8 a 70B decode step is far above its
// weights over bandwidth, and the all-reduces and fixed costs say why.
func TestAllReducesLLM(t *testing.T) {
	count := func(st StepTime, name string) int {
		for _, o := range st.Ops {
			if o.Name == name {
				return o.Calls
			}
		}
		return 0
	}
	b := Batch{Decode: []int{1024}}
	if st := step(t, "llama-2-7b", "a100-80gb", 1, b); st.Communication != 0 || count(st, "all_reduce_nvlink")+count(st, "all_reduce_pcie") != 0 {
		t.Errorf("TP 1 has all-reduces: %+v", st.Ops)
	}
	if got := count(step(t, "llama-2-7b", "a100-80gb", 2, b), "all_reduce_nvlink"); got != 2*32 {
		t.Errorf("TP 2 all-reduces %d, want 64 (2 per layer)", got)
	}
	// H100 NVL: an NVLink bridge joins 2 GPUs; TP 4 goes over PCIe.
	if got := count(step(t, "llama-2-7b", "h100-94gb", 4, b), "all_reduce_pcie"); got != 64 {
		t.Errorf("h100-94gb TP 4 PCIe all-reduces %d, want 64", got)
	}
	st := step(t, "llama-2-70b", "h100-80gb", 8, Batch{Decode: []int{1}})
	if st.Seconds < 2*st.MemoryFloor {
		t.Errorf("70b TP8 decode %.2f ms, floor %.2f ms: expected well above", st.Seconds*1e3, st.MemoryFloor*1e3)
	}
	// 160 all-reduces at 29.5 us latency each = 4.7 ms alone.
	if st.Communication < 160*29.5e-6 || st.Communication+st.Overhead < st.MemoryFloor {
		t.Errorf("70b TP8: communication %.2f ms + overhead %.2f ms should exceed the floor %.2f ms", st.Communication*1e3, st.Overhead*1e3, st.MemoryFloor*1e3)
	}
}

// A MIG slice gets its memory slices' share of bandwidth: a 3g.40gb on an
// A100-80GB has 4 of 8 memory slices, so the floor doubles.
func TestMIGSliceLLM(t *testing.T) {
	g := mustGPU(t, "a100-80gb")
	eff, _ := FittedEfficiency(g)
	m := mustModel(t, "llama-2-7b")
	prof, err := g.Profile("3g.40gb")
	if err != nil {
		t.Fatal(err)
	}
	b := Batch{Decode: []int{512}}
	whole, err := Step(m, Placement{GPU: g, TP: 1}, b, eff)
	if err != nil {
		t.Fatal(err)
	}
	slice, err := Step(m, Placement{GPU: g, TP: 1, Slice: prof}, b, eff)
	if err != nil {
		t.Fatal(err)
	}
	if r := slice.MemoryFloor / whole.MemoryFloor; math.Abs(r-2) > 1e-9 {
		t.Errorf("slice floor / whole floor %g, want 2", r)
	}
	if _, err := Step(m, Placement{GPU: g, TP: 2, Slice: prof}, b, eff); err == nil || !strings.Contains(err.Error(), "no peer-to-peer path") {
		t.Errorf("TP 2 across MIG instances: %v, want refused", err)
	}
	small, _ := g.Profile("1g.10gb")
	var fe *FitError
	if _, err := Step(m, Placement{GPU: g, TP: 1, Slice: small}, b, eff); !errors.As(err, &fe) {
		t.Errorf("llama-2-7b on a 1g.10gb: %v, want a FitError", err)
	}
}

func TestRefusalsLLM(t *testing.T) {
	a100 := mustGPU(t, "a100-80gb")
	eff, _ := FittedEfficiency(a100)
	for _, c := range []struct {
		name  string
		model string
		p     Placement
		b     Batch
		want  string
	}{
		{"does not fit", "llama-2-70b", Placement{GPU: a100, TP: 1}, Batch{Decode: []int{10}}, "does not fit a100-80gb at TP 1: 138.0 GB of weights"},
		{"TP not dividing heads", "llama-2-7b", Placement{GPU: a100, TP: 3}, Batch{Decode: []int{10}}, "does not divide llama-2-7b's 32 attention heads"},
		{"TP above a node", "llama-2-7b", Placement{GPU: a100, TP: 16}, Batch{Decode: []int{10}}, "must be in [1, 8]"},
		{"zero prefill", "llama-2-7b", Placement{GPU: a100, TP: 1}, Batch{Prefill: []Chunk{{0, 0}}}, "prefill chunk 0: tokens 0 must be > 0"},
		{"negative context", "llama-2-7b", Placement{GPU: a100, TP: 1}, Batch{Decode: []int{-5}}, "decode request 0: context length -5"},
		{"empty", "llama-2-7b", Placement{GPU: a100, TP: 1}, Batch{}, "empty batch"},
		{"no figures", "llama-2-7b", Placement{GPU: mustGPU(t, "b200-180gb"), TP: 1}, Batch{Decode: []int{10}}, "no sourced peak FLOP/s"},
	} {
		_, err := Step(mustModel(t, c.model), c.p, c.b, eff)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, err, c.want)
		}
	}
	// An efficiency above 1 would let a step beat its memory floor.
	over := eff
	over.GEMMMemory = 1.2
	if _, err := Step(mustModel(t, "llama-2-7b"), Placement{GPU: a100, TP: 1}, Batch{Decode: []int{10}}, over); err == nil || !strings.Contains(err.Error(), "GEMMMemory 1.2 must be in (0, 1]") {
		t.Errorf("GEMMMemory 1.2: %v", err)
	}
	// An exponent below 1 would charge more than compute plus memory;
	// NaN or infinity would make every GEMM's time NaN.
	for _, p := range []float64{0.5, -1, math.NaN(), math.Inf(1)} {
		bad := eff
		bad.GEMMExponent = p
		if _, err := Step(mustModel(t, "llama-2-7b"), Placement{GPU: a100, TP: 1}, Batch{Decode: []int{10}}, bad); err == nil || !strings.Contains(err.Error(), "GEMMExponent") || !strings.Contains(err.Error(), "must be 0 (max of compute and memory) or a finite p >= 1") {
			t.Errorf("GEMMExponent %g: %v", p, err)
		}
	}
	for _, p := range []float64{0, 1, 2.17, 8} {
		ok := eff
		ok.GEMMExponent = p
		if err := ok.Validate(); err != nil {
			t.Errorf("GEMMExponent %g: %v, want accepted", p, err)
		}
	}
	if _, err := FittedEfficiency(mustGPU(t, "p100")); err == nil {
		t.Error("p100 has no roofline figures: want refused")
	}
}

// roof combines an operator's compute time tc and memory time tm as the
// p-norm (tc^p + tm^p)^(1/p) (p 0: max), adds the floor, and labels the
// operator by the larger of the two (memory on a tie, as before).
func TestRoofPNormLLM(t *testing.T) {
	for _, c := range []struct {
		tc, tm, p, floor float64
		want             float64
		bound            string
		why              string
	}{
		{3, 4, 2, 1, 6, "memory", "sqrt(9 + 16) = 5, + 1"},
		{4, 3, 2, 1, 6, "compute", "the same, the other way round"},
		{3, 4, 0, 1, 5, "memory", "p 0: max(3, 4) = 4, + 1"},
		{3, 4, 1, 1, 8, "memory", "p 1: 3 + 4, + 1"},
		{0, 4, 2.17, 0.5, 4.5, "memory", "no FLOPs (elementwise): tm exactly"},
		{1, 1, 2, 0, math.Sqrt2, "memory", "a tie: 2^(1/2) x 1, labelled memory"},
		{1, 1, 0, 0, 1, "memory", "a tie under max"},
		{2, 2, 3.45, 0, 2 * math.Pow(2, 1/3.45), "memory", "a tie at the a100 fit's p: 2^(1/3.45) = 1.2224 x 2"},
		{1e-3, 1, 3.45, 0, 1, "memory", "one far below the other: (1 + 1e-3^3.45)^(1/3.45) - 1 = 1.3e-11"},
		{1e300, 1e300, 2, 0, math.Sqrt2 * 1e300, "memory", "no overflow: hi x (1 + (lo/hi)^p)^(1/p)"},
	} {
		op := stepCalc{}.roof("x", c.tc, c.tm, c.p, 0, 0, c.floor, 1)
		if math.Abs(op.Seconds-c.want) > 1e-10*c.want || op.Bound != c.bound || op.Floor != c.floor {
			t.Errorf("roof(tc %g, tm %g, p %g, floor %g) = %g %s, want %g %s (%s)", c.tc, c.tm, c.p, c.floor, op.Seconds, op.Bound, c.want, c.bound, c.why)
		}
		if max := math.Max(c.tc, c.tm) + c.floor; op.Seconds < max {
			t.Errorf("roof(tc %g, tm %g, p %g): %g below max(tc, tm) + floor %g", c.tc, c.tm, c.p, op.Seconds, max)
		}
	}
}

// The fitted p-norm never makes an operator or a step faster than the
// plain roofline max with the same efficiencies, so no step beats its
// memory floor; each operator is labelled by the larger of its compute and
// memory times at the peaks it runs at; and attention, elementwise
// kernels and all-reduces are timed as under the max (only GEMMs change).
func TestPNormAtLeastMaxLLM(t *testing.T) {
	for _, c := range []struct {
		model, gpu string
		tp         int
		b          Batch
	}{
		{"llama-3.1-8b", "h100-80gb", 1, Batch{Decode: []int{1024}}},
		{"llama-3.1-8b", "h200-141gb", 1, Batch{Decode: decodes(64, 1024)}},
		{"llama-3.1-8b", "h100-80gb", 1, Batch{Prefill: []Chunk{{1024, 0}}}},
		{"llama-2-70b", "a100-80gb", 4, Batch{Decode: decodes(100, 2048), Prefill: []Chunk{{300, 0}}}},
		{"mixtral-8x7b", "h100-80gb", 2, Batch{Decode: decodes(16, 1024)}},
		{"qwen2-7b", "l4", 1, Batch{Prefill: []Chunk{{130, 0}}}},
	} {
		g := mustGPU(t, c.gpu)
		eff, _ := FittedEfficiency(g)
		m := mustModel(t, c.model)
		p := Placement{GPU: g, TP: c.tp}
		st, err := Step(m, p, c.b, eff)
		if err != nil {
			t.Fatal(err)
		}
		flat := eff
		flat.GEMMExponent = 0
		mx, err := Step(m, p, c.b, flat)
		if err != nil {
			t.Fatal(err)
		}
		where := fmt.Sprintf("%s on %s TP %d %+v", c.model, c.gpu, c.tp, c.b)
		if st.Seconds < mx.Seconds || st.Seconds < st.MemoryFloor {
			t.Errorf("%s: p-norm step %.4f ms below the max's %.4f ms or the floor %.4f ms", where, st.Seconds*1e3, mx.Seconds*1e3, st.MemoryFloor*1e3)
		}
		for i, o := range st.Ops {
			if o.Seconds < mx.Ops[i].Seconds {
				t.Errorf("%s: %s %.6g s under the p-norm, %.6g s under the max", where, o.Name, o.Seconds, mx.Ops[i].Seconds)
			}
			gemm := strings.HasSuffix(o.Name, "proj") || o.Name == "router" || o.Name == "lm_head"
			if !gemm && o.Seconds != mx.Ops[i].Seconds {
				t.Errorf("%s: %s is not a GEMM but moved with the exponent: %g against %g", where, o.Name, o.Seconds, mx.Ops[i].Seconds)
			}
			if gemm {
				tc := o.FLOPs / (gemmPeak(m, g) * eff.GEMMCompute)
				tm := o.Bytes / (g.MemoryBandwidth * eff.GEMMMemory)
				if want := map[bool]string{true: "compute", false: "memory"}[tc > tm]; o.Bound != want {
					t.Errorf("%s: %s labelled %s with compute %.3g s and memory %.3g s", where, o.Name, o.Bound, tc, tm)
				}
			}
		}
	}
}

// With 1-byte (FP8) weights the GEMMs run at the FP8 peak on GPUs with FP8
// tensor cores and at the BF16 peak elsewhere (W8A16, BF16 math); attention
// stays at the BF16 peak on all. Read off a compute-bound prefill of 8192
// tokens with the exponent set to 0 (max), where up_proj's time beyond its
// floor is its FLOPs over peak x GEMMCompute and attention's its FLOPs over
// peak x AttnCompute. up_proj at 1 byte on an H100: 2 x 8192 x 4096 x
// 28,672 = 1.924 PFLOP, 1.33 ms at 1,979 TFLOPS x 0.733, against
// 385.9 MB / (3.35 TB/s x 0.787) = 0.15 ms of bytes; on an L4 11.0 ms at
// 242.5 TFLOPS x 0.72 against 1.66 ms: bound by compute on all of them.
func TestFP8PeakLLM(t *testing.T) {
	for _, c := range []struct {
		gpu            string
		dtype          int
		gemmTF, attnTF float64
		why            string
	}{
		{"h100-80gb", 1, 1979, 989.5, "FP8 tensor cores: W8A8"},
		{"h100-80gb", 2, 989.5, 989.5, "BF16 weights: BF16 peak"},
		{"h200-141gb", 1, 1979, 989.5, "same GH100 as the H100 SXM"},
		{"h100-94gb", 1, 1670.5, 835.5, "H100 NVL"},
		{"l4", 1, 242.5, 121, "Ada: FP8 tensor cores"},
		{"a100-80gb", 1, 312, 312, "Ampere: W8A16 through BF16 math"},
		{"a10", 1, 125, 125, "Ampere"},
	} {
		g := mustGPU(t, c.gpu)
		eff, _ := FittedEfficiency(g)
		eff.GEMMExponent = 0
		m := mustModel(t, "llama-3.1-8b")
		m.DTypeBytes = c.dtype
		st, err := Step(m, Placement{GPU: g, TP: 1}, Batch{Prefill: []Chunk{{8192, 0}}}, eff)
		if err != nil {
			t.Fatalf("%s %d-byte: %v", c.gpu, c.dtype, err)
		}
		seen := 0
		for _, o := range st.Ops {
			var want, effC float64
			switch o.Name {
			case "up_proj":
				want, effC = c.gemmTF, eff.GEMMCompute
			case "attn_prefill":
				want, effC = c.attnTF, eff.AttnCompute
			default:
				continue
			}
			if o.Bound != "compute" {
				t.Errorf("%s %d-byte %s: bound %s, want compute", c.gpu, c.dtype, o.Name, o.Bound)
				continue
			}
			seen++
			got := o.FLOPs / ((o.Seconds - o.Floor) * effC) / 1e12
			if math.Abs(got/want-1) > 1e-12 {
				t.Errorf("%s %d-byte %s runs at %g TFLOPS, want %g (%s)", c.gpu, c.dtype, o.Name, got, want, c.why)
			}
		}
		if seen != 2 {
			t.Errorf("%s %d-byte: found %d of up_proj and attn_prefill", c.gpu, c.dtype, seen)
		}
	}
}

const llama31Config = `{
  "architectures": ["LlamaForCausalLM"],
  "model_type": "llama",
  "hidden_size": 4096,
  "intermediate_size": 14336,
  "max_position_embeddings": 131072,
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "vocab_size": 128256
}`

func TestReadHFConfigLLM(t *testing.T) {
	m, err := ReadHFConfig(strings.NewReader(llama31Config), "Llama-3.1-8B/config.json")
	if err != nil {
		t.Fatal(err)
	}
	want := mustModel(t, "llama-3.1-8b")
	m.Name, m.Source = want.Name, want.Source
	if m != want {
		t.Errorf("read %+v\nwant %+v", m, want)
	}
	// A missing required key names the key and the file.
	bad := strings.Replace(llama31Config, `"hidden_size": 4096,`, "", 1)
	_, err = ReadHFConfig(strings.NewReader(bad), "cfg/config.json")
	if err == nil || !strings.Contains(err.Error(), "hidden_size") || !strings.Contains(err.Error(), "cfg/config.json") {
		t.Errorf("missing hidden_size: %v", err)
	}
	opt := `{"model_type": "opt", "hidden_size": 5120, "ffn_dim": 20480, "num_attention_heads": 40, "num_hidden_layers": 40, "vocab_size": 50272, "max_position_embeddings": 2048, "torch_dtype": "float16"}`
	m, err = ReadHFConfig(strings.NewReader(opt), "opt-13b.json")
	if err != nil {
		t.Fatal(err)
	}
	if m.KVBytesPerToken() != 819200 || m.Gated || !m.TiedEmbeddings {
		t.Errorf("opt: %+v", m)
	}
	mixtral := `{"model_type": "mixtral", "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 32000, "num_local_experts": 8}`
	if _, err := ReadHFConfig(strings.NewReader(mixtral), "mixtral.json"); err == nil || !strings.Contains(err.Error(), "num_experts_per_tok") {
		t.Errorf("mixtral without num_experts_per_tok: %v", err)
	}
	if _, err := ReadHFConfig(strings.NewReader(`{"model_type": "gpt2"}`), "g.json"); err == nil || !strings.Contains(err.Error(), "not supported") {
		t.Errorf("gpt2: %v", err)
	}
}

func TestLookupLLM(t *testing.T) {
	if _, err := Lookup("Meta-Llama/Llama-2-70b-hf"); err != nil {
		t.Error(err)
	}
	if _, err := Lookup("llama-2-70"); err == nil || !strings.Contains(err.Error(), "did you mean") {
		t.Errorf("typo: %v", err)
	}
	for _, n := range Names() {
		m := mustModel(t, n)
		if err := m.Validate(); err != nil || m.Source == "" || m.Name != strings.ToLower(m.Name) {
			t.Errorf("%s: %v (source %q)", n, err, m.Source)
		}
	}
	for _, n := range RooflineGPUs() {
		if _, err := FittedEfficiency(mustGPU(t, n)); err != nil {
			t.Error(err)
		}
	}
}

// A GEMM pads its token rows to the smallest power-of-two tile of at least
// 16 that holds them, up to the fitted tile, and to whole fitted tiles
// beyond it.
func TestPaddedRowsLLM(t *testing.T) {
	for _, c := range []struct {
		rows, tile, want float64
		why              string
	}{
		{1, 256, 16, "a batch-1 decode: 16, not 256"},
		{16, 256, 16, "exactly the smallest tile"},
		{17, 256, 32, "next power of two"},
		{32, 256, 32, "a batch-32 decode"},
		{33, 256, 64, "next power of two"},
		{100, 256, 128, "next power of two"},
		{129, 256, 256, "the fitted tile"},
		{256, 256, 256, "one whole tile"},
		{257, 256, 512, "two whole tiles"},
		{1024, 256, 1024, "four whole tiles"},
		{100, 128, 128, "the A100 fit's tile"},
		{300, 128, 384, "3 x 128"},
		{1, 8, 8, "a fitted tile under 16 caps the padding"},
		{1, 1, 1, "tile 1: no padding"},
		{37, 0, 37, "tile 0: no padding"},
	} {
		if got := paddedRows(c.rows, c.tile); got != c.want {
			t.Errorf("paddedRows(%g, %g) = %g, want %g (%s)", c.rows, c.tile, got, c.want, c.why)
		}
	}
}

// llama31Weights and llama31KV are Llama-3.1-8B's bytes one decode step
// reads at TP 1 with 2-byte weights and one request of 1024 tokens of
// context. GEMM weights per layer: qkv 4096 x (4096 + 2 x 1024) =
// 25,165,824; o 4096 x 4096 = 16,777,216; gate and up 4096 x 2 x 14336 =
// 117,440,512; down 14336 x 4096 = 58,720,256; together 218,103,808, x 32
// layers = 6,979,321,856; LM head 4096 x 128,256 = 525,336,576; in all
// 7,504,658,432 params x 2 B = 15,009,316,864 B (the embedding table is
// looked up by row, not read). KV: 1024 tokens x 2 (K, V) x 32 layers x 8
// KV heads x 128 x 2 B = 1024 x 131,072 = 134,217,728 B.
const (
	llama31Weights = 15009316864.0
	llama31KV      = 134217728.0
)

// A batch-1 decode reads every weight once for one token's FLOPs: it is
// bound by memory on every GPU, whatever the GEMMs' fitted tile, and with
// 1-byte (FP8) weights too: on GPUs with FP8 tensor cores the FP8 peak
// keeps the padded FLOPs' weight against the bytes as at 2 bytes, and on
// the others (W8A16 at the BF16 peak) it doubles, to at most a quarter
// (V100). Its time is the bytes over the fitted bandwidths, the GEMMs'
// times raised by their p-norm, plus the fixed costs:
//
//	GEMMs        (weights + 1 x (k + n) activations x 32 layers + LM head) / (bw x GEMMMemory) x (1 + r^p)^(1/p)
//	attention    32 x (1024 x 4096 B of KV + 16,384 B of Q and out) / (bw x AttnMemory)
//	elementwise  6,594,560 B (2-byte) / (bw x ElementwiseMemory)
//	overhead     GraphStep + 32 x (4 GEMM + 6 elementwise + 1 attention floors)
//	             + embedding and final norm floors + LM head floor
//
// where r = tc/tm of a GEMM: 16 padded rows x 2 FLOPs per weight over the
// FLOP rate, against the weight's 2 bytes over the byte rate, that is
// 16 x (bw x GEMMMemory) / (peak x GEMMCompute), a little less for the
// activations' bytes. The activations (69,632 elements a layer, 4.5 MB in
// all) and the elementwise bytes are under 0.1% of the weights, r^p under
// 1%, and the fitted memory efficiencies are 0.787 (h100 fit) and 0.773
// (a100 fit), so the time over the overhead is 1.27-1.30 x (weights + KV)
// / bw: within [1, 1.6].
// Worked for the H200 (4.8 TB/s, 989.5 TFLOPS; h100 fit): bw x GEMMMemory
// = 3.7776 TB/s, peak x GEMMCompute = 725.30 TFLOPS, r = 16 x 3.7776 /
// 725.30 = 0.0833, (1 + 0.0833^2.17)^(1/2.17) = 1.00209; GEMMs
// 15,014,038,016 B / 3.7776 TB/s = 3.97449 ms x 1.00209 = 3.98281 ms;
// attention 134,742,016 B / 3.7776 TB/s = 0.03567 ms; elementwise
// 6,594,560 B / 2.856 TB/s = 0.00231 ms; overhead 0.5 + 32 x (4 x 4.5 +
// 6 x 2.5 + 4.5) us + (2 x 2.5 + 4.5) us = 1.7095 ms; step 5.7303 ms,
// against a floor of 15,143,534,592 B / 4.8 TB/s = 3.1549 ms. (Under the
// max(compute, memory) fit, GEMMMemory 0.720 and floors of 6 us, it was
// 6.3366 ms.)
func TestBatchOneDecodeMemoryBoundLLM(t *testing.T) {
	h200 := step(t, "llama-3.1-8b", "h200-141gb", 1, Batch{Decode: []int{1024}})
	if want := 5.7303e-3; math.Abs(h200.Seconds-want) > 1e-7 {
		t.Errorf("h200 batch-1 decode %.5f ms, want %.5f ms (hand-derived above)", h200.Seconds*1e3, want*1e3)
	}
	tested := map[string]bool{}
	for _, dt := range []int{2, 1} {
		m := mustModel(t, "llama-3.1-8b")
		m.DTypeBytes = dt
		// Weights and KV scale with the bytes per value.
		w, kv := llama31Weights*float64(dt)/2, llama31KV*float64(dt)/2
		for _, name := range RooflineGPUs() {
			g := mustGPU(t, name)
			eff, err := FittedEfficiency(g)
			if err != nil {
				t.Fatal(err)
			}
			st, err := Step(m, Placement{GPU: g, TP: 1}, Batch{Decode: []int{1024}}, eff)
			var fe *FitError
			if errors.As(err, &fe) {
				continue // t4 and v100 (16 GB) hold the 1-byte weights only
			}
			if err != nil {
				t.Fatalf("%s %d-byte: %v", name, dt, err)
			}
			tested[name] = true
			where := fmt.Sprintf("llama-3.1-8b (%d-byte) on %s, decode batch 1", dt, name)
			if st.Bound != "memory" || st.Compute != 0 {
				t.Errorf("%s: bound %s, compute %.3f ms: want memory-bound with no compute-bound operator", where, st.Bound, st.Compute*1e3)
			}
			if st.WeightBytesRead != w || st.KVBytesRead != kv {
				t.Errorf("%s: reads %.0f B of weights and %.0f B of KV, want %.0f and %.0f", where, st.WeightBytesRead, st.KVBytesRead, w, kv)
			}
			L := 32.0
			overhead := eff.GraphStep + L*(4*eff.GEMMFloor+6*eff.ElementwiseFloor+eff.AttnFloor) + 2*eff.ElementwiseFloor + eff.GEMMFloor
			if math.Abs(st.Overhead-overhead) > 1e-12 {
				t.Errorf("%s: overhead %.4f ms, want %.4f ms", where, st.Overhead*1e3, overhead*1e3)
			}
			floor := (w + kv) / g.MemoryBandwidth
			if r := (st.Seconds - overhead) / floor; r < 1 || r > 1.6 {
				t.Errorf("%s: %.3f ms = overhead %.3f ms + %.2f x (weights + KV) / bandwidth %.3f ms, want 1 to 1.6 x", where, st.Seconds*1e3, overhead*1e3, r, floor*1e3)
			}
		}
	}
	for _, name := range []string{"a100-40gb", "a100-80gb", "h100-80gb", "h100-94gb", "h200-141gb"} {
		if !tested[name] {
			t.Errorf("%s has no roofline figures or was skipped: the batch-1 check must cover it", name)
		}
	}
}

// From batch 1 to 128 a decode step reads the same weights, more KV and
// more activations, and does more FLOPs: its time rises, and the share of
// it its FLOPs would take at the fitted GEMM efficiency rises with the
// padded rows (16, 32, 128). Batches 1 and 8 both pad to 16 rows, so only
// their time is compared. At 1024 prefill tokens the step is bound by
// compute.
func TestDecodeComputeShareRisesLLM(t *testing.T) {
	for _, g := range []string{"a100-80gb", "h100-80gb", "h100-94gb", "h200-141gb"} {
		spec := mustGPU(t, g)
		eff, _ := FittedEfficiency(spec)
		flopShare := func(st StepTime) float64 {
			var f float64
			for _, o := range st.Ops {
				f += o.FLOPs * float64(o.Calls)
			}
			return f / (spec.PeakDenseBF16 * eff.GEMMCompute) / st.Seconds
		}
		var prev StepTime
		for i, n := range []int{1, 8, 32, 128} {
			st := step(t, "llama-3.1-8b", g, 1, Batch{Decode: decodes(n, 1024)})
			if st.WeightBytesRead != llama31Weights {
				t.Errorf("%s batch %d: weights read %.0f B, want %.0f B once a step whatever the batch", g, n, st.WeightBytesRead, llama31Weights)
			}
			if i > 0 {
				if st.Seconds <= prev.Seconds {
					t.Errorf("%s: batch %d step %.3f ms not above batch %d's %.3f ms", g, n, st.Seconds*1e3, prev.Tokens, prev.Seconds*1e3)
				}
				if n > 8 && flopShare(st) <= flopShare(prev) {
					t.Errorf("%s: FLOP share %.3f at batch %d not above %.3f at batch %d", g, flopShare(st), n, flopShare(prev), prev.Tokens)
				}
			}
			prev = st
		}
		if st := step(t, "llama-3.1-8b", g, 1, Batch{Prefill: []Chunk{{1024, 0}}}); st.Bound != "compute" {
			t.Errorf("%s prefill 1024: bound %s, want compute", g, st.Bound)
		}
	}
}

// A host slower than the GPU bounds the step: max(GPU time, host time),
// not their sum (Efficiency.Host). Hand-derived for Llama-2-70B (80
// layers) at TP 8 on H100s: one eager decode at 600 us a layer and 400 us a
// sequence gives 80 x 0.6 + 0.4 = 48.4 ms, far above the GPU's ~15 ms; a
// decode replaying a CUDA graph launches no layer, so only the sequence's
// 0.4 ms counts and the GPU bounds it; a host faster than the GPU changes
// nothing.
func TestHostDispatchBoundsStep(t *testing.T) {
	m, err := Lookup("llama-2-70b")
	if err != nil {
		t.Fatal(err)
	}
	g, err := gpu.Lookup("h100-80gb")
	if err != nil {
		t.Fatal(err)
	}
	base, err := FittedEfficiency(g)
	if err != nil {
		t.Fatal(err)
	}
	p := Placement{GPU: g, TP: 8}
	one := Batch{Decode: []int{576}}
	eager := base
	eager.GraphBatchSizes = nil
	gpuOnly, err := Step(m, p, one, eager)
	if err != nil {
		t.Fatal(err)
	}
	slow := eager
	slow.Host = HostDispatch{PerLayer: 600e-6, PerSequence: 400e-6}
	st, err := Step(m, p, one, slow)
	if err != nil {
		t.Fatal(err)
	}
	if want := 80*600e-6 + 400e-6; math.Abs(st.Seconds-want) > 1e-12 || st.Bound != "host" || math.Abs(st.HostSeconds-want) > 1e-12 {
		t.Errorf("host-bound eager decode: %.6f ms bound %s (host %.6f ms), want %.6f ms bound host", st.Seconds*1e3, st.Bound, st.HostSeconds*1e3, want*1e3)
	}
	if got := st.Compute + st.Memory + st.Communication + st.Overhead + st.Host; math.Abs(got-st.Seconds) > 1e-12 {
		t.Errorf("parts add to %.6f ms, step %.6f ms", got*1e3, st.Seconds*1e3)
	}
	if math.Abs(st.Host-(st.Seconds-gpuOnly.Seconds)) > 1e-12 {
		t.Errorf("host wait %.6f ms, want step - GPU time %.6f ms", st.Host*1e3, (st.Seconds-gpuOnly.Seconds)*1e3)
	}
	graphSlow := base
	graphSlow.Host = slow.Host
	gr, err := Step(m, p, one, graphSlow)
	if err != nil {
		t.Fatal(err)
	}
	grBase, _ := Step(m, p, one, base)
	if !gr.CUDAGraph || gr.Seconds != grBase.Seconds || gr.Host != 0 || math.Abs(gr.HostSeconds-400e-6) > 1e-15 {
		t.Errorf("graph decode under the slow host: %.6f ms (host part %.6f, host time %.6f), want the GPU's %.6f ms and 0.4 ms of host", gr.Seconds*1e3, gr.Host*1e3, gr.HostSeconds*1e3, grBase.Seconds*1e3)
	}
	fast := eager
	fast.Host = HostDispatch{PerLayer: 1e-6, PerSequence: 1e-6}
	if f, _ := Step(m, p, one, fast); f.Seconds != gpuOnly.Seconds || f.Host != 0 {
		t.Errorf("a host faster than the GPU: %.6f ms, want the GPU's %.6f ms", f.Seconds*1e3, gpuOnly.Seconds*1e3)
	}
	bad := base
	bad.Host.PerLayer = -1e-6
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "Host.PerLayer") {
		t.Errorf("negative Host.PerLayer: %v, want an error naming it", err)
	}
}
