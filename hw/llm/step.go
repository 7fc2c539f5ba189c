package llm

import (
	"fmt"
	"math"
	"sort"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/mig"
)

// Chunk is one request's prefill work in a step: Tokens new prompt tokens
// after ContextBefore tokens already in its KV cache (chunked prefill).
type Chunk struct {
	Tokens, ContextBefore int
}

// Batch is one iteration's work: prefill chunks and decoding requests, each
// decode given by its context length (the tokens its attention reads,
// including the one it adds).
type Batch struct {
	Prefill []Chunk
	Decode  []int
}

// Tokens is the number of tokens the step runs through the layers.
func (b Batch) Tokens() int {
	n := len(b.Decode)
	for _, c := range b.Prefill {
		n += c.Tokens
	}
	return n
}

// Placement is where the model runs: TP GPUs of one type, or one MIG
// instance of it (Slice; TP must then be 1).
type Placement struct {
	GPU   gpu.Spec
	TP    int
	Slice *mig.Profile
}

// MemoryUtilization is the share of a GPU's memory the weights and KV may
// take: vLLM's default gpu_memory_utilization (0.9), the rest being the
// CUDA context, activations and fragmentation.
const MemoryUtilization = 0.9

// MaxTP is the largest tensor-parallel group modelled: one 8-GPU node.
const MaxTP = 8

// Op is one operator of the step: its work per call, time per call, and
// how many calls the step makes (Layers for a per-layer operator).
type Op struct {
	Name    string
	Calls   int
	FLOPs   float64 // per call, per GPU
	Bytes   float64 // per call, per GPU
	Weights float64 // of Bytes, weights read
	Seconds float64 // per call, floor included
	Floor   float64 // of Seconds, the kernel's fixed cost
	Bound   string  // "compute", "memory", "communication", "overhead" or "host"
}

// StepTime is one iteration's time and what it is made of. The five parts
// add up to Seconds.
type StepTime struct {
	Seconds float64
	// Compute is the time of operators whose FLOPs bound them; Memory of
	// those whose bytes bound them, each operator's whole time beyond
	// its floor (a GEMM's share of the other part that the kernel does
	// not hide included: Efficiency.GEMMExponent); Communication the
	// all-reduces;
	// Overhead the fixed costs: kernel floors, per-step cost
	// (scheduling, sampling, graph replay); Host the time the GPU waits
	// for a host slower than itself (Efficiency.Host).
	Compute, Memory, Communication, Overhead, Host float64
	Bound                                          string
	Ops                                            []Op
	// HostSeconds is the host's time to drive the step (Efficiency.Host):
	// the step takes at least this.
	HostSeconds float64

	Tokens       int // tokens through the layers, padding included
	PaddedTokens int // of Tokens, padding to a captured CUDA-graph size
	CUDAGraph    bool
	// WeightBytesRead and KVBytesRead are what one GPU reads from memory
	// (weights the step touches: all layers, the experts routed to and
	// the LM head, not the embedding table); MemoryFloor is their sum over
	// the GPU's (or slice's) bandwidth: no step is faster.
	WeightBytesRead, KVBytesRead float64
	MemoryFloor                  float64
	KVBytesPerToken              int64 // the model's, all GPUs together
}

// resources is what one GPU of the placement offers.
type resources struct {
	// flops is the BF16 (FP16) tensor peak, which attention runs at;
	// gemmFlops the peak of the weights' dtype, which the GEMMs run at.
	flops, gemmFlops float64
	bw, mem          float64
	link             float64 // per direction, B/s, for the all-reduces
	linkName         string
}

// gemmPeak is the tensor-core rate m's GEMMs run at on g. With 1-byte
// (FP8) weights on a GPU with FP8 tensor cores (Ada, Hopper) it is the FP8
// peak, as serving stacks run FP8 checkpoints W8A8 there (vLLM: FP8
// computation on compute capability >= 8.9). Elsewhere it is the BF16
// peak: vLLM runs them as weight-only W8A16 through its FP8 Marlin kernel,
// which dequantizes the weights to BF16/FP16 and does BF16 math (Ampere,
// Turing), so FP8 halves the bytes read but not the time per FLOP. Two-
// and 4-byte weights run at the BF16 peak, as before. A 1-byte model read
// as torch_dtype int8 is timed alike: the INT8 tensor rate equals the FP8
// one on Ada and Hopper; on Ampere, INT8 W8A8 kernels could run at twice
// the BF16 peak, which this does not credit.
func gemmPeak(m Model, g gpu.Spec) float64 {
	if m.DTypeBytes == 1 && g.PeakDenseFP8 > 0 {
		return g.PeakDenseFP8
	}
	return g.PeakDenseBF16
}

