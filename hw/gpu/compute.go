package gpu

import (
	"fmt"
	"sort"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/mig"
)

// migTable is the compute time of one model on A100-80GB MIG instances:
// microseconds per batch, by compute slices and batch size; 0 = not
// measured.
type migTable struct {
	batches []int
	us      map[int][]float64 // compute slices (1,2,3,4,7) -> per batch
}

// tableBatches are the batch sizes ParvaGPU profiled.
var tableBatches = []int{1, 2, 4, 8, 16, 32, 64, 128, 256}

// tableSlices are the MIG sizes ParvaGPU profiled, in compute slices.
var tableSlices = []int{1, 2, 3, 4, 7}

// migTables: per-batch inference time in microseconds on an A100-80GB MIG
// instance (7 = 7g.80gb), one process per instance (no MPS co-location).
//
// Source (M): MunQ-Lee/ParvaGPU_SC24 @5f3de1e prof_data/<model>.csv (MIT),
// rows with "Workload Number" 1. Derived (D) as round(batch / Throughput x
// 1e6): Throughput is requests (samples) per second and Latency is seconds
// per batch, which the rows confirm (e.g. 7g, batch 256: 256/2582.226 =
// 0.0991 s against Latency 0.099). We keep the time from Throughput because
// Latency is rounded to milliseconds. A throughput of 0 in the file (larger
// batches on small instances) means not measured and is kept as 0.
// TestTablesMatchParvaGPU re-derives every number from the real files.
//
// The stack is framework-level (not TensorRT): times at batch 1-4 sit on a
// floor of about 4.7 ms, like MIGPerf's PyTorch eager ResNet-50 (5.2 ms at
// batch 1, compute only, hardware.md 6e), i.e. kernel-launch bound.
var migTables = map[string]migTable{
	"resnet50": {batches: tableBatches, us: map[int][]float64{
		1: {5082, 7297, 12605, 22329, 41482, 77652, 0, 0, 0},
		2: {4687, 4662, 6707, 11641, 21671, 40557, 78281, 0, 0},
		3: {4684, 4723, 4800, 7460, 13465, 24769, 48174, 93364, 0},
		4: {4656, 4640, 4748, 6189, 11381, 21453, 42009, 82688, 0},
		7: {5107, 4700, 4871, 5000, 7236, 13354, 25780, 50168, 99139},
	}},
	"bert": {batches: tableBatches, us: map[int][]float64{
		1: {13439, 23276, 42014, 78503, 136090, 309840, 544992, 947138, 1901974},
		2: {14433, 18170, 28242, 54223, 88570, 200309, 366210, 635094, 1251932},
		3: {14297, 17681, 25384, 44903, 73043, 165850, 302433, 528053, 1052078},
		4: {13848, 18315, 22569, 39013, 76348, 147297, 272288, 473028, 965859},
		7: {14489, 17512, 24190, 36529, 63797, 123281, 227182, 425362, 794178},
	}},
}

