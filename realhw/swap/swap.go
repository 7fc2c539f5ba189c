// Package swap runs, on a real backend (realhw.Backend), the stages of the
// data-path model that the backend can perform, and sets the measured
// times beside the model's: the mission's swap of models for real paths.
// Stages a backend cannot perform (an RDMA write on a host without an RDMA
// NIC, anything on a GPU without one) stay simulated, each with its
// reason. The swap is per stage: every performed stage runs alone, Reps
// times, with the bytes or CPU work the model gives it; queueing between
// requests is not re-simulated, so a path's end-to-end figure with real
// stages is the model's mean with each performed stage's mean replaced
// (a lone request's sum), and says so.
package swap

import (
	"errors"
	"fmt"
	"slices"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw"
	"github.com/conspirator-sim/conspirator/realhw"
	"github.com/conspirator-sim/conspirator/sim/datapath"
	"gonum.org/v1/gonum/stat"
)

// Real is a performed stage's measured time.
type Real struct {
	Op     string  `json:"op"` // the backend call, with its argument: "Network(2408448 B)"
	Reps   int     `json:"reps"`
	P50US  float64 `json:"p50_us"`
	P99US  float64 `json:"p99_us"`
	MeanUS float64 `json:"mean_us"`
}

// Row is one stage of one path: the model's time, and the backend's where
// it performed the stage (else Simulated says why not).
type Row struct {
	Path        string  `json:"path"`
	Stage       string  `json:"stage"`
	Kind        string  `json:"kind"`
	ModelP50US  float64 `json:"model_p50_us"`
	ModelMeanUS float64 `json:"model_mean_us"`
	Real        *Real   `json:"real,omitempty"`
	Simulated   string  `json:"simulated,omitempty"`
}

// PathSum is a path's end-to-end mean: the model's, and the model's with
// the performed stages' means replaced by the measured ones.
type PathSum struct {
	Path           string  `json:"path"`
	Performed      int     `json:"stages_performed"`
	ModelMeanUS    float64 `json:"model_mean_us"`
	WithRealMeanUS float64 `json:"with_real_stages_mean_us"`
}

// Report is backend.json.
type Report struct {
	Backend        string    `json:"backend"`
	BackgroundLoad float64   `json:"background_load"`
	Note           string    `json:"note"`
	Rows           []Row     `json:"stages"`
	Paths          []PathSum `json:"paths"`
}

// Note is the report's statement of what the swap does and does not do.
const Note = "each performed stage ran alone on the backend, reps times, with the model's bytes or CPU work; queueing between requests is not re-simulated: with_real_stages_mean_us is the model's mean end-to-end latency with the performed stages' means replaced by the measured ones (a GPU compute stage's stand-in, run for the model's median, replaces that median, so the model's queueing for the GPU stays; a pinned input's copy issue is counted once, in the DMA stage's real copy)"