func placementResources(m Model, p Placement) (resources, error) {
	g := p.GPU
	if g.PeakDenseBF16 <= 0 || g.MemoryBandwidth <= 0 {
		return resources{}, fmt.Errorf("gpu %s has no sourced peak FLOP/s or memory bandwidth (hw/gpu Spec.PeakDenseBF16, MemoryBandwidth), so the step model cannot time it; use one of %v", g.Name, RooflineGPUs())
	}
	if p.TP < 1 || p.TP > MaxTP {
		return resources{}, fmt.Errorf("tensor-parallel degree %d must be in [1, %d] (one node)", p.TP, MaxTP)
	}
	if m.Heads%p.TP != 0 {
		return resources{}, fmt.Errorf("tensor-parallel degree %d does not divide %s's %d attention heads; use a divisor of %d", p.TP, m.Name, m.Heads, m.Heads)
	}
	if m.KVHeads%p.TP != 0 && p.TP%m.KVHeads != 0 {
		return resources{}, fmt.Errorf("tensor-parallel degree %d neither divides nor is a multiple of %s's %d KV heads; use a divisor of %d", p.TP, m.Name, m.KVHeads, m.KVHeads)
	}
	r := resources{flops: g.PeakDenseBF16, gemmFlops: gemmPeak(m, g), bw: g.MemoryBandwidth, mem: float64(g.MemoryBytes)}
	if p.Slice != nil {
		if p.TP > 1 {
			return resources{}, fmt.Errorf("tensor parallelism across MIG instances is refused: MIG instances have no peer-to-peer path (no NVLink or PCIe P2P between them); use TP 1 on slice %s or whole GPUs", p.Slice.Name)
		}
		if g.MIG == nil {
			return resources{}, fmt.Errorf("gpu %s has no MIG, so no slice %s; use the whole GPU", g.Name, p.Slice.Name)
		}
		cs := g.MIG.ComputeShare(p.Slice, mig.BasisSMs)
		r.flops *= cs
		r.gemmFlops *= cs
		share := float64(p.Slice.MemSlices) / float64(g.MIG.MemorySlices)
		r.bw *= share
		r.mem = float64(p.Slice.MemoryBytes)
	}
	if p.TP > 1 {
		switch {
		case p.TP <= g.NVLinkPeers && g.NVLinkBandwidth > 0:
			r.link, r.linkName = g.NVLinkBandwidth, "nvlink"
		case g.PCIeBandwidth > 0:
			r.link, r.linkName = g.PCIeBandwidth, "pcie"
		default:
			return resources{}, fmt.Errorf("gpu %s has no sourced GPU-to-GPU bandwidth, so TP %d cannot be timed; use TP 1", g.Name, p.TP)
		}
	}
	return r, nil
}

// RooflineGPUs lists the catalog GPUs with roofline figures.
func RooflineGPUs() []string {
	var out []string
	for _, n := range gpu.Names() {
		if s, _ := gpu.Lookup(n); s.PeakDenseBF16 > 0 && s.MemoryBandwidth > 0 {
			out = append(out, n)
		}
	}
	return out
}

// kvHeadsPerGPU: KV heads are split over TP, replicated when TP exceeds them.
func kvHeadsPerGPU(m Model, tp int) int {
	if m.KVHeads >= tp {
		return m.KVHeads / tp
	}
	return 1
}

// KVBytesPerTokenPerGPU is one GPU's share of a token's KV cache at TP tp.
func (m Model) KVBytesPerTokenPerGPU(tp int) int64 {
	return 2 * int64(m.Layers) * int64(kvHeadsPerGPU(m, tp)) * int64(m.HeadDim) * int64(m.DTypeBytes)
}

