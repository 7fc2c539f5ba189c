package resource

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
)

func newNet(t *testing.T, caps ...float64) (*engine.Simulator, *Network, []LinkID) {
	t.Helper()
	sim := engine.New(nil)
	n, err := NewNetwork(sim)
	if err != nil {
		t.Fatal(err)
	}
	var ls []LinkID
	for _, c := range caps {
		l, err := n.AddLink(c)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	return sim, n, ls
}

// Max-min shares derived by hand. Links of 10 and 4 B/s; flow A crosses
// both, B only the first, C only the second. Progressive filling: the
// second link's fair share (4/2) is the tightest, so A and C stop at 2;
// B takes what the first link has left, 10 - 2 = 8. With A capped at 1,
// C takes 3 of the second link and B 9 of the first.
func TestNetworkMaxMinByHand(t *testing.T) {
	sim, n, l := newNet(t, 10, 4)
	a := n.Start(1000, []LinkID{l[0], l[1]}, 0, nil)
	b := n.Start(1000, []LinkID{l[0]}, 0, nil)
	c := n.Start(1000, []LinkID{l[1]}, 0, nil)
	for _, w := range []struct {
		id   FlowID
		want float64
	}{{a, 2}, {b, 8}, {c, 2}} {
		if got := n.Rate(w.id); math.Abs(got-w.want) > 1e-9 {
			t.Errorf("flow %d: rate %v, want %v", w.id, got, w.want)
		}
	}
	n.SetCap(a, 1)
	for _, w := range []struct {
		id   FlowID
		want float64
	}{{a, 1}, {b, 9}, {c, 3}} {
		if got := n.Rate(w.id); math.Abs(got-w.want) > 1e-9 {
			t.Errorf("capped: flow %d: rate %v, want %v", w.id, got, w.want)
		}
	}
	_ = sim
}

// Completion times by hand: two 100-byte flows share a 10 B/s link at 5
// each; at t=20 s both finish. A third, alone on another link, is not
// touched by them (no event moves it).
func TestNetworkCompletionByHand(t *testing.T) {
	sim, n, l := newNet(t, 10, 10)
	var ends []engine.Time
	rec := func() { ends = append(ends, sim.Now()) }
	n.Start(100, []LinkID{l[0]}, 0, rec)
	n.Start(60, []LinkID{l[0]}, 0, rec) // 5 B/s until t=12, then the first gets 10
	n.Start(30, []LinkID{l[1]}, 0, rec) // alone: 3 s
	sim.Run()
	// First: 60 bytes by t=12 (5 B/s), 40 left at 10 B/s: 4 s more, t=16.
	want := []engine.Time{engine.Seconds(3), engine.Seconds(12), engine.Seconds(16)}
	if len(ends) != 3 || ends[0] != want[0] || ends[1] != want[1] || ends[2] != want[2] {
		t.Errorf("completions at %v, want %v", ends, want)
	}
}

// On one link the network is the Bandwidth resource: random flows with
// random caps and starts finish at the same nanoseconds on both (a second
// implementation of the same max-min rule).
func TestNetworkMatchesBandwidthOnOneLink(t *testing.T) {
	r := engine.NewStream(11, "test/network")
	type job struct {
		at         engine.Time
		bytes, cap float64
	}
	var jobs []job
	for range 200 {
		c := 0.0
		if r.Float64() < 0.4 {
			c = 1 + 30*r.Float64()
		}
		jobs = append(jobs, job{engine.Time(r.IntN(int(engine.Seconds(50)))), 1 + 500*r.Float64(), c})
	}
	run := func(useNet bool) []engine.Time {
		sim := engine.New(nil)
		ends := make([]engine.Time, len(jobs))
		var start func(k int, bytes, cap float64)
		if useNet {
			n, _ := NewNetwork(sim)
			l, _ := n.AddLink(40)
			start = func(k int, bytes, cap float64) { n.Start(bytes, []LinkID{l}, cap, func() { ends[k] = sim.Now() }) }
		} else {
			b, _ := NewBandwidth(sim, 40)
			start = func(k int, bytes, cap float64) { b.Start(bytes, cap, func() { ends[k] = sim.Now() }) }
		}
		for k, j := range jobs {
			sim.MustAt(j.at, func() { start(k, j.bytes, j.cap) })
		}
		sim.Run()
		return ends
	}
	a, b := run(true), run(false)
	for k := range a {
		if d := a[k] - b[k]; d > 1 || d < -1 {
			t.Fatalf("flow %d: network ends at %v, bandwidth at %v", k, a[k], b[k])
		}
	}
}

// Cancel returns what was left and frees the share at once.
func TestNetworkCancel(t *testing.T) {
	sim, n, l := newNet(t, 10)
	a := n.Start(100, []LinkID{l[0]}, 0, func() { t.Error("a cancelled flow ran its done function") })
	b := n.Start(100, []LinkID{l[0]}, 0, nil)
	sim.MustAt(engine.Seconds(4), func() {
		if left := n.Cancel(a); math.Abs(left-80) > 1e-9 {
			t.Errorf("cancelled with %v bytes left, want 80", left)
		}
		if r := n.Rate(b); r != 10 {
			t.Errorf("after the cancel the other flow runs at %v, want 10", r)
		}
	})
	sim.Run()
	if sim.Now() != engine.Seconds(12) {
		t.Errorf("b ends at %v, want 12 s (80 bytes at 10 B/s after t=4)", sim.Now())
	}
}

// CancelAll by hand: three flows share a 10 B/s link (a finished one's
// id among them); at t = 3 s two are cancelled together, with 90 and 90
// bytes left (each sent 10 of 100 at 10/3 B/s), the finished id gives 0,
// and the third runs alone at 10 B/s: its 90 bytes end at 12 s.
func TestNetworkCancelAll(t *testing.T) {
	sim, n, l := newNet(t, 10, 1000)
	gone := n.Start(1, []LinkID{l[1]}, 0, nil) // ends at 1 ms
	a := n.Start(100, []LinkID{l[0]}, 0, func() { t.Error("a cancelled flow ran its done function") })
	b := n.Start(100, []LinkID{l[0]}, 0, func() { t.Error("a cancelled flow ran its done function") })
	c := n.Start(100, []LinkID{l[0]}, 0, nil)
	sim.MustAt(engine.Seconds(3), func() {
		left := n.CancelAll([]FlowID{a, gone, b}, nil)
		if len(left) != 3 || math.Abs(left[0]-90) > 1e-9 || left[1] != 0 || math.Abs(left[2]-90) > 1e-9 {
			t.Errorf("left %v, want [90 0 90]", left)
		}
		if r := n.Rate(c); r != 10 {
			t.Errorf("after the cancel the third flow runs at %v, want 10", r)
		}
	})
	sim.Run()
	if sim.Now() != engine.Seconds(12) {
		t.Errorf("c ends at %v, want 12 s", sim.Now())
	}
}

// StartAll is Start of each transfer at the same instant, with one
// recomputation: random flows over random paths of 6 links, started in
// groups at random instants, end at the same nanoseconds either way, and
// flows reused after they finish keep nothing of their past.
func TestNetworkStartAllEqualsStart(t *testing.T) {
	caps := []float64{10, 7, 12, 5, 9, 11}
	r := engine.NewStream(3, "startall")
	type tr struct {
		at    engine.Time
		bytes float64
		path  []LinkID
		cap   float64
	}
	var groups [][]tr
	for g := range 40 {
		var grp []tr
		for range 1 + r.IntN(4) {
			a, b := LinkID(r.IntN(6)), LinkID(r.IntN(6))
			path := []LinkID{a}
			if b != a {
				path = append(path, b)
			}
			capv := 0.0
			if r.IntN(3) == 0 {
				capv = 1 + 5*r.Float64()
			}
			grp = append(grp, tr{at: engine.Seconds(float64(g) * 3 * r.Float64()), bytes: 1 + 100*r.Float64(), path: path, cap: capv})
		}
		groups = append(groups, grp)
	}
	run := func(all bool) []engine.Time {
		sim, n, _ := newNet(t, caps...)
		var ends []engine.Time
		for gi, grp := range groups {
			at := grp[0].at
			sim.MustAt(at, func() {
				if all {
					var ts []Transfer
					for i, x := range grp {
						i := i
						ts = append(ts, Transfer{Bytes: x.bytes, Path: x.path, Cap: x.cap, Done: func() { ends[gi*4+i] = sim.Now() }})
					}
					n.StartAll(ts, nil)
					return
				}
				for i, x := range grp {
					i := i
					n.Start(x.bytes, x.path, x.cap, func() { ends[gi*4+i] = sim.Now() })
				}
			})
		}
		ends = make([]engine.Time, 4*len(groups))
		sim.Run()
		return ends
	}
	one, all := run(false), run(true)
	for i := range one {
		if d := one[i] - all[i]; d < -1 || d > 1 {
			t.Fatalf("transfer %d ends at %v started one by one, %v started together", i, one[i], all[i])
		}
	}
}

// The two forms of progressive filling give the same rates: random
// components of up to 40 flows over up to 12 links, some capped, filled
// by passes and by the heap, agree to 1e-9 of each rate.
func TestFillByLevelsEqualsFillByHeap(t *testing.T) {
	r := engine.NewStream(9, "fill")
	for trial := range 300 {
		_, n, ls := newNet(t)
		nl := 1 + r.IntN(12)
		for range nl {
			l, _ := n.AddLink(1 + 20*r.Float64())
			ls = append(ls, l)
		}
		var flows []*netFlow
		for range 1 + r.IntN(40) {
			path := randomPath(r, ls)
			capv := 0.0
			if r.IntN(3) == 0 {
				capv = 0.5 + 10*r.Float64()
			}
			flows = append(flows, n.add(Transfer{Bytes: 100, Path: path, Cap: capv}))
		}
		n.component(ls)
		fl, lk := slices.Clone(n.compFlows), slices.Clone(n.compLinks)
		n.fillByLevels(fl, lk)
		a := make([]float64, len(flows))
		for i, f := range flows {
			a[i] = f.fill
		}
		n.fillByHeap(fl, lk)
		for i, f := range flows {
			if math.Abs(f.fill-a[i]) > 1e-9*math.Max(1, a[i]) {
				t.Fatalf("trial %d flow %d: %v by levels, %v by heap", trial, i, a[i], f.fill)
			}
		}
	}
}

// A batch defers the recomputation to its end: inside it, a started
// flow has no rate yet and a cancelled one tells its bytes left exactly
// (sent at the rates from before the batch); at its end the rates are
// the max-min shares of what is left, as unbatched, and the flows end
// where the hand derivation puts them. Link of 10 B/s; A (100 B) and B
// (100 B) share it at 5 each; at t=4 s (A and B have 80 left) a batch
// cancels B and starts C (40 B): A and C share at 5, C ends at t=12, A
// (40 left) then at 10 B/s, t=16.
func TestNetworkBatchRecomputesOnceAtItsEnd(t *testing.T) {
	sim, n, l := newNet(t, 10)
	var ends []string
	a := n.Start(100, []LinkID{l[0]}, 0, func() { ends = append(ends, "A@"+sim.Now().String()) })
	b := n.Start(100, []LinkID{l[0]}, 0, nil)
	var c FlowID
	sim.MustAt(engine.Seconds(4), func() {
		n.BeginBatch()
		n.BeginBatch() // nested: the outer end recomputes
		left := n.CancelAll([]FlowID{b}, nil)
		if math.Abs(left[0]-80) > 1e-9 {
			t.Errorf("B cancelled with %v bytes left, want 80", left[0])
		}
		c = n.Start(40, []LinkID{l[0]}, 0, func() { ends = append(ends, "C@"+sim.Now().String()) })
		if r := n.Rate(c); r != 0 {
			t.Errorf("in the batch C's rate is %v, want 0 (not recomputed yet)", r)
		}
		if r := n.Rate(a); r != 5 {
			t.Errorf("in the batch A's rate is %v, want 5 (from before it)", r)
		}
		if got := n.Remaining(a); math.Abs(got-80) > 1e-9 {
			t.Errorf("in the batch A has %v left, want 80", got)
		}
		if !n.EndBatch() {
			t.Error("inner EndBatch reports no batch")
		}
		if r := n.Rate(c); r != 0 {
			t.Errorf("after the inner end C's rate is %v, want 0 (the outer batch is open)", r)
		}
		n.EndBatch()
		if ra, rc := n.Rate(a), n.Rate(c); ra != 5 || rc != 5 {
			t.Errorf("after the batch A, C at %v, %v B/s, want 5, 5", ra, rc)
		}
	})
	sim.Run()
	want := []string{"C@" + engine.Seconds(12).String(), "A@" + engine.Seconds(16).String()}
	if !slices.Equal(ends, want) {
		t.Errorf("ends %v, want %v", ends, want)
	}
	if n.EndBatch() {
		t.Error("EndBatch with no batch open reports one")
	}
}

// The incremental rates (a connected component at a time, no fill where a
// flow leaves links with capacity to spare, flows reset in place, batches)
// equal a max-min fill of the whole network from scratch (the first form
// of fillByLevels over every running flow and link) after every action of
// random runs: flows of random paths, caps and sizes start one by one or
// together, are cancelled, reset to new bytes and caps, and end by
// themselves; about half the actions run in a batch. Each run also ends
// with every flow done or cancelled, so no completion was lost.
func TestNetworkIncrementalEqualsFromScratch(t *testing.T) {
	for seed := range 30 {
		r := engine.NewStream(uint64(seed), "net-incremental")
		var caps []float64
		for range 2 + r.IntN(12) {
			c := 1 + 20*r.Float64()
			if r.IntN(2) == 0 {
				c = float64(1 + r.IntN(4))
			}
			caps = append(caps, c)
		}
		sim, n, ls := newNet(t, caps...)
		var ids []FlowID
		started, finished, cancelled := 0, 0, 0
		transfer := func() Transfer {
			path := randomPath(r, ls)
			started++
			return Transfer{Bytes: 1 + 50*r.Float64(), Path: path, Cap: randomCap(r), Done: func() { finished++ }}
		}
		check := func(step int) {
			if n.flushing {
				return // flows ended at this instant: their rates are being recomputed
			}
			var flows []*netFlow
			var got []float64
			for _, f := range n.slots {
				if f.running {
					flows = append(flows, f)
					got = append(got, f.rate)
				}
			}
			refFillByLevels(n, flows, ls)
			for i, f := range flows {
				if d := math.Abs(f.fill - got[i]); d > 1e-9*math.Max(1, f.fill) {
					t.Fatalf("seed %d step %d: flow on %v at %v B/s, from scratch %v", seed, step, f.path, got[i], f.fill)
				}
				f.fill = got[i]
			}
		}
		for step := range 300 {
			sim.MustAt(engine.Time(r.IntN(20_000_000_000)), func() {
				batch := r.IntN(2) == 0
				if batch {
					n.BeginBatch()
				}
				for range 1 + r.IntN(3) {
					switch a := r.IntN(10); {
					case a < 4:
						tr := transfer()
						ids = append(ids, n.Start(tr.Bytes, tr.Path, tr.Cap, tr.Done))
					case a < 5:
						ts := []Transfer{transfer(), transfer(), transfer()}
						ids = n.StartAll(ts, ids)
					case a < 7 && len(ids) > 0:
						id := ids[r.IntN(len(ids))]
						if n.Running(id) {
							n.Cancel(id)
							cancelled++
						}
					case len(ids) > 0:
						n.Reset(ids[r.IntN(len(ids))], 1+30*r.Float64(), float64(r.IntN(3)))
					}
				}
				if batch {
					n.EndBatch()
				}
				check(step)
			})
		}
		sim.Run()
		if finished+cancelled != started || n.Flows() != 0 {
			t.Fatalf("seed %d: %d started, %d finished, %d cancelled, %d still running", seed, started, finished, cancelled, n.Flows())
		}
	}
}

// randomPath is a path of one to four distinct links of ls, drawn from r.
func randomPath(r *engine.Stream, ls []LinkID) []LinkID {
	var path []LinkID
	for range 1 + r.IntN(4) {
		if l := ls[r.IntN(len(ls))]; !slices.Contains(path, l) {
			path = append(path, l)
		}
	}
	return path
}

// Reset is a cancel and a start of the same transfer: two networks on
// one simulator, one resetting flows in place and the other cancelling
// and restarting them (same bytes, cap and path), in and out of batches,
// with resets to zero bytes, to the bytes left and to new caps, end every
// transfer at the same nanosecond, and Remaining after a reset is the
// new bytes.
func TestNetworkResetEqualsCancelAndStart(t *testing.T) {
	for seed := range 100 {
		r := engine.NewStream(uint64(seed), "net-reset")
		sim := engine.New(nil)
		a, _ := NewNetwork(sim)
		b, _ := NewNetwork(sim)
		var ls []LinkID
		for range 2 + r.IntN(8) {
			c := float64(1 + r.IntN(4))
			l, _ := a.AddLink(c)
			b.AddLink(c)
			ls = append(ls, l)
		}
		type xfer struct {
			idA, idB   FlowID
			path       []LinkID
			endA, endB engine.Time
		}
		var xs []*xfer
		for step := range 200 {
			sim.MustAt(engine.Time(r.IntN(10_000_000_000)), func() {
				batch := r.IntN(2) == 0
				if batch {
					a.BeginBatch()
					b.BeginBatch()
				}
				switch k := r.IntN(3); {
				case k == 0 || len(xs) == 0:
					x := &xfer{path: randomPath(r, ls), endA: -1, endB: -1}
					bytes, capv := 1+40*r.Float64(), float64(r.IntN(3))
					x.idA = a.Start(bytes, x.path, capv, func() { x.endA = sim.Now() })
					x.idB = b.Start(bytes, x.path, capv, func() { x.endB = sim.Now() })
					xs = append(xs, x)
				default:
					x := xs[r.IntN(len(xs))]
					if !a.Running(x.idA) {
						break
					}
					bytes := 1 + 40*r.Float64()
					switch r.IntN(3) {
					case 0:
						bytes = 0
					case 1:
						bytes = a.Remaining(x.idA)
					}
					capv := float64(r.IntN(3))
					if !a.Reset(x.idA, bytes, capv) {
						t.Fatalf("seed %d step %d: Reset of a running flow reports it was not", seed, step)
					}
					if got := a.Remaining(x.idA); got != bytes {
						t.Fatalf("seed %d step %d: %v bytes left after a reset to %v", seed, step, got, bytes)
					}
					b.Cancel(x.idB)
					x.idB = b.Start(bytes, x.path, capv, func() { x.endB = sim.Now() })
				}
				if batch {
					a.EndBatch()
					b.EndBatch()
				}
			})
		}
		sim.Run()
		for i, x := range xs {
			if x.endA < 0 || x.endA != x.endB {
				t.Fatalf("seed %d transfer %d: ends at %v reset in place, %v cancelled and restarted", seed, i, x.endA, x.endB)
			}
		}
	}
}

// randomCap is a flow's cap drawn from r: none half the time, else any
// rate or one of a few that tie (0 is uncapped).
func randomCap(r *engine.Stream) float64 {
	switch r.IntN(4) {
	case 0:
		return 0.5 + 10*r.Float64()
	case 1:
		return float64(1+r.IntN(3)) / 3
	}
	return 0
}

// The flows' ends share one engine event at the earliest end: however
// many flows run, one event is pending, and the flows end at their own
// nanoseconds, earliest first, those ending at one instant in the order
// their ends were set (here, their starts).
func TestNetworkEndsShareOneEvent(t *testing.T) {
	const k = 40
	caps := make([]float64, k+2)
	for i := range caps {
		caps[i] = 1e9 // 1 GB/s: a megabyte a millisecond
	}
	sim, n, l := newNet(t, caps...)
	type end struct {
		flow int
		at   engine.Time
	}
	var got []end
	for i := range k {
		n.Start(float64(k-i)*1e6, []LinkID{l[i]}, 0, func() { got = append(got, end{i, sim.Now()}) })
	}
	// Two flows on links of their own that end together, after flow k-1
	// (1 ms) and before flow k-2 (2 ms).
	n.Start(1.5e6, []LinkID{l[k]}, 0, func() { got = append(got, end{k, sim.Now()}) })
	n.Start(1.5e6, []LinkID{l[k+1]}, 0, func() { got = append(got, end{k + 1, sim.Now()}) })
	if p := sim.Pending(); p != 1 {
		t.Fatalf("%d flows running, %d engine events pending; want 1 (the network's)", k+2, p)
	}
	sim.Run()
	var want []end
	for i := k - 1; i >= 0; i-- {
		want = append(want, end{i, engine.Time(k-i) * engine.Millisecond})
		if i == k-1 {
			want = append(want, end{k, 1500 * engine.Microsecond}, end{k + 1, 1500 * engine.Microsecond})
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("ends %v\nwant %v", got, want)
	}
}

// A flow whose end lies past the engine's horizon stops the run with the
// engine's error, as its own event would, even while earlier ends are
// queued.
func TestNetworkEndPastHorizonStopsTheRun(t *testing.T) {
	sim, n, l := newNet(t, 1e9, 1)
	ran := false
	n.Start(1e6, []LinkID{l[0]}, 0, func() { ran = true })
	n.Start(1e30, []LinkID{l[1]}, 0, nil) // 1e30 s at 1 B/s
	sim.Run()
	var he *engine.HorizonError
	if !errors.As(sim.Err(), &he) {
		t.Fatalf("run ended with %v, want a horizon error", sim.Err())
	}
	if ran {
		t.Errorf("an end after the run stopped ran")
	}
}

// Cancelling or resetting the flow whose end is the network's earliest
// moves the network's one event: the others end at their own times, the
// cancelled one never, the reset one at its new time.
func TestNetworkEarliestEndCancelledOrReset(t *testing.T) {
	sim, n, l := newNet(t, 1e9, 1e9, 1e9, 1e9)
	var got []string
	rec := func(s string) func() { return func() { got = append(got, fmt.Sprintf("%s@%v", s, sim.Now())) } }
	a := n.Start(1e6, []LinkID{l[0]}, 0, rec("a")) // 1 ms: the earliest
	n.Start(2e6, []LinkID{l[1]}, 0, rec("b"))      // 2 ms
	c := n.Start(3e6, []LinkID{l[2]}, 0, rec("c")) // 3 ms
	n.Start(4e6, []LinkID{l[3]}, 0, rec("d"))      // 4 ms
	n.Cancel(a)
	sim.RunUntil(engine.Time(1500) * engine.Microsecond)
	if len(got) != 0 {
		t.Fatalf("by 1.5 ms: %v; want nothing (a cancelled, b at 2 ms)", got)
	}
	// At 1.5 ms, c (1.5 MB left) is reset to 0.1 MB: it now ends first,
	// at 1.6 ms.
	n.Reset(c, 1e5, 0)
	sim.Run()
	want := []string{"c@1.6ms", "b@2ms", "d@4ms"}
	if !slices.Equal(got, want) {
		t.Errorf("ends %v, want %v", got, want)
	}
}
