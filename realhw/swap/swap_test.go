package swap

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/realhw"
	"github.com/conspirator-sim/conspirator/sim/datapath"
)

// fake is a backend with fixed times: 10 us per network or reply call,
// 5 us per copy, the CPU work itself, and no DMA. It records the calls.
type fake struct{ calls []string }

func (f *fake) Name() string { return "fake" }
func (f *fake) Network(n int64) (engine.Time, error) {
	f.calls = append(f.calls, fmt.Sprintf("net %d", n))
	return 10 * engine.Microsecond, nil
}
func (f *fake) Reply(n int64) (engine.Time, error) {
	f.calls = append(f.calls, fmt.Sprintf("reply %d", n))
	return 10 * engine.Microsecond, nil
}
func (f *fake) HostCopy(n int64) (engine.Time, error) {
	f.calls = append(f.calls, fmt.Sprintf("copy %d", n))
	return 5 * engine.Microsecond, nil
}
func (f *fake) CPUWork(w engine.Time) (engine.Time, error) {
	f.calls = append(f.calls, fmt.Sprintf("cpu %v", w))
	return w, nil
}
func (f *fake) DMA(int64) (engine.Time, error) { return 0, realhw.Unsupported("fake", realhw.StageDMA) }
func (f *fake) Compute(int64) (engine.Time, error) {
	return 0, realhw.Unsupported("fake", realhw.StageCompute)
}
func (f *fake) Close() error { return nil }

