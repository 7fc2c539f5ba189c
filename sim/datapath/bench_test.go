package datapath

import (
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
)

// BenchmarkConspirator runs the conspirator pipeline at 0% background load
// with the default clients and request, b.N requests in all, and reports
// simulated requests per second of wall time. Statistics stay on (they are
// part of the cost); per-request records are off.
// It runs once per pending-event set (engine.QueueKinds), side by side.
func BenchmarkConspirator(b *testing.B) {
	defer func(k engine.QueueKind) { EventQueue = k }(EventQueue)
	for _, k := range engine.QueueKinds {
		b.Run("queue="+string(k), func(b *testing.B) {
			EventQueue = k
			benchConspirator(b)
		})
	}
}

func benchConspirator(b *testing.B) {
	cfg := Defaults()
	cfg.Paths = []string{PathConspirator}
	cfg.RecordRequests = false
	cfg.WarmupRequests = 0
	cfg.Clients.Requests = max(1, b.N/cfg.Clients.Count)
	if benchSpread {
		t := benchTable()
		cfg.Host.Spread = HostSpreads{Network: t, Copy: t, CPUWork: t, Reply: t}
	}
	b.ReportAllocs()
	b.ResetTimer()
	res, err := Run(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	n := cfg.Clients.Requests * cfg.Clients.Count
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "requests/s")
	// Events per request times the engine's cost per event (BenchmarkSimHold
	// at a few pending events) is a floor under ns/op that no model code
	// can lower: only a coarser model, with fewer events, can.
	b.ReportMetric(float64(res.Paths[0].Events())/float64(n), "events/request")
	if res.Paths[0].Completed != n {
		b.Fatalf("completed %d of %d", res.Paths[0].Completed, n)
	}
}

// BenchmarkConspiratorSpread is BenchmarkConspirator on the binary heap
// with every host spread drawn from a 111-point table (the size
// calibrate --backend host writes): the cost of the draws beside the
// constant run.
func BenchmarkConspiratorSpread(b *testing.B) {
	defer func(k engine.QueueKind) { EventQueue = k }(EventQueue)
	EventQueue = engine.QueueBinaryHeap
	for _, spread := range []bool{false, true} {
		name := "spread=constant"
		if spread {
			name = "spread=empirical"
		}
		b.Run(name, func(b *testing.B) {
			benchSpread = spread
			defer func() { benchSpread = false }()
			benchConspirator(b)
		})
	}
}

// benchSpread makes benchConspirator set every host spread.
var benchSpread bool

func benchTable() Spread {
	var p, q []float64
	for i := range 111 {
		p = append(p, float64(i)/110)
		q = append(q, float64(i*i)/1000)
	}
	return Spread{Distribution: SpreadEmpirical, P: p, ExcessUS: q}
}

// BenchmarkSpreadDraw is one draw from a 111-point table: the cost a
// spread adds per host job, apart from what the varied times do to the
// simulation.
func BenchmarkSpreadDraw(b *testing.B) {
	t := benchTable()
	d := newSpreadDraws(HostSpreads{Network: t, Copy: ConstantSpread(), CPUWork: ConstantSpread(), Reply: ConstantSpread()}, 1)[spreadNetwork]
	s := &system{}
	s.spread[spreadNetwork] = d
	r := &request{}
	b.ReportAllocs()
	var sum engine.Time
	for b.Loop() {
		sum += s.excess(spreadNetwork, r)
	}
	if sum < 0 {
		b.Fatal(sum)
	}
}
