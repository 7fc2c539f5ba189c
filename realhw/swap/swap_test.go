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