// FitError is a model that does not fit the placement's memory.
type FitError struct{ Msg string }

func (e *FitError) Error() string { return e.Msg }

// CheckFit says whether the weights and the batch's KV fit one GPU's (or
// the slice's) memory at the placement's TP.
func CheckFit(m Model, p Placement, b Batch) error {
	r, err := placementResources(m, p)
	if err != nil {
		return err
	}
	return checkFit(m, p, b, r)
}

func checkFit(m Model, p Placement, b Batch, r resources) error {
	var ctx int64
	for _, c := range b.Prefill {
		ctx += int64(c.ContextBefore + c.Tokens)
	}
	for _, l := range b.Decode {
		ctx += int64(l)
	}
	w := float64(m.WeightBytes()) / float64(p.TP)
	kv := float64(ctx * m.KVBytesPerTokenPerGPU(p.TP))
	capacity := r.mem * MemoryUtilization
	if w+kv > capacity {
		where := p.GPU.Name
		if p.Slice != nil {
			where += " slice " + p.Slice.Name
		}
		return &FitError{fmt.Sprintf("%s does not fit %s at TP %d: %.1f GB of weights per GPU + %.2f GB of KV for this batch's %d tokens = %.1f GB > %.1f GB usable (%.0f%% of %.1f GB); use a larger TP, a larger GPU or slice, or a smaller batch",
			m.Name, where, p.TP, w/1e9, kv/1e9, ctx, (w+kv)/1e9, capacity/1e9, MemoryUtilization*100, r.mem/1e9)}
	}
	return nil
}

func validateBatch(b Batch) error {
	if len(b.Prefill) == 0 && len(b.Decode) == 0 {
		return fmt.Errorf("empty batch: give prefill chunks or decode requests")
	}
	for i, c := range b.Prefill {
		if c.Tokens <= 0 {
			return fmt.Errorf("prefill chunk %d: tokens %d must be > 0", i, c.Tokens)
		}
		if c.ContextBefore < 0 {
			return fmt.Errorf("prefill chunk %d: context before %d must be >= 0", i, c.ContextBefore)
		}
	}
	for i, l := range b.Decode {
		if l <= 0 {
			return fmt.Errorf("decode request %d: context length %d must be > 0", i, l)
		}
	}
	return nil
}

// graphPadding returns the CUDA-graph batch size a decode-only batch of n
// requests replays, or 0 when it runs eagerly.
func graphPadding(n int, sizes []int) int {
	for _, s := range sizes {
		if n <= s {
			return s
		}
	}
	return 0
}

// stepCalc times operators on one GPU of a placement.
type stepCalc struct {
	m   Model
	tp  int
	r   resources
	eff Efficiency
	dt  float64
}

// gemm times a [rows x k] by [k x n] product with weights of k x n.
func (c stepCalc) gemm(name string, rows, k, n float64, calls int) Op {
	// FLOPs on the padded rows; bytes on the real ones: the weights are
	// read once a call whatever the rows, and padding is never loaded.
	f := 2 * paddedRows(rows, c.eff.GEMMTile) * k * n
	b := (k*n + rows*k + rows*n) * c.dt
	op := c.gemmRoof(name, f, b, calls)
	op.Weights = k * n * c.dt
	return op
}

// gemmRoof times a GEMM of f FLOPs and b bytes at the weights' dtype peak,
// its compute and memory times combined with the fitted GEMMExponent.
func (c stepCalc) gemmRoof(name string, f, b float64, calls int) Op {
	return c.roof(name, f/(c.r.gemmFlops*c.eff.GEMMCompute), b/(c.r.bw*c.eff.GEMMMemory), c.eff.GEMMExponent, f, b, c.eff.GEMMFloor, calls)
}

