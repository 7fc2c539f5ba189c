package training

import (
	"fmt"
	"math"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/resource"
	"github.com/conspirator-sim/conspirator/hw"
	"github.com/conspirator-sim/conspirator/workloads/train"
)

// listed returns a config replaying the given jobs (as a job list would).
func listed(jobs ...train.Job) (Config, Env) {
	c := Defaults()
	c.Jobs.Source = SourceList
	c.Jobs.List = "in-memory"
	return c, Env{ReadList: func(string) ([]train.Job, error) { return jobs, nil }}
}

func mustRun(t *testing.T, c Config, env Env) *Result {
	t.Helper()
	r, err := Run(c, 1, env)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func policy(t *testing.T, r *Result, name string) PolicyResult {
	t.Helper()
	for _, p := range r.Policies {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no policy %s", name)
	return PolicyResult{}
}

// A lone job's iteration is the alpha-beta closed form, to the
// nanosecond: C + 2(n-1) alpha + T(2(n-1)/n S h at the NIC's B) for a
// ring over n single-GPU servers, where h = (4096 + 82) / 4096 is a
// RoCEv2 packet's bytes on the wire per byte of payload; C + T(S w at B)
// + the chunk RTT in the network, where w = (256 + 76) / 256 is
// SwitchML's (a pool larger than every window: the window's rate 512 x
// 332 B / 5 us = 34 GB/s is above the NIC's 12.5 GB/s). The in-network
// phase moves S w over each NIC where the ring moves 2(n-1)/n S h: the
// 2(n-1)/n that SwitchML's and ATP's papers give, less the small
// packets' headers: 1.03x at n = 2 the other way (the ring wins), 1.38x
// at n = 8, 1.57x at most. In-network here is SwitchML's (static), whose
// switch returns the result itself (ATP's parameter-server legs:
// TestPSLegsByHand).
func TestLoneJobClosedForm(t *testing.T) {
	for _, n := range []int{2, 4, 8} {
		const iters = 50
		job := train.Job{ID: "a", GPUs: n, Iterations: iters, Model: "resnet50"}
		c, env := listed(job)
		c.Cluster.Servers = 8
		c.Sync.AllReduce = AllReduceRing
		c.Policies, c.Baseline = []string{"none", "static"}, ""
		c.INA.Use = UseAlways // in-network at n = 2 as well, where the ring wins
		r := mustRun(t, c, env)
		m, _ := train.Lookup("resnet50")
		comp, _ := m.ComputeSeconds("a100-80gb")
		C := max(1, engine.Seconds(comp))
		S := m.GradientBytes(4)
		B := 100e9 / 8
		alpha := c.Cluster.NetLatency.Time()
		const h, w = 4178.0 / 4096, 332.0 / 256
		ring := C + engine.Time(2*(n-1))*alpha + resource.TransferTime(2*float64(n-1)/float64(n)*S*h, B)
		dev, _ := hw.LookupAggregator("tofino-switchml")
		inNet := C + resource.TransferTime(S*w, B) + dev.ChunkRTT
		if got, want := policy(t, r, "none").JCT.Mean, (engine.Time(iters) * ring).Seconds(); got != want {
			t.Errorf("n=%d ring: JCT %.9f s, want %.9f", n, got, want)
		}
		if got, want := policy(t, r, "static").JCT.Mean, (engine.Time(iters) * inNet).Seconds(); got != want {
			t.Errorf("n=%d in-network: JCT %.9f s, want %.9f", n, got, want)
		}
		ringBW := resource.TransferTime(2*float64(n-1)/float64(n)*S*h, B).Seconds()
		inBW := resource.TransferTime(S*w, B).Seconds()
		if want := 2 * float64(n-1) / float64(n) * h / w; math.Abs(ringBW/inBW-want) > 1e-6 {
			t.Errorf("n=%d: the ring moves %.6f times the in-network bytes, want %.6f", n, ringBW/inBW, want)
		}
	}
}

// Two jobs sharing a server share its NIC, max-min: on 3 servers of 2
// GPUs, job A (3 GPUs) takes servers 0 (2) and 1 (1), job B (3 GPUs)
// servers 1 (1) and 2 (2). Hierarchical rings of 2 servers: A's flows
// 0->1 and 1->0, B's 1->2 and 2->1, each of S bytes (2(k-1)/k S, k=2).
// Server 1's NIC carries one flow of each job each way, so all four run at
// B/2 while the phases overlap, which they do: same model, same start.
// Each iteration is C + T(S at B/2) + 2 alpha + the intra-server part,
// 2 alpha_nvlink + T(S at NVLink) (2(g-1)/g S with g = 2); the NICs carry
// RoCEv2 packets, h = (4096 + 82) / 4096 bytes on the wire per byte.
func TestTwoJobsShareANIC(t *testing.T) {
	const iters = 20
	a := train.Job{ID: "a", GPUs: 3, Iterations: iters, Model: "resnet50"}
	b := train.Job{ID: "b", GPUs: 3, Iterations: iters, Model: "resnet50"}
	c, env := listed(a, b)
	c.Cluster.Servers, c.Cluster.GPUsPerServer = 3, 2
	c.Policies, c.Baseline = []string{"none"}, ""
	r := mustRun(t, c, env)
	m, _ := train.Lookup("resnet50")
	comp, _ := m.ComputeSeconds("a100-80gb")
	C := max(1, engine.Seconds(comp))
	S := m.GradientBytes(4)
	nv, _ := hw.LookupIntraServerLink("nvlink3")
	alpha := c.Cluster.NetLatency.Time()
	const h = 4178.0 / 4096
	it := C + resource.TransferTime(S*h, 100e9/8/2) + 2*alpha + 2*nv.Latency + resource.TransferTime(S, nv.BytesPerSec)
	p := policy(t, r, "none")
	if want := (engine.Time(iters) * it).Seconds(); math.Abs(p.JCT.Mean-want) > 1e-6 {
		t.Errorf("JCT %.9f s, want %.9f (both jobs at half the shared NIC)", p.JCT.Mean, want)
	}
	if p.SteppedIterations == 0 {
		t.Errorf("jobs sharing a server were fast-forwarded")
	}
}

// Fast-forwarding changes no result: random workloads (arrivals spread
// out, jobs of 1 to 12 GPUs on servers of 4, so jobs share servers, span
// them, or run alone) give every job the same end, to the nanosecond
// where it ran alone throughout, stepped phase by phase or fast-forwarded,
// under every policy with a pool large enough that grants never change.
// Where a job stops running alone, fast-forwarding lets it finish the
// synchronisation it is in at the old pace: the mean JCT differs by less
// than 0.5% there (measured, and held here).
func TestFastForwardEqualsStepping(t *testing.T) {
	r := engine.NewStream(5, "test/ff")
	var jobs []train.Job
	for k := range 40 {
		jobs = append(jobs, train.Job{ID: fmt.Sprint("j", k), Arrival: engine.Seconds(r.Float64() * 200), GPUs: 1 + r.IntN(12),
			Iterations: 20 + r.IntN(200), Model: []string{"resnet50", "vgg16", "bert-large"}[r.IntN(3)]})
	}
	for _, pol := range []string{"none", "static", "esa", "atp"} {
		var means [2]float64
		var ff int64
		for i, step := range []bool{true, false} {
			c, env := listed(jobs...)
			c.Cluster.Servers, c.Cluster.GPUsPerServer = 8, 4
			c.Policies, c.Baseline = []string{pol}, ""
			c.INA.Slots = 1 << 20
			c.stepAll = step
			p := policy(t, mustRun(t, c, env), pol)
			means[i] = p.JCT.Mean
			if !step {
				ff = p.FastForwarded
			}
		}
		if ff == 0 {
			t.Errorf("%s: nothing was fast-forwarded", pol)
		}
		if d := math.Abs(means[1]-means[0]) / means[0]; d > 0.005 {
			t.Errorf("%s: mean JCT %.6f s stepped, %.6f s fast-forwarded (%.3f%% apart)", pol, means[0], means[1], 100*d)
		}
		t.Logf("%s: mean JCT %.6f s stepped, %.6f s fast-forwarded; %d iterations fast-forwarded", pol, means[0], means[1], ff)
	}
}

// The iteration split by hand. A lone job of 4 GPUs on 4 servers, a
// chunk round trip of 6.79 us: it holds 12.5 GB/s x 6.79 us / 332 B
// (SwitchML's packet: 256 B of values) = 255.6, so 256 slots in flight
// at line rate (its bandwidth-delay product). With a pool of 128, half
// that, its in-network flows stream at 128 x 256 B / 6.79 us = 4.83 GB/s
// of values, so a phase takes S/4.83 GB/s + RTT where its whole need
// would take S w/12.5 GB/s + RTT (w = 332/256, the packet's bytes on the
// wire per byte of values); the difference is waiting for aggregators,
// the rest communication, and compute is C, per iteration. esa runs
// ATP's protocol: each NIC also carries its parameter-server shard's
// quarter of the aggregated chunks and their results (psLegs), capped at
// a quarter of the job's rate: within the pool's rate they fit beside it
// (slow as above), at the whole need the NIC stays saturated with S w
// (1 + 1/4) (fast) under ps-sharded; under ps-dedicated the legs cross
// the PS machine's NIC instead, which carries S w as each worker's does,
// so the whole need takes S w/12.5 GB/s + RTT (fast).
func TestIterationSplitByHand(t *testing.T) {
	const iters = 30
	m, _ := train.Lookup("resnet50")
	comp, _ := m.ComputeSeconds("a100-80gb")
	C := max(1, engine.Seconds(comp))
	S := m.GradientBytes(4)
	dev, _ := hw.LookupAggregator("tofino-switchml")
	rtt := engine.Time(6790)
	slow := resource.TransferTime(S, 128*dev.SlotBytes/rtt.Seconds()) + rtt
	near := func(got float64, want engine.Time) bool { return math.Abs(got-want.Seconds()) <= 2e-9 }
	for _, tc := range []struct {
		fallback string
		legs     float64 // the legs' share of a worker NIC's bytes
	}{{FallbackSharded, 1.0 / 4}, {FallbackDedicated, 0}} {
		job := train.Job{ID: "a", GPUs: 4, Iterations: iters, Model: "resnet50"}
		c, env := listed(job)
		c.Cluster.Servers = 4
		c.INA.Slots = 128
		c.INA.ChunkRTT = RTTOrDevice(6790)
		c.INA.Fallback = tc.fallback
		c.INA.Use = UseAlways // half its need is slower than its ring
		c.Policies, c.Baseline = []string{"esa", "none"}, ""
		r := mustRun(t, c, env)
		fast := resource.TransferTime(S*332/256*(1+tc.legs), 100e9/8) + rtt
		e := policy(t, r, "esa").Iteration
		if !near(e.ComputeS, C) || !near(e.CommS, fast) || !near(e.WaitS, slow-fast) {
			t.Errorf("%s: esa split %+v, want compute %v comm %v wait %v", tc.fallback, e, C, fast, slow-fast)
		}
		if n := policy(t, r, "none").Iteration; n.WaitS != 0 || !(n.CommS > 0) {
			t.Errorf("%s: none split %+v: a ring waits for no aggregator", tc.fallback, n)
		}
	}
	fast := resource.TransferTime(S*332/256*(1+1.0/4), 100e9/8) + rtt
	c2, env2 := listed(train.Job{ID: "a", GPUs: 3, Iterations: iters, Model: "resnet50"}, train.Job{ID: "b", GPUs: 3, Iterations: iters, Model: "resnet50"})
	c2.Cluster.Servers, c2.Cluster.GPUsPerServer = 3, 2
	c2.Policies, c2.Baseline = []string{"static"}, ""
	c2.INA.Slots = 1 << 16
	c2.INA.Use = UseAlways // 2 servers a job: the ring is faster alone
	p := policy(t, mustRun(t, c2, env2), "static")
	if p.Iteration.WaitS != 0 || !(p.Iteration.CommS > fast.Seconds()*1.5) {
		t.Errorf("two jobs sharing NICs with a plentiful pool: split %+v, want no waiting and communication slowed by the sharing (above %v)", p.Iteration, 1.5*fast.Seconds())
	}
}

// The flows of a lone job's synchronisation take the closed form of
// train.SyncSeconds (a second implementation, by formula), for every
// all-reduce form and placements on one server, across servers evenly
// and unevenly: 3 GPUs on one server of 4, 6 as 4+2, 16 as 4x4.
func TestSyncMatchesClosedForm(t *testing.T) {
	m, _ := train.Lookup("vgg16")
	comp, _ := m.ComputeSeconds("a100-80gb")
	C := max(1, engine.Seconds(comp))
	for _, form := range []string{AllReduceRing, AllReduceHierarchical, AllReducePS, AllReducePSDedicated} {
		for _, tc := range []struct {
			gpus   int
			gpusOn []int
		}{{3, []int{3}}, {6, []int{4, 2}}, {16, []int{4, 4, 4, 4}}} {
			const iters = 10
			c, env := listed(train.Job{ID: "a", GPUs: tc.gpus, Iterations: iters, Model: "vgg16"})
			c.Cluster.Servers, c.Cluster.GPUsPerServer = 4, 4
			c.Sync.AllReduce = form
			c.Policies, c.Baseline = []string{"none"}, ""
			p := policy(t, mustRun(t, c, env), "none")
			nv, _ := hw.LookupIntraServerLink("nvlink3")
			// The NICs carry RoCEv2 packets: payload at 4096/4178 of B.
			s, err := train.SyncSeconds(form, m.GradientBytes(4), tc.gpusOn, train.Links{NICBytesPerSec: 100e9 / 8 * 4096 / 4178, Alpha: c.Cluster.NetLatency.Time().Seconds(),
				IntraBytesPerSec: nv.BytesPerSec, IntraAlpha: nv.Latency.Seconds()})
			if err != nil {
				t.Fatal(err)
			}
			want := iters * (C.Seconds() + s)
			if math.Abs(p.JCT.Mean-want) > 1e-6*want {
				t.Errorf("%s, %v: JCT %.9f s, closed form %.9f", form, tc.gpusOn, p.JCT.Mean, want)
			}
		}
	}
}