// On the paper's default configuration, with a fake backend whose times
// are known: the tcp path's network, reply, copy and host-CPU stages are
// performed with the request's bytes and the stages' unloaded work (the
// decision is 2 us, the default decision_time); GPU, SmartNIC and RDMA
// stages stay simulated with their reasons, DMA because the backend says it
// cannot; and each path's mean with real stages is the model's mean with
// the performed stages' means replaced, worked out here by hand.
func TestSwapOnFakeBackend(t *testing.T) {
	cfg := datapath.Defaults()
	cfg.Clients.Requests = 50
	cfg.Paths = []string{datapath.PathTCP, datapath.PathConspirator}
	res, err := datapath.Run(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	f := &fake{}
	rep, err := Run(cfg, res.Paths, f, 3)
	if err != nil {
		t.Fatal(err)
	}
	in := int64(cfg.Request.InputBytesPerItem) * int64(cfg.Request.Batch)
	rows := map[string]Row{}
	for _, r := range rep.Rows {
		rows[r.Path+"/"+r.Stage] = r
	}
	want := map[string]float64{ // performed: the fake's mean, us
		"tcp/network": 10, "tcp/reply": 10, "tcp/copy-h2d": 5, "tcp/decide": 2,
	}
	for key, us := range want {
		r := rows[key]
		if r.Real == nil || math.Abs(r.Real.MeanUS-us) > 1e-9 || r.Real.Reps != 3 {
			t.Errorf("%s: %+v, want performed 3 times at %v us", key, r.Real, us)
		}
	}
	if r := rows["tcp/network"]; r.Real == nil || r.Real.Op != fmt.Sprintf("Network(%d B)", in) {
		t.Errorf("tcp network op %+v, want Network(%d B)", r.Real, in)
	}
	for key, reason := range map[string]string{
		"tcp/gpu": "needs the cuda backend", "conspirator/network": "RDMA", "conspirator/soc-decide": "SmartNIC",
		"conspirator/dma": "stage not supported",
	} {
		if r := rows[key]; r.Real != nil || !strings.Contains(r.Simulated, reason) {
			t.Errorf("%s: real %+v, simulated %q; want simulated, saying %q", key, r.Real, r.Simulated, reason)
		}
	}
	for _, ps := range rep.Paths {
		want := ps.ModelMeanUS
		for _, r := range rep.Rows {
			if r.Path == ps.Path && r.Real != nil {
				want += r.Real.MeanUS - r.ModelMeanUS
			}
		}
		if math.Abs(ps.WithRealMeanUS-want) > 1e-6 {
			t.Errorf("%s: with real stages %v, want %v", ps.Path, ps.WithRealMeanUS, want)
		}
	}
	// The tcp path's performed stages: network, decide, copy-h2d,
	// reply-tx (host CPU), reply; launch and sync+d2h are kind launch/sync.
	if p := rep.Paths[0]; p.Path != "tcp" || p.Performed != 5 {
		t.Errorf("tcp path: %+v, want 5 stages performed", p)
	}
	if _, err := Run(cfg, res.Paths, f, 0); err == nil {
		t.Error("zero reps accepted")
	}
}

// gpuFake is a GPU backend with known times: 20 us per pinned copy (DMA
// and result), 30 us per pageable one, 4 us per launch, and a stand-in
// kernel that takes exactly the work asked. Combined with the host-like
// fake, every stage of the tcp path but none of the SmartNIC's runs.
type gpuFake struct{ work []engine.Time }

func (g *gpuFake) Name() string { return "gpu" }
func (g *gpuFake) Network(int64) (engine.Time, error) {
	return 0, realhw.Unsupported("gpu", realhw.StageNetwork)
}
func (g *gpuFake) Reply(int64) (engine.Time, error) {
	return 0, realhw.Unsupported("gpu", realhw.StageReply)
}
func (g *gpuFake) HostCopy(int64) (engine.Time, error) { return 30 * engine.Microsecond, nil }
func (g *gpuFake) CPUWork(engine.Time) (engine.Time, error) {
	return 0, realhw.Unsupported("gpu", realhw.StageCPU)
}
func (g *gpuFake) DMA(int64) (engine.Time, error)     { return 20 * engine.Microsecond, nil }
func (g *gpuFake) Compute(int64) (engine.Time, error) { return 0, nil }
func (g *gpuFake) KernelWork(d engine.Time) (engine.Time, error) {
	g.work = append(g.work, d)
	return d, nil
}
func (g *gpuFake) Launch() (engine.Time, error)          { return 4 * engine.Microsecond, nil }
func (g *gpuFake) ResultCopy(int64) (engine.Time, error) { return 20 * engine.Microsecond, nil }
func (g *gpuFake) Close() error                          { return nil }

// With a GPU backend combined with the host one (as run --backend cuda
// does), the tcp path's GPU stages run for real: the pageable copy on the
// GPU backend (30 us, not the host fake's 5), the launch (4 us), the
// compute as a stand-in kernel of the model's p50 compute time (so its
// real time equals the model's), the result copy (20 us); network and
// reply fall back to the host fake (10 us); the conspirator path's DMA
// is the pinned copy (20 us).
func TestSwapOnGPUBackend(t *testing.T) {
	cfg := datapath.Defaults()
	cfg.Clients.Requests = 50
	cfg.Paths = []string{datapath.PathTCP, datapath.PathConspirator}
	res, err := datapath.Run(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	g := &gpuFake{}
	b := realhw.Combine(g, &fake{})
	if b.Name() != "gpu+fake" {
		t.Errorf("name %q", b.Name())
	}
	rep, err := Run(cfg, res.Paths, b, 2)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]Row{}
	for _, r := range rep.Rows {
		rows[r.Path+"/"+r.Stage] = r
	}
	for key, us := range map[string]float64{
		"tcp/network": 10, "tcp/copy-h2d": 30, "tcp/launch": 4, "tcp/sync+d2h": 20, "conspirator/dma": 20,
	} {
		if r := rows[key]; r.Real == nil || math.Abs(r.Real.MeanUS-us) > 1e-9 {
			t.Errorf("%s: %+v, want performed at %v us", key, r.Real, us)
		}
	}
	// The result's copy back is labelled as what the model prices: a copy
	// into pageable memory (the device check of 2026-11-27 ran it pinned).
	if r := rows["tcp/sync+d2h"]; r.Real == nil || !strings.Contains(r.Real.Op, "ResultCopy(16000 B): cudaMemcpy D2H into pageable memory, as out.cpu() does and the model prices it") {
		t.Errorf("tcp/sync+d2h: %+v, want the pageable result copy's label", r.Real)
	}
	gpuRow := rows["tcp/gpu"]
	if gpuRow.Real == nil || !strings.Contains(gpuRow.Real.Op, "stand-in kernel") || math.Abs(gpuRow.Real.MeanUS-gpuRow.ModelP50US) > 1e-3 {
		t.Errorf("tcp/gpu: %+v (model p50 %v us), want the stand-in kernel run for the model's p50", gpuRow.Real, gpuRow.ModelP50US)
	}
	if r := rows["conspirator/soc-decide"]; r.Real != nil {
		t.Errorf("the SmartNIC's decision ran on %+v", r.Real)
	}
	// A path's mean with real stages: each performed stage's mean
	// replaces the model's, except the GPU compute, whose stand-in ran for
	// the model's median and replaces that (the model's queueing for the
	// GPU stays). The SmartNIC's buffer stage (0, a NIC stage) keeps its
	// own reason.
	for _, ps := range rep.Paths {
		if want := withReal(rep, ps, 0); math.Abs(ps.WithRealMeanUS-want) > 1e-6 {
			t.Errorf("%s: with real stages %v, want %v", ps.Path, ps.WithRealMeanUS, want)
		}
	}
	if r := rows["conspirator/buffer"]; r.Real != nil || !strings.Contains(r.Simulated, "SmartNIC") {
		t.Errorf("conspirator/buffer: real %+v, simulated %q; want the SmartNIC's reason", r.Real, r.Simulated)
	}
	// The pageable input's DMA is inside copy-h2d in the model (0 there):
	// not performed a second time. The conspirator path's DMA is a pinned
	// host copy standing in for the SmartNIC's, and says so.
	if r := rows["tcp/copy-dma"]; r.Real != nil || r.Simulated != zeroStage {
		t.Errorf("tcp/copy-dma: real %+v, simulated %q; want not performed (0 in the model)", r.Real, r.Simulated)
	}
	if r := rows["conspirator/dma"]; r.Real == nil || !strings.Contains(r.Real.Op, "standing in for the SmartNIC's DMA") {
		t.Errorf("conspirator/dma: %+v, want labelled as the stand-in", r.Real)
	}
	// A pinned input: the host-copy stage is the issue alone in the model,
	// performed inside the DMA stage's pinned copy (20 us here).
	cfg.Host.InputCopy = datapath.CopyPinned
	res, err = datapath.Run(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	rep, err = Run(cfg, res.Paths, b, 2)
	if err != nil {
		t.Fatal(err)
	}
	rows = map[string]Row{}
	for _, r := range rep.Rows {
		rows[r.Path+"/"+r.Stage] = r
	}
	if r := rows["tcp/copy-h2d"]; r.Real != nil || !strings.Contains(r.Simulated, "inside the DMA stage's pinned cudaMemcpy") {
		t.Errorf("pinned tcp/copy-h2d: real %+v, simulated %q", r.Real, r.Simulated)
	}
	if r := rows["tcp/copy-dma"]; r.Real == nil || math.Abs(r.Real.MeanUS-20) > 1e-9 {
		t.Errorf("pinned tcp/copy-dma: %+v, want the pinned copy performed at 20 us", r.Real)
	}
	// The issue is counted once: the DMA's real copy holds it, so the
	// host-copy stage's model time leaves the sum.
	for _, ps := range rep.Paths {
		if ps.Path != "tcp" {
			continue
		}
		if want := withReal(rep, ps, rows["tcp/copy-h2d"].ModelMeanUS); math.Abs(ps.WithRealMeanUS-want) > 1e-6 {
			t.Errorf("pinned tcp: with real stages %v, want %v", ps.WithRealMeanUS, want)
		}
	}
}

// withReal is a path's mean with its performed stages, derived from the
// rows: each real mean replaces the model's mean, a GPU compute stand-in's
// the model's median; less is taken out (a pinned input's issue).
func withReal(rep *Report, ps PathSum, less float64) float64 {
	want := ps.ModelMeanUS - less
	for _, r := range rep.Rows {
		if r.Path != ps.Path || r.Real == nil {
			continue
		}
		if r.Kind == string(datapath.KindCompute) {
			want += r.Real.MeanUS - r.ModelP50US
		} else {
			want += r.Real.MeanUS - r.ModelMeanUS
		}
	}
	return want
}
