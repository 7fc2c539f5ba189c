package training

import (
	"math"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/policies/ina"
	"github.com/conspirator-sim/conspirator/workloads/train"
)

// The fallback's cost by hand. A job on k = 8 single-GPU servers sends a
// share p of each worker's gradient S to its fallback and the rest
// through the switch (slots plentiful: the in-network flows are bounded
// only by the NICs). ps-single: the first server's NIC receives its own
// (1-p)S in-network and p S from each of the 7 others, (1-p+7p) S =
// (1+6p) S, and stays saturated until all of it is in: the phase takes
// (1+6p) S/B, plus the chunk round trip. ps-sharded: every NIC carries
// its (1-p)S and 2(k-1)/k p S = 1.75 p S of shard traffic: (1+0.75p) S/B.
// At p = 0.25: 2.5 and 1.1875 S/B; at p = 0 both are the in-network S/B.
func TestFallbackByHand(t *testing.T) {
	for _, c := range []struct {
		fallback string
		p, want  float64 // want in units of S/B
	}{
		{FallbackSingle, 0.25, 2.5},
		{FallbackSharded, 0.25, 1.1875},
		{FallbackSingle, 0, 1},
		{FallbackSharded, 0, 1},
		{FallbackSingle, 1, 7},
		{FallbackSharded, 1, 1.75},
	} {
		cfg, _ := listed()
		cfg.Cluster.Servers = 8
		cfg.INA.Fallback = c.fallback
		st, err := cfg.resolve()
		if err != nil {
			t.Fatal(err)
		}
		if err := st.addModel("resnet50"); err != nil {
			t.Fatal(err)
		}
		jobs := []train.Job{{ID: "a", GPUs: 8, Iterations: 1, Model: "resnet50"}}
		pol, _ := ina.New("atp", st.pool(1), nil)
		r, err := newRack(st, jobs, pol, "atp")
		if err != nil {
			t.Fatal(err)
		}
		j := &r.jobs[0]
		j.servers, j.gpusOn, j.gpus = []int{0, 1, 2, 3, 4, 5, 6, 7}, []int{1, 1, 1, 1, 1, 1, 1, 1}, 8
		g := ina.Grant{Slots: 1 << 20, PSFraction: c.p}
		if c.p == 1 {
			g.Slots = 0
		}
		got := r.planTime(r.planFresh(j, g)) - r.dev.ChunkRTT
		want := c.want * j.grad / float64(cfg.Cluster.NIC)
		if math.Abs(got.Seconds()-want)/want > 1e-6 {
			t.Errorf("%s, p=%v: phase %v, want %.4f S/B = %v", c.fallback, c.p, got, c.want, engine.Seconds(want))
		}
	}
}

// A job's in-flight need is its bandwidth-delay product in chunks: ATP's
// switch (248 B chunks, 5 us) at 100 Gb/s: 12.5e9 x 5e-6 / 248 = 252.02,
// so 253 slots; SwitchML's 256 B: 244.1, so 245; at 400 Gb/s, 1,008.06,
// so 1,009 (below ATP's window of 2,800); a window of 100 caps it.
func TestInFlightIsTheBandwidthDelayProduct(t *testing.T) {
	for _, c := range []struct {
		device string
		gbps   float64
		window OrDevice
		want   int
	}{
		{"tofino-atp", 100, FromDevice, 253},
		{"tofino-switchml", 100, FromDevice, 245},
		{"tofino-atp", 400, FromDevice, 1009},
		{"tofino-atp", 100, 100, 100},
	} {
		cfg := Defaults()
		cfg.INA.Device, cfg.INA.Window = c.device, c.window
		cfg.Cluster.NIC = units.Bandwidth(c.gbps * 1e9 / 8)
		st, err := cfg.resolve()
		if err != nil {
			t.Fatal(err)
		}
		if st.need != c.want {
			t.Errorf("%s at %v Gb/s, window %v: %d slots in flight, want %d", c.device, c.gbps, c.window, st.need, c.want)
		}
	}
}

// A regrant within a phase re-splits what each worker has left: a job on
// k = 8 servers (ps-sharded, slots plentiful) starts its phase with a
// quarter of its chunks colliding. Each NIC carries its in-network flow
// (0.75 S) and its shard flow (1.75 x 0.25 S = 0.4375 S) at B/2 each. At
// t1 = 0.4 S/B the collisions end (the other job left): each has sent
// 0.2 S, so 0.55 S in-network and 0.2375 S of shard traffic, 0.2375/1.75
// S of gradient, are left, and all of it now goes through the switch at
// B: the phase ends at (0.4 + 0.55 + 0.2375/1.75) S/B = 1.0857 S/B plus
// the chunk round trip, where it would have taken 1.1875 S/B had the
// collided aggregators been lost for the phase.
func TestRegrantWithinAPhaseByHand(t *testing.T) {
	cfg, _ := listed()
	cfg.Cluster.Servers = 8
	st, err := cfg.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.addModel("resnet50"); err != nil {
		t.Fatal(err)
	}
	pol, _ := ina.New("atp", st.pool(1), nil)
	r, err := newRack(st, []train.Job{{ID: "a", GPUs: 8, Iterations: 1, Model: "resnet50"}}, pol, "atp")
	if err != nil {
		t.Fatal(err)
	}
	j := &r.jobs[0]
	j.servers, j.gpusOn, j.gpus = []int{0, 1, 2, 3, 4, 5, 6, 7}, []int{1, 1, 1, 1, 1, 1, 1, 1}, 8
	var end engine.Time
	j.onFlow = func() { r.flowDone(0) }
	j.onEndSync = func() { end = r.sim.Now() }
	SB := j.grad / float64(cfg.Cluster.NIC) // seconds
	g := ina.Grant{Job: 0, Slots: 1 << 20, PSFraction: 0.25}
	j.phase, j.grant = phaseSync, g
	p := r.plan(j, g)
	j.tail, j.stages, j.stage, j.pending = p.tail, p.stages, 0, 0
	r.runStages(0)
	r.sim.MustAt(engine.Seconds(0.4*SB), func() { r.regrant(ina.Grant{Job: 0, Slots: 1 << 20}) })
	r.sim.Run()
	want := (0.4+0.55+0.2375/1.75)*SB + r.dev.ChunkRTT.Seconds()
	if got := end.Seconds(); math.Abs(got-want)/want > 1e-6 {
		t.Errorf("phase ended at %.9f s, want %.9f (%.4f S/B + RTT)", got, want, 0.4+0.55+0.2375/1.75)
	}
}