// minGEMMTile is the fewest token rows a GEMM is taken to compute. The
// token count is the tensor-core instruction's N (PyTorch's linear calls
// cuBLAS with the weight as the first operand), which Ampere's mma.sync
// m16n8k16 and Hopper's wgmma (N a multiple of 8) take in steps of 8; 16
// is E, one step up to cover kernels tiled at 8 or 16 alike, not fitted:
// below GEMMTile rows every profiled GEMM is bound by reading its weights,
// and the padded FLOPs add to its time only through the p-norm, by 0.1%
// or less at 16 rows on the profiled GPUs. The fit set does tell this
// padding from whole tiles: its GEMM loss is 0.0088 against 0.0095 on the
// H100 and 0.0053 against 0.0065 on the A100, same efficiencies
// (bench/llmfit). At 16 rows the padded FLOPs take at most a quarter of
// the weights' read time on every catalog GPU with roofline figures (the
// most: V100, 1-byte weights at its FP16 peak, 0.25), which the p-norm
// turns into 0.2% more time.
const minGEMMTile = 16

// paddedRows is the rows a GEMM of rows token rows computes, partial tiles
// counted whole. Up to the fitted tile, the kernel is taken (E) to run on
// the smallest power-of-two token tile of at least minGEMMTile that holds
// the rows: cuBLAS's and CUTLASS's heuristics give a skinny product a
// narrow-tile, split-K or GEMV-like kernel, not the large tile tuned for
// big ones, so a decode of 1 to 32 tokens does not pay for a whole tile
// of FLOPs (with the 256-row tile of the earlier max(compute, memory) fit
// that made a batch-1 decode on an H200 compute-bound: 256 rows of FP16
// FLOPs took 1.2x the weights' read time at 4.8 TB/s). Above it, the rows
// round up to whole fitted tiles, as fitted on Vidur's profiles. Tile 0 or
// 1: no padding.
func paddedRows(rows, tile float64) float64 {
	if tile <= 1 {
		return rows
	}
	if rows > tile {
		return math.Ceil(rows/tile) * tile
	}
	p := float64(minGEMMTile)
	for p < rows {
		p *= 2
	}
	return math.Min(p, tile)
}

// elementwise times an operator that streams bytes once.
func (c stepCalc) elementwise(name string, bytes float64, calls int) Op {
	return c.roof(name, 0, bytes/(c.r.bw*c.eff.ElementwiseMemory), 0, 0, bytes, c.eff.ElementwiseFloor, calls)
}

// attention times an attention kernel at the BF16 peak with the plain
// roofline max(tc, tm), not the GEMMs' p-norm: its efficiencies are
// estimates (E) of whole FlashAttention kernels' achieved throughput,
// which already counts the loads they fail to hide, and no attention
// profile was at hand to fit an exponent on. It stays at the BF16 peak
// with FP8 weights: serving stacks keep activations in BF16 and, with an
// FP8 KV cache, dequantize K and V in the kernel (E). sim/llmserve's
// decode timer replays this expression bit for bit.
func (c stepCalc) attention(name string, f, b float64, calls int) Op {
	return c.roof(name, f/(c.r.flops*c.eff.AttnCompute), b/(c.r.bw*c.eff.AttnMemory), 0, f, b, c.eff.AttnFloor, calls)
}

// roof makes the operator of compute time tc and memory time tm, combined
// as (tc^p + tm^p)^(1/p) (p 0: max(tc, tm)), plus the kernel floor. Its
// Bound is the larger of the two, and the step charges the whole combined
// time to that part (Step): the time neither hides is charged to the one
// that bounds the kernel.
func (c stepCalc) roof(name string, tc, tm, p, f, b, floor float64, calls int) Op {
	op := Op{Name: name, Calls: calls, FLOPs: f, Bytes: b, Floor: floor}
	hi, lo := tm, tc
	op.Bound = "memory"
	if tc > tm {
		hi, lo, op.Bound = tc, tm, "compute"
	}
	op.Seconds = hi + floor
	if p > 0 && lo > 0 {
		// hi x (1 + (lo/hi)^p)^(1/p): the p-norm without overflow,
		// exactly hi when lo is 0.
		op.Seconds = hi*math.Pow(1+math.Pow(lo/hi, p), 1/p) + floor
	}
	return op
}

// LayerLinearOps returns one decoder block's operators other than
// attention and the all-reduces, for tokens tokens, one call each: the
// operators Vidur's mlp.csv profiles (the fit compares them one by one).
func LayerLinearOps(m Model, p Placement, tokens int, eff Efficiency) ([]Op, error) {
	r, err := placementResources(m, p)
	if err != nil {
		return nil, err
	}
	c := stepCalc{m: m, tp: p.TP, r: r, eff: eff, dt: float64(m.DTypeBytes)}
	return c.linear(float64(tokens), 1), nil
}

