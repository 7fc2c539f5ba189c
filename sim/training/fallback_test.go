package training

import (
	"math"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/policies/ina"
	"github.com/conspirator-sim/conspirator/workloads/train"
)

// The fallback's cost by hand, under ATP's data plane (every chunk to
// the switch; a collided one forwarded to the PS, whose one reply the
// switch multicasts to every worker: see fallback). A job on k = 8
// single-GPU servers sends a share p of each worker's gradient S to its
// fallback and the rest through the switch (slots plentiful: the
// in-network flows are bounded only by the NICs). ps-single: the first
// server's NIC receives its own (1-p)S in-network, p S of pushes from
// each of the 8 workers (its own through the switch) and p S of
// results, (1-p+9p) S = (1+8p) S, and stays saturated until all of it
// is in: the phase takes (1+8p) S/B, plus the chunk round trip.
// ps-sharded: every NIC receives its (1-p)S, p S of pushes (p S/8 from
// each worker to its shard) and p S of results: (1+p) S/B. At p = 0.25:
// 3 and 1.25 S/B; at p = 1, 9 and 2; at p = 0 both are the in-network
// S/B. ps-dedicated: the 8 workers' fallback flows share the PS
// machine's NIC (B/8 each) while each worker's NIC carries S either way;
// the PS's NIC takes 8p S: max(1, 8p) S/B, 2 at p = 0.25, 8 at p = 1.
// Every flow carries the chunks' packets, SwitchML's 332 B on the wire
// for 256 B of values, so each phase is that ratio, w = 1.296875, times
// these.
func TestFallbackByHand(t *testing.T) {
	for _, c := range []struct {
		fallback string
		p, want  float64 // want in units of S w / B
	}{
		{FallbackSingle, 0.25, 3},
		{FallbackSharded, 0.25, 1.25},
		{FallbackSingle, 0, 1},
		{FallbackSharded, 0, 1},
		{FallbackSingle, 1, 9},
		{FallbackSharded, 1, 2},
		{FallbackDedicated, 0.25, 2},
		{FallbackDedicated, 0, 1},
		{FallbackDedicated, 1, 8},
	} {
		r, j, cfg := rackOfEight(t, "atp", c.fallback)
		r.resultsViaPS = false // the fallback alone: TestPSLegsByHand adds ATP's PS legs
		g := ina.Grant{Slots: 1 << 20, PSFraction: c.p}
		if c.p == 1 {
			g.Slots = 0
		}
		if got := lonePhase(r, j, cfg, g); math.Abs(got-c.want)/c.want > 1e-6 {
			t.Errorf("%s, p=%v: phase %.6f S w/B, want %.4f", c.fallback, c.p, got, c.want)
		}
	}
}