// Run performs, on b, every stage of every path in res that b can perform,
// reps times each, and reports it beside the model. cfg is the data-path
// configuration that produced res. Run does not start a background load:
// the caller runs it under the load the scenario names, if any.
func Run(cfg datapath.Config, res []datapath.PathResult, b realhw.Backend, reps int) (*Report, error) {
	if reps < 1 {
		return nil, fmt.Errorf("swap: reps %d must be at least 1", reps)
	}
	in := int64(cfg.Request.InputBytesPerItem) * int64(cfg.Request.Batch)
	out := int64(cfg.Request.OutputBytesPerItem) * int64(cfg.Request.Batch)
	stretch := hw.HostCPUConfig{Cores: cfg.Host.Cores, Background: float64(cfg.Host.BackgroundLoad),
		Model: hw.BackgroundModel(cfg.Host.BackgroundModel), Interference: float64(cfg.Host.Interference)}.Stretch()
	rep := &Report{Backend: b.Name(), BackgroundLoad: float64(cfg.Host.BackgroundLoad), Note: Note}
	pinned := cfg.Host.InputCopy == datapath.CopyPinned
	for _, p := range res {
		recs := p.Records()
		if len(recs) == 0 {
			return nil, fmt.Errorf("swap: path %s has no per-request records (datapath.record_requests: true is needed)", p.Name)
		}
		sum := PathSum{Path: p.Name, ModelMeanUS: float64(p.Latency.Mean)}
		sum.WithRealMeanUS = sum.ModelMeanUS
		for k, name := range p.StageOrder {
			kind := p.StageKinds[name]
			times := make([]float64, 0, len(recs))
			for _, r := range recs {
				if !r.Dropped {
					times = append(times, r.Stages[k])
				}
			}
			if len(times) == 0 {
				rep.Rows = append(rep.Rows, Row{Path: p.Name, Stage: name, Kind: string(kind), Simulated: "no request completed on this path"})
				continue
			}
			slices.Sort(times)
			row := Row{Path: p.Name, Stage: name, Kind: string(kind), ModelP50US: stat.Quantile(0.5, stat.Empirical, times, nil), ModelMeanUS: p.Stages[name]}
			call, why := op(p.Name, kind, b, in, out, engine.Seconds(times[0]*1e-6/stretch), cfg.Request.ComputeTime.Time(), engine.Seconds(row.ModelP50US*1e-6), pinned)
			if call != nil && row.ModelMeanUS == 0 && times[len(times)-1] == 0 {
				// Nothing to perform: performing it would add a copy the
				// model does not make (a pageable input's staging DMA is
				// inside its copy-h2d; the review of issue 42 found it
				// performed twice).
				call, why = nil, zeroStage
			}
			if call == nil {
				row.Simulated = why
				if kind == datapath.KindHostCopy && pinned {
					// The DMA stage's real pinned copy includes this
					// issue: counted once, there.
					sum.WithRealMeanUS -= row.ModelMeanUS
				}
				rep.Rows = append(rep.Rows, row)
				continue
			}
			real, err := measure(call, why, reps)
			if errors.Is(err, realhw.ErrUnsupported) {
				row.Simulated = err.Error()
				rep.Rows = append(rep.Rows, row)
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("swap: %s path, stage %s: %w", p.Name, name, err)
			}
			row.Real = real
			sum.Performed++
			if kind == datapath.KindCompute && p.Name != datapath.PathLoopback {
				// The stand-in kernel runs for the model's median compute
				// time on an idle GPU; the model's mean of the stage also
				// holds the queueing for the GPU, which the swap does not
				// re-simulate: only the stand-in's difference from that
				// median replaces model time (the review of issue 42: a
				// whole-mean swap took 109-228 us of queueing out of each
				// path's sum).
				sum.WithRealMeanUS += real.MeanUS - row.ModelP50US
			} else {
				sum.WithRealMeanUS += real.MeanUS - row.ModelMeanUS
			}
			rep.Rows = append(rep.Rows, row)
		}
		rep.Paths = append(rep.Paths, sum)
	}
	return rep, nil
}