func (c stepCalc) linear(t float64, calls int) []Op {
	m, tp := c.m, float64(c.tp)
	h, hd := float64(m.Hidden), float64(m.HeadDim)
	hq := float64(m.Heads) / tp
	kvh := float64(kvHeadsPerGPU(m, c.tp))
	act := t * h * c.dt // one activation tensor
	ops := []Op{
		c.elementwise("input_norm", 2*act+h*c.dt, calls),
		c.gemm("qkv_proj", t, h, (hq+2*kvh)*hd, calls),
		c.elementwise("rope", 2*t*(hq+kvh)*hd*c.dt, calls),
		c.gemm("o_proj", t, hq*hd, h, calls),
		c.elementwise("post_norm", 2*act+h*c.dt, calls),
	}
	up := 1.0
	if m.Gated {
		up = 2
	}
	inter := float64(m.Intermediate) / tp
	if !m.MoE() {
		ops = append(ops,
			c.gemm("up_proj", t, h, up*inter, calls),
			c.elementwise("act", (up+1)*t*inter*c.dt, calls),
			c.gemm("down_proj", t, inter, h, calls))
	} else {
		// Tokens go to ExpertsPerToken experts each; the step reads the
		// weights of the experts its tokens touch (uniform routing:
		// E x (1 - (1 - k/E)^T) of them).
		e, k := float64(m.Experts), float64(m.ExpertsPerToken)
		touched := e * (1 - math.Pow(1-k/e, t))
		rows := t * k
		ops = append(ops, c.gemm("router", t, h, e, calls))
		upOp := c.gemm("expert_up_proj", rows, h, up*inter, calls)
		downOp := c.gemm("expert_down_proj", rows, inter, h, calls)
		for i, o := range []*Op{&upOp, &downOp} {
			w := h * up * inter
			if i == 1 {
				w = h * inter
			}
			// gemm counted one expert's weights; the step reads touched.
			extra := (touched - 1) * w * c.dt
			weights := o.Weights + extra
			*o = c.gemmRoof(o.Name, o.FLOPs, o.Bytes+extra, calls)
			o.Weights = weights
		}
		ops = append(ops, upOp, c.elementwise("act", (up+1)*rows*inter*c.dt, calls), downOp)
	}
	ops = append(ops, c.elementwise("add", 3*act, 2*calls))
	return ops
}