// Models returns the models that have compute-time tables, sorted.
func Models() []string {
	out := make([]string, 0, len(migTables))
	for m := range migTables {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// Stack names the serving software whose compute times a ComputeModel
// gives.
type Stack string

const (
	// StackPyTorch is the framework-level stack the tables were measured
	// with (PyTorch eager; ParvaGPU, MIGPerf): launch bound below batch 8.
	StackPyTorch Stack = "pytorch"
	// StackTensorRT is an optimised TensorRT INT8 engine, from MLPerf
	// Inference's published figures (ResNet-50 only): see TensorRTTime.
	StackTensorRT Stack = "tensorrt"
)

// Stacks lists the stacks, for messages.
var Stacks = []Stack{StackPyTorch, StackTensorRT}

// ComputeModel turns the tables, or the published TensorRT figures, into
// compute times.
type ComputeModel struct {
	Stack Stack
}

// DefaultComputeModel reproduces the measured, framework-level times.
var DefaultComputeModel = ComputeModel{Stack: StackPyTorch}

// The published TensorRT INT8 ResNet-50 figures on a whole A100-SXM-80GB,
// MLPerf Inference datacenter, closed division, NVIDIA's submissions
// (hardware.md 6e, 7; grade M; INT8 is NVIDIA's usual configuration, the
// logs do not state it):
//   - tensorRTBatch1: SingleStream mean latency, 461 us (v2.1): one image
//     through the engine, its input copy included;
//   - tensorRTPerImage: 1 / Offline throughput, 1 / 42,379.3 samples/s
//     (v3.0): the cost of one more image in a large batch;
//   - tensorRTBatch1MIG1g: SingleStream on a 1g.10gb instance, 678 us
//     (v2.1), 1.47x the whole GPU's.
const (
	tensorRTBatch1      = 461e-6
	tensorRTPerImage    = 1 / 42379.3
	tensorRTBatch1MIG1g = 678e-6
)

// TensorRTTime is the time of one batch of ResNet-50 through a TensorRT
// INT8 engine on an instance with x A100 compute slices' worth of the GPU
// (7 = whole): a fixed part, the batch-1 latency, plus the per-image cost
// of the images beyond the first, t(b) = L(x) + (b - 1) / (X r(x)), so the
// time grows with the batch, as a serving stack's does, and reaches
// MLPerf's Offline throughput at large batches. On the whole GPU L is
// SingleStream's 461 us and X Offline's 42,379/s (so t(8) = 626 us and
// t(32) = 1.19 ms). On a MIG instance r(x) is the tables' throughput share
// (SpeedFraction: 1g 0.160, against MLPerf's measured 0.1335) and L(x) is
// interpolated linearly in 7/x between the whole GPU and MLPerf's 1g
// latency (E: 2g 1.20x, 3g 1.10x, 4g 1.06x the whole GPU's).
func TensorRTTime(x float64, batch int) float64 {
	x = min(max(x, 1), fullSlices)
	k := 1 + (tensorRTBatch1MIG1g/tensorRTBatch1-1)*(fullSlices/x-1)/(fullSlices-1)
	r := 1.0
	if x < fullSlices {
		tab := migTables["resnet50"]
		lo, hi, w := between(x)
		r = ((1-w)*tab.peakThroughput(lo) + w*tab.peakThroughput(hi)) / tab.peakThroughput(fullSlices)
	}
	return tensorRTBatch1*k + float64(batch-1)*tensorRTPerImage/r
}

// ComputeTime is DefaultComputeModel.Time.
func ComputeTime(gpuName, profile, model string, batch int) (engine.Time, error) {
	return DefaultComputeModel.Time(gpuName, profile, model, batch)
}

// Time returns the time one batch of inference of model takes on gpuName,
// on its MIG instance profile or, with profile "", on the whole GPU.
//
// The A100-80GB MIG table gives the time for the instance's compute slices
// (a whole GPU counts as 7g; E: the whole A100 has 108 SMs against 98 in
// 7g, so compute-bound work may run up to 10% faster than modelled). Other
// GPU types divide that time by their whole-GPU RelSpeed; for MIG profiles
// of the A100-40GB and H100 this assumes the A100-80GB scaling across MIG
// sizes holds on them (E). Memory size is not modelled: a 1g.5gb is as fast
// as a 1g.10gb and no batch is refused for lack of memory.
//
// Between profiled batch sizes the per-batch time is interpolated linearly
// in the batch size; beyond the largest profiled batch of that MIG size the
// throughput stays at that batch's (time grows in proportion to batch).
func (m ComputeModel) Time(gpuName, profile, model string, batch int) (engine.Time, error) {
	if m.Stack != StackPyTorch && m.Stack != StackTensorRT {
		return 0, fmt.Errorf("compute model: unknown serving stack %q; use one of %v", m.Stack, Stacks)
	}
	s, err := Lookup(gpuName)
	if err != nil {
		return 0, err
	}
	key := strings.ToLower(model)
	tab, ok := migTables[key]
	if !ok {
		return 0, fmt.Errorf("no compute-time table for model %q; known models: %s", model, strings.Join(Models(), ", "))
	}
	if batch < 1 {
		return 0, fmt.Errorf("batch size %d for %s on %s: must be at least 1", batch, model, gpuName)
	}
	share := 1.0 // of the whole GPU
	if profile != "" {
		p, err := s.Profile(profile)
		if err != nil {
			return 0, err
		}
		share = s.MIG.Share(p)
	}
	rel, ok := s.RelSpeed[key]
	if !ok || !(rel > 0) {
		return 0, fmt.Errorf("gpu %s has no relative speed for model %q", s.Name, model)
	}
	if m.Stack == StackTensorRT {
		if key != "resnet50" {
			return 0, fmt.Errorf("no published TensorRT per-batch figures for %q (MLPerf gives ResNet-50's); use the stack %q", model, StackPyTorch)
		}
		// Other GPU types by their MLPerf Offline ratio to the A100, the
		// batch-1 part included (E).
		return engine.Microseconds(TensorRTTime(share*fullSlices, batch) * 1e6 / rel), nil
	}
	us := tab.timeAt(share*fullSlices, batch)
	return engine.Microseconds(us / rel), nil
}

// time returns the A100-80GB per-batch time in microseconds for an
// instance of the given compute slices (one of tableSlices) and batch >= 1.
func (t migTable) time(slices, batch int) float64 {
	row := t.us[slices]
	// The profiled points, skipping unmeasured ones.
	var bs []int
	var us []float64
	for i, v := range row {
		if v > 0 {
			bs = append(bs, t.batches[i])
			us = append(us, v)
		}
	}
	n := len(bs)
	if batch >= bs[n-1] {
		return us[n-1] * float64(batch) / float64(bs[n-1])
	}
	if batch <= bs[0] {
		return us[0] // batch 1 is the smallest profiled
	}
	i := sort.SearchInts(bs, batch) // bs[i-1] < batch <= bs[i]
	f := float64(batch-bs[i-1]) / float64(bs[i]-bs[i-1])
	return us[i-1] + f*(us[i]-us[i-1])
}

// fullSlices is the A100's compute slices, which a whole GPU counts as in
// the tables.
const fullSlices = 7

// between returns the profiled sizes lo <= x <= hi nearest to x (equal when
// x is profiled) and the weight of hi, for x in [1, 7].
func between(x float64) (lo, hi int, w float64) {
	lo, hi = tableSlices[0], tableSlices[len(tableSlices)-1]
	for _, c := range tableSlices {
		if float64(c) <= x {
			lo = c
		}
		if float64(c) >= x {
			hi = c
			break
		}
	}
	if hi == lo {
		return lo, hi, 0
	}
	return lo, hi, (x - float64(lo)) / float64(hi-lo)
}

// timeAt returns the per-batch time of an instance holding x A100 compute
// slices' worth of the GPU (x = share x 7): the table row when x is a
// profiled size, otherwise linear between the two nearest rows (E; for the
// A30, whose 1g and 2g are 1.75 and 3.5 A100 slices).
func (t migTable) timeAt(x float64, batch int) float64 {
	x = min(max(x, 1), fullSlices)
	lo, hi, w := between(x)
	if w == 0 {
		return t.time(lo, batch)
	}
	return (1-w)*t.time(lo, batch) + w*t.time(hi, batch)
}

// peakThroughput returns the largest measured samples/s of an instance
// with the given compute slices, over the profiled batch sizes.
func (t migTable) peakThroughput(slices int) float64 {
	best := 0.0
	for i, v := range t.us[slices] {
		if v > 0 {
			best = max(best, float64(t.batches[i])/v*1e6)
		}
	}
	return best
}

// SpeedFraction returns the throughput of a MIG instance with
// computeSlices compute slices relative to the whole GPU, for model: the
// ratio of the best measured throughputs over batch sizes (each size at its
// best batch), from the A100-80GB tables. For ResNet-50 that gives 1g
// 0.160, 2g 0.317, 3g 0.531, 4g 0.599; MIGPerf measured 0.137, 0.273,
// 0.482 at batch 256 (hardware.md 6e). For BERT it is 0.419, 0.634,
// 0.755, 0.839: this framework-level BERT is far from compute bound.
//
// A GPU without MIG, or all its compute slices, gives 1; 0 or fewer gives
// 0. The instance is placed on the A100 scale by its share of the GPU's
// compute slices (an A30 2g is 3.5 A100 slices); sizes between profiled
// ones (5, 6, and the A30's) are interpolated linearly. A model without a
// table scales linearly with the share (E: hardware.md 6e observes
// near-linear scaling for ResNet-50). The fraction is assumed the same on
// every MIG GPU (E).
func SpeedFraction(s Spec, computeSlices int, model string) float64 {
	switch {
	case s.MIG == nil || computeSlices >= s.MIG.ComputeSlices:
		return 1
	case computeSlices <= 0:
		return 0
	}
	share := float64(computeSlices) / float64(s.MIG.ComputeSlices)
	tab, ok := migTables[strings.ToLower(model)]
	if !ok {
		return share
	}
	full := tab.peakThroughput(fullSlices)
	frac := func(c int) float64 { return tab.peakThroughput(c) / full }
	lo, hi, w := between(max(share*fullSlices, 1))
	return (1-w)*frac(lo) + w*frac(hi)
}

// InstanceSpeedFraction is SpeedFraction for an instance of profile p of
// s, its compute counted on basis: mig.BasisSlices, its compute slices
// (SpeedFraction); mig.BasisSMs, its SMs over those of the whole-GPU
// instance where s's geometry knows them (nvidia-smi mig -lgip), its slices
// elsewhere. The share is read on the A100 tables, where SMs are
// proportional to slices (14 per slice), so an H200 4g.71gb with 64 of 132
// SMs (48%) runs as an A100 instance of 3.4 slices, not 4. Below one
// slice's share (an H200 1g.18gb: 16 of 132 SMs, 0.85 slices) the one-slice
// throughput is scaled down in proportion: the tables have nothing smaller.
func InstanceSpeedFraction(s Spec, p *mig.Profile, model, basis string) float64 {
	if s.MIG == nil || p.Compute >= s.MIG.ComputeSlices {
		return 1
	}
	if basis == mig.BasisSMs {
		if share, ok := s.MIG.SMShare(p); ok {
			return shareSpeedFraction(share, model)
		}
	}
	return SpeedFraction(s, p.Compute, model)
}

// shareSpeedFraction is the throughput of an instance with share (0..1)
// of the GPU's compute relative to the whole GPU, on model's A100 table.
func shareSpeedFraction(share float64, model string) float64 {
	if share >= 1 {
		return 1
	}
	tab, ok := migTables[strings.ToLower(model)]
	if !ok {
		return share
	}
	full := tab.peakThroughput(fullSlices)
	frac := func(c int) float64 { return tab.peakThroughput(c) / full }
	x := share * fullSlices
	if x < 1 {
		return frac(1) * x
	}
	lo, hi, w := between(x)
	return (1-w)*frac(lo) + w*frac(hi)
}