// op returns the backend call that performs a stage of the given kind on
// the given path, with a label; or nil and the reason it stays simulated.
// work is the stage's unloaded host CPU time (host-cpu stages); modelP50
// the model's median time of the stage (a GPU compute stage's stand-in
// kernel runs that long).
//
// pinned is the scenario's input_copy: a pinned input's host-copy stage is
// only the copy's issue in the model, and its transfer the DMA stage, which
// the backend performs as one pinned cudaMemcpy (issue included); a
// pageable input's host-copy stage is the whole CPU-staged copy.
func op(path string, kind datapath.StageKind, b realhw.Backend, in, out int64, work, compute, modelP50 engine.Time, pinned bool) (func() (engine.Time, error), string) {
	tcpLike := path == datapath.PathTCP || path == datapath.PathLoopback
	switch {
	case kind == datapath.KindNetwork && tcpLike:
		return func() (engine.Time, error) { return b.Network(in) }, fmt.Sprintf("Network(%d B)", in)
	case kind == datapath.KindReply && tcpLike:
		return func() (engine.Time, error) { return b.Reply(out) }, fmt.Sprintf("Reply(%d B)", out)
	case kind == datapath.KindNetwork || kind == datapath.KindReply:
		return nil, "an RDMA transfer: needs an RDMA NIC (the rdma backend, -tags rdma)"
	case kind == datapath.KindHostCopy && pinned:
		return nil, "a pinned input's copy issue: performed inside the DMA stage's pinned cudaMemcpy"
	case kind == datapath.KindHostCopy:
		return func() (engine.Time, error) { return b.HostCopy(in) }, fmt.Sprintf("HostCopy(%d B): the pageable input's copy, to its landing on the device", in)
	case kind == datapath.KindHostCPU:
		return func() (engine.Time, error) { return b.CPUWork(work) }, fmt.Sprintf("CPUWork(%v)", work)
	case kind == datapath.KindCompute && path == datapath.PathLoopback:
		return func() (engine.Time, error) { return b.CPUWork(compute) }, fmt.Sprintf("CPUWork(%v)", compute)
	case kind == datapath.KindDMA && path == datapath.PathConspirator:
		return func() (engine.Time, error) { return b.DMA(in) }, fmt.Sprintf("DMA(%d B): a pinned host-to-device cudaMemcpy standing in for the SmartNIC's DMA into the GPU (no SmartNIC here; a different data path)", in)
	case kind == datapath.KindDMA:
		return func() (engine.Time, error) { return b.DMA(in) }, fmt.Sprintf("DMA(%d B): a pinned cudaMemcpy, its issue included", in)
	case kind == datapath.KindCompute:
		if k, ok := b.(realhw.KernelWorker); ok {
			return func() (engine.Time, error) { return k.KernelWork(modelP50) }, fmt.Sprintf("KernelWork(%v): %s", modelP50, standIn)
		}
		return nil, "runs on a GPU: needs the cuda backend (-tags cuda) and a GPU"
	case kind == datapath.KindLaunch:
		if l, ok := b.(realhw.Launcher); ok {
			return l.Launch, "Launch(): an empty kernel's launch, not waited for"
		}
		return nil, "runs on a GPU: needs the cuda backend (-tags cuda) and a GPU"
	case kind == datapath.KindSync:
		if r, ok := b.(realhw.ResultCopier); ok {
			return func() (engine.Time, error) { return r.ResultCopy(out) }, fmt.Sprintf("ResultCopy(%d B): %s", out, resultCopyNote)
		}
		return nil, "runs on a GPU: needs the cuda backend (-tags cuda) and a GPU"
	case kind == datapath.KindSoC || kind == datapath.KindNIC:
		return nil, "runs on the SmartNIC: measure its Arm cores with calibrate --backend host on the SoC"
	}
	return nil, "no backend operation for stage kind " + string(kind)
}

// zeroStage says why a stage the model prices at 0 is not performed.
const zeroStage = "0 in the model (a pageable input's staging DMA is priced inside copy-h2d): nothing to perform"

// resultCopyNote says what a sync stage performs: the result's copy back
// into pageable memory, as the model prices it (out.cpu()).
const resultCopyNote = "cudaMemcpy D2H into pageable memory, as out.cpu() does and the model prices it (the wait for the GPU is in the compute stage's synchronize)"

// standIn says what a GPU compute stage runs on the cuda backend (as
// realhw/cuda.KernelWorkNote, which this package cannot import untagged).
const standIn = "stand-in kernel spinning on %globaltimer for the model's compute time, launched and synchronized; not the model's kernels"

func measure(call func() (engine.Time, error), label string, reps int) (*Real, error) {
	ts := make([]float64, 0, reps)
	for range reps {
		d, err := call()
		if err != nil {
			return nil, err
		}
		ts = append(ts, d.Seconds()*1e6)
	}
	mean := stat.Mean(ts, nil)
	slices.Sort(ts)
	return &Real{Op: label, Reps: reps, P50US: stat.Quantile(0.5, stat.Empirical, ts, nil), P99US: stat.Quantile(0.99, stat.Empirical, ts, nil), MeanUS: mean}, nil
}