// Step returns the time of one iteration of batch b of model m on
// placement p with efficiencies eff (FittedEfficiency for the GPU type).
func Step(m Model, p Placement, b Batch, eff Efficiency) (StepTime, error) {
	if err := m.Validate(); err != nil {
		return StepTime{}, err
	}
	if err := eff.Validate(); err != nil {
		return StepTime{}, err
	}
	if err := validateBatch(b); err != nil {
		return StepTime{}, err
	}
	r, err := placementResources(m, p)
	if err != nil {
		return StepTime{}, err
	}
	if err := checkFit(m, p, b, r); err != nil {
		return StepTime{}, err
	}
	c := stepCalc{m: m, tp: p.TP, r: r, eff: eff, dt: float64(m.DTypeBytes)}
	tp := float64(p.TP)
	h, hd := float64(m.Hidden), float64(m.HeadDim)
	hq := float64(m.Heads) / tp
	kvh := float64(kvHeadsPerGPU(m, p.TP))
	kvLayer := 2 * kvh * hd * c.dt // one token's K and V in one layer, one GPU
	L := m.Layers

	st := StepTime{Tokens: b.Tokens(), KVBytesPerToken: m.KVBytesPerToken()}
	if len(b.Prefill) == 0 {
		if pad := graphPadding(len(b.Decode), eff.GraphBatchSizes); pad > 0 {
			st.CUDAGraph = true
			st.PaddedTokens = pad - len(b.Decode)
			st.Tokens = pad
		}
	}
	t := float64(st.Tokens)

	ops := []Op{c.elementwise("embedding", 2*t*h*c.dt, 1)}
	ops = append(ops, c.linear(t, L)...)
	// Attention: prefill chunks in one kernel, decodes in another.
	if len(b.Prefill) > 0 {
		var f, by float64
		for _, ch := range b.Prefill {
			n, before := float64(ch.Tokens), float64(ch.ContextBefore)
			// Causal: query i sees before + i keys: n x (before + (n+1)/2)
			// products, QK^T and PV, 2 FLOPs each, per head.
			f += 4 * n * (before + (n+1)/2) * hq * hd
			// Reads the KV before it and its own, writes its own; Q in, out.
			by += (before+n)*kvLayer + n*kvLayer + 2*n*hq*hd*c.dt
			st.KVBytesRead += before * kvLayer * float64(L)
		}
		ops = append(ops, c.attention("attn_prefill", f, by, L))
	}
	if len(b.Decode) > 0 {
		var f, by float64
		for _, l := range b.Decode {
			f += 4 * float64(l) * hq * hd
			by += float64(l)*kvLayer + 2*hq*hd*c.dt
			st.KVBytesRead += float64(l) * kvLayer * float64(L)
		}
		ops = append(ops, c.attention("attn_decode", f, by, L))
	}
	if p.TP > 1 {
		// Two all-reduces per layer (after O and after down), ring:
		// each GPU sends and receives 2(n-1)/n of the tensor.
		bytes := t * h * c.dt
		sec := eff.AllReduceLatency + 2*(tp-1)/tp*bytes/(r.link*eff.AllReduceBus)
		ops = append(ops, Op{Name: "all_reduce_" + r.linkName, Calls: 2 * L, Bytes: bytes, Seconds: sec, Bound: "communication"})
	}
	ops = append(ops, c.elementwise("final_norm", 2*t*h*c.dt+h*c.dt, 1))
	// The LM head runs on the last token of each sequence only.
	seqs := float64(len(b.Prefill) + len(b.Decode))
	if st.CUDAGraph {
		seqs = t
	}
	ops = append(ops, c.gemm("lm_head", seqs, h, float64(m.Vocab)/tp, 1))
	if st.CUDAGraph {
		ops = append(ops, Op{Name: "graph_replay", Calls: 1, Seconds: eff.GraphStep, Bound: "overhead"})
	} else {
		ops = append(ops, Op{Name: "step_fixed", Calls: 1, Seconds: eff.EagerStep, Bound: "overhead"})
	}
	for _, o := range ops {
		total := o.Seconds * float64(o.Calls)
		st.Seconds += total
		switch o.Bound {
		case "compute", "memory":
			work := (o.Seconds - o.Floor) * float64(o.Calls)
			st.Overhead += o.Floor * float64(o.Calls)
			if o.Bound == "compute" {
				st.Compute += work
			} else {
				st.Memory += work
			}
		case "communication":
			st.Communication += total
		default:
			st.Overhead += total
		}
	}
	// The GPU waits for a host slower than itself: the step is the longer
	// of the two (Efficiency.Host), the wait an operator of its own.
	st.HostSeconds = eff.Host.Seconds(L, len(b.Prefill)+len(b.Decode), st.CUDAGraph)
	if wait := st.HostSeconds - st.Seconds; wait > 0 {
		ops = append(ops, Op{Name: "host_wait", Calls: 1, Seconds: wait, Bound: "host"})
		st.Seconds += wait
		st.Host = wait
	}
	st.Ops = ops

	// Weights the step reads: every layer's (experts touched) and the
	// LM head; the embedding table is looked up by row.
	for _, o := range ops {
		st.WeightBytesRead += o.Weights * float64(o.Calls)
	}
	st.MemoryFloor = (st.WeightBytesRead + st.KVBytesRead) / r.bw
	st.Bound = bound(st)
	return st, nil
}

func bound(st StepTime) string {
	parts := []struct {
		name string
		v    float64
	}{{"compute", st.Compute}, {"memory", st.Memory}, {"communication", st.Communication}, {"overhead", st.Overhead}, {"host", st.Host}}
	sort.SliceStable(parts, func(i, j int) bool { return parts[i].v > parts[j].v })
	return parts[0].name
}