// A job's in-flight need is its bandwidth-delay product in chunks, each
// a packet on the wire: ATP's switch (248 B of values and 84 B of
// headers and framing, 5 us) at 100 Gb/s: 12.5e9 x 5e-6 / 332 = 188.25,
// so 189 slots; SwitchML's (256 + 76 B) the same; at 400 Gb/s, 753.01,
// so 754 (below ATP's window of 1,200); a window of 100 caps it; without
// headers (chunk_header_bytes 0) ATP's is 12.5e9 x 5e-6 / 248 = 252.02,
// so 253.
func TestInFlightIsTheBandwidthDelayProduct(t *testing.T) {
	for _, c := range []struct {
		device string
		gbps   float64
		window OrDevice
		header BytesOrDevice
		want   int
	}{
		{"tofino-atp", 100, FromDevice, BytesFromDevice, 189},
		{"tofino-switchml", 100, FromDevice, BytesFromDevice, 189},
		{"tofino-atp", 400, FromDevice, BytesFromDevice, 754},
		{"tofino-atp", 100, 100, BytesFromDevice, 100},
		{"tofino-atp", 100, FromDevice, 0, 253},
	} {
		cfg := Defaults()
		cfg.INA.Device, cfg.INA.Window, cfg.INA.ChunkHeaderBytes = c.device, c.window, c.header
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
// (0.75 S) and its shard flow (2 x 0.25 S = 0.5 S: pushes and results,
// see fallback) at B/2 each. At t1 = 0.4 S/B the collisions end (the
// other job left): each has sent 0.2 S, so 0.55 S in-network and 0.3 S
// of shard traffic, 0.15 S of gradient, are left, and all of it now
// goes through the switch at B: the phase ends at (0.4 + 0.55 + 0.15)
// = 1.1 S/B plus the chunk round trip, where it would have taken 1.25
// S/B had the collided aggregators been lost for the phase. Every flow
// carries the chunks' packets (332 B on the wire for 256 B of values),
// so each time above is w = 332/256 times as long, the regrant at
// 0.4 w S/B.
func TestRegrantWithinAPhaseByHand(t *testing.T) {
	r, j, cfg := rackOfEight(t, "atp", FallbackSharded)
	r.resultsViaPS = false // the regrant alone (TestPSLegsByHand adds the PS legs)
	var end engine.Time
	j.onFlow = func() { r.flowDone(0) }
	j.onEndSync = func() { end = r.sim.Now() }
	SB := j.grad / float64(cfg.Cluster.NIC) // seconds
	g := ina.Grant{Job: 0, Slots: 1 << 20, PSFraction: 0.25}
	j.phase, j.grant = phaseSync, g
	r.beginPhase(j, r.plan(j, g))
	r.runPhase(0)
	const w = 332.0 / 256
	r.sim.MustAt(engine.Seconds(0.4*w*SB), func() { r.regrant(ina.Grant{Job: 0, Slots: 1 << 20}) })
	r.sim.Run()
	want := 1.1*w*SB + r.dev.ChunkRTT.Seconds()
	if got := end.Seconds(); math.Abs(got-want)/want > 1e-6 {
		t.Errorf("phase ended at %.9f s, want %.9f (1.1 S/B + RTT)", got, want)
	}
}

// ATP's parameter-server legs by hand: the switch sends every aggregated
// chunk to the job's PS and the PS's reply carries the result back
// (in-ATP/ATP server/ParameterServer.cc). A lone job on k = 8 single-GPU
// servers, nothing colliding, the whole need (its rate at the NIC's
// line rate): ps-sharded, each server's shard takes 1/8 of the chunks,
// so every NIC carries S w (1 + 1/8) each way and stays saturated: the
// phase takes 1.125 S w / B; ps-single, the PS's NIC carries its own
// S w and the job's S w: 2 S w / B; ps-dedicated, the PS's machine
// carries the job's S w on a NIC of its own, in parallel with the
// workers': S w / B. SwitchML (static) returns results from the switch:
// S w / B. w = 332/256 (SwitchML's packet).
func TestPSLegsByHand(t *testing.T) {
	for _, c := range []struct {
		policy, fallback string
		want             float64 // in units of S w / B
	}{
		{"atp", FallbackSharded, 1.125},
		{"esa", FallbackSharded, 1.125},
		{"atp", FallbackSingle, 2},
		{"atp", FallbackDedicated, 1},
		{"static", FallbackSharded, 1},
	} {
		r, j, cfg := rackOfEight(t, c.policy, c.fallback)
		if got := lonePhase(r, j, cfg, ina.Grant{Slots: r.need()}); math.Abs(got-c.want)/c.want > 1e-6 {
			t.Errorf("%s, %s: phase %.6f S w/B, want %.3f", c.policy, c.fallback, got, c.want)
		}
	}
}

// ina.use when-faster runs a job's host all-reduce where in-network
// aggregation is slower for it alone, and counts it. With the packets'
// headers (w = 332/256 on the wire per byte, h = 4178/4096 for RoCEv2) a
// ring of 2 servers moves S h, the switch S w: the ring wins, so a
// 2-GPU job runs its ring under static and its JCT is none's to the
// nanosecond; at 8 servers the ring moves 1.75 S h > S w, so an 8-GPU
// job aggregates (faster than none), unless the pool holds a single
// slot, which streams at 332 B per 5 us. always aggregates.
func TestUseWhenFaster(t *testing.T) {
	for _, c := range []struct {
		gpus   int
		use    string
		slots  OrDevice
		onRing bool
	}{{2, UseWhenFaster, FromDevice, true}, {8, UseWhenFaster, FromDevice, false}, {8, UseWhenFaster, 1, true}, {2, UseAlways, FromDevice, false}} {
		cfg, env := listed(train.Job{ID: "a", GPUs: c.gpus, Iterations: 20, Model: "vgg16"})
		cfg.Cluster.Servers = 8
		cfg.INA.Use, cfg.INA.Slots = c.use, c.slots
		cfg.Policies, cfg.Baseline = []string{"static", "none"}, ""
		r := mustRun(t, cfg, env)
		st, none := policy(t, r, "static"), policy(t, r, "none")
		if got := st.HostRingJobs == 1; got != c.onRing {
			t.Errorf("%d GPUs, %s, pool %v: %v jobs on the host ring, want on it: %v", c.gpus, c.use, c.slots, st.HostRingJobs, c.onRing)
		}
		if c.onRing && st.JCT.Mean != none.JCT.Mean {
			t.Errorf("%d GPUs, %s: JCT %.9f s on the ring, none's %.9f", c.gpus, c.use, st.JCT.Mean, none.JCT.Mean)
		}
		if !c.onRing && c.use == UseWhenFaster && !(st.JCT.Mean < none.JCT.Mean) {
			t.Errorf("%d GPUs: aggregating took %.6f s, none %.6f: when-faster chose the slower", c.gpus, st.JCT.Mean, none.JCT.Mean)
		}
		if c.use == UseAlways && !(st.JCT.Mean > none.JCT.Mean) {
			t.Errorf("%d GPUs, always: aggregating took %.6f s, none %.6f: want it slower than the ring", c.gpus, st.JCT.Mean, none.JCT.Mean)
		}
	}
}

// A regrant carries each PS leg's own progress over (ATP's protocol). As
// in TestRegrantWithinAPhaseByHand, a job on k = 8 servers starts with a
// quarter of its chunks colliding, now with its legs: each NIC carries
// its in-network flow (0.75 S w), its leg (0.75/8 S w = 0.09375) and a
// shard flow (0.5), at B/3 each, in S w/B. The legs end at 0.28125; the
// other two then run at B/2. At t1 = 0.4 the collisions end: each
// worker has 0.596875 in-network and 0.346875 of shard traffic (0.1734375
// S of gradient) left, 0.7703125 S in all, now all through the switch.
// The legs, which ran ahead, owe 1/8 of that less the 0.596875/8 they
// had already sent ahead: 0.0216796875. From t1 each NIC carries
// 0.7703125 + 0.0216796875 = 0.7919921875 and stays saturated: the
// phase ends at 1.1919921875 S w/B plus the round trip. Restarting the
// legs from the workers' share (0.0962890625) would end it at
// 1.2666015625 instead.
func TestPSLegsCarryTheirProgressOverARegrant(t *testing.T) {
	r, j, cfg := rackOfEight(t, "atp", FallbackSharded)
	var end engine.Time
	j.onFlow = func() { r.flowDone(0) }
	j.onEndSync = func() { end = r.sim.Now() }
	const w = 332.0 / 256
	SwB := w * j.grad / float64(cfg.Cluster.NIC) // seconds
	g := ina.Grant{Job: 0, Slots: 1 << 20, PSFraction: 0.25}
	j.phase, j.grant = phaseSync, g
	r.beginPhase(j, r.plan(j, g))
	r.runPhase(0)
	r.sim.MustAt(engine.Seconds(0.4*SwB), func() { r.regrant(ina.Grant{Job: 0, Slots: 1 << 20}) })
	r.sim.Run()
	want := 1.1919921875*SwB + r.dev.ChunkRTT.Seconds()
	if got := end.Seconds(); math.Abs(got-want)/want > 1e-6 {
		t.Errorf("phase ended at %.9f s, want %.9f (1.1919921875 S w/B + RTT)", got, want)
	}
}

// rackOfEight builds a rack of 8 single-GPU servers under policy and
// fallback, and places one ResNet-50 job of 8 GPUs across all of them
// (job 0), for the hand derivations above.
// lonePhase is job j's synchronisation under grant g on otherwise idle
// links, less its last chunk's round trip, in units of S w / B: S its
// gradient, w = 332/256 the wire bytes per byte of SwitchML's and ATP's
// packets, B the NIC's rate.
func lonePhase(r *rack, j *jobState, cfg Config, g ina.Grant) float64 {
	got := r.planTime(r.planFresh(j, g)) - r.dev.ChunkRTT
	return got.Seconds() / (332.0 / 256 * j.grad / float64(cfg.Cluster.NIC))
}

func rackOfEight(t *testing.T, policy, fallback string) (*rack, *jobState, Config) {
	t.Helper()
	cfg, _ := listed()
	cfg.Cluster.Servers = 8
	cfg.INA.Fallback = fallback
	st, err := cfg.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.addModel("resnet50"); err != nil {
		t.Fatal(err)
	}
	pol, _ := ina.New(policy, st.pool(1), nil)
	r, err := newRack(st, []train.Job{{ID: "a", GPUs: 8, Iterations: 1, Model: "resnet50"}}, pol, policy)
	if err != nil {
		t.Fatal(err)
	}
	j := &r.jobs[0]
	j.servers, j.gpusOn, j.gpus = []int{0, 1, 2, 3, 4, 5, 6, 7}, []int{1, 1, 1, 1, 1, 1, 1, 1}, 8
	return r, j, cfg
}

// A spanning job that holds no aggregator in any phase is counted: under
// static with one partition, of two 8-GPU jobs arriving 1 ms apart the
// first (longer) takes it and the second runs its host all-reduce until
// it ends, before the partition frees: 1 such job. Under atp both share
// the pool: none. none itself is not counted (it asks for nothing).
func TestNoAggregatorJobsCounted(t *testing.T) {
	cfg, env := listed(train.Job{ID: "long", GPUs: 8, Iterations: 400, Model: "vgg16"},
		train.Job{ID: "short", GPUs: 8, Iterations: 5, Model: "vgg16", Arrival: engine.Seconds(0.001)})
	cfg.Cluster.Servers, cfg.Cluster.GPUsPerServer = 16, 1
	cfg.INA.Use, cfg.INA.Slots = UseAlways, 189
	cfg.Policies, cfg.Baseline = []string{"static", "atp", "none"}, ""
	r := mustRun(t, cfg, env)
	for name, want := range map[string]float64{"static": 1, "atp": 0, "none": 0} {
		if got := policy(t, r, name).NoAggregatorJobs; got != want {
			t.Errorf("%s: %v jobs without aggregators, want %v", name, got, want)
		}
	}
}

// An eviction (esa) sends each evicted partial aggregate once from the
// switch to the job's PS, not once per worker: a lone job on k = 8
// servers (ps-sharded, slots plentiful, with ATP's legs: 1.125 S w/B, as
// in TestPSLegsByHand) streaming at B on every NIC loses E aggregators at
// t1 = 0.4 S w/B. Each shard's leg then carries E/8 chunk packets (332 B)
// more, on NICs saturated to the end, so the phase ends E x 332 / (8 B)
// later. (Charged to every worker's fallback, as before, it was 14 times
// that.)
func TestEvictionsGoOnceToThePS(t *testing.T) {
	r, j, cfg := rackOfEight(t, "esa", FallbackSharded)
	var end engine.Time
	j.onFlow = func() { r.flowDone(0) }
	j.onEndSync = func() { end = r.sim.Now() }
	B := float64(cfg.Cluster.NIC)
	const w = 332.0 / 256
	Sw := j.grad * w
	g := ina.Grant{Job: 0, Slots: 1 << 20}
	j.phase, j.grant = phaseSync, g
	r.beginPhase(j, r.plan(j, g))
	r.runPhase(0)
	const E = 100000
	r.sim.MustAt(engine.Seconds(0.4*Sw/B), func() { r.regrant(ina.Grant{Job: 0, Slots: 1 << 20, Evicted: E}) })
	r.sim.Run()
	want := 1.125*Sw/B + E*332/(8*B) + r.dev.ChunkRTT.Seconds()
	if got := end.Seconds(); math.Abs(got-want)/want > 1e-6 {
		t.Errorf("phase ended at %.9f s, want %.9f (1.125 S w/B %.9f + E x 332/(8B) %.9f + RTT)", got, want, 1.125*Sw/B, E*332/(8*B))
	}
}

// A regrant that changes nothing moves no byte (for workers in step,
// as a lone job's are; see regrant for those out of step): a job on k = 8 servers
// with a quarter of its chunks colliding ends its phase at the same
// nanosecond whether or not an unchanged grant is applied part-way,
// under every fallback, with ATP's PS legs and without, and whenever
// the regrant comes (the fallback ahead of the device or behind it).
// Before, a regrant re-split all that was left by the grant's share,
// moving the fallback's backlog onto the device: a review measured a
// ps-dedicated phase cut from 2 to 1.25 S w/B and a ps-single one
// lengthened from 3 to 4, so a job's time rested on how often the pool
// moved (17 of these cases failed).
func TestUnchangedRegrantMovesNothing(t *testing.T) {
	for _, fb := range []string{FallbackSharded, FallbackSingle, FallbackDedicated} {
		for _, legs := range []bool{false, true} {
			for _, at := range []float64{0.1, 0.5, 0.9, 1.5} {
				phase := func(regrant bool) engine.Time {
					r, j, _ := rackOfEight(t, "atp", fb)
					r.resultsViaPS = legs
					var end engine.Time
					j.onFlow = func() { r.flowDone(0) }
					j.onEndSync = func() { end = r.sim.Now() }
					g := ina.Grant{Job: 0, Slots: 1 << 20, PSFraction: 0.25}
					j.phase, j.grant = phaseSync, g
					r.beginPhase(j, r.plan(j, g))
					r.runPhase(0)
					alone := r.planTime(r.planFresh(j, g))
					if regrant {
						r.sim.MustAt(engine.Time(at*float64(alone)), func() { r.regrant(g) })
					}
					r.sim.Run()
					return end
				}
				without, with := phase(false), phase(true)
				if d := math.Abs(float64(with - without)); d > 1e-9*float64(without)+1 {
					t.Errorf("%s, legs %v, regrant at %.1f of the phase: ends at %v, %v without it", fb, legs, at, with, without)
				}
			}
		}
	}
}
