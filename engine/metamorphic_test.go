package engine

import (
	"fmt"
	"slices"
	"testing"
)

// simWorkload drives a Simulator with a random, self-scheduling workload:
// each event schedules 0-2 children with delays from the spread, arms a
// far-future timeout half the time and cancels a random armed timeout 45% of
// the time (so dead entries pile up and the simulator compacts its queue),
// cancels a random earlier event (often one that already ran, so both
// outcomes of Cancel occur), and now and then calls Stop. The driver alternates Run, RunUntil and
// Step. It returns the firing trace and checks, on the way, properties any
// correct simulator has whatever its queue:
//   - time never decreases;
//   - at equal times events fire in scheduling order (ids are assigned in
//     scheduling order);
//   - Cancel returns true exactly for events neither run nor cancelled, and
//     a cancelled event never runs; every other event runs exactly once.
func simWorkload(t *testing.T, k QueueKind, spread timeSpread, seed uint64, maxEvents int) []string {
	t.Helper()
	s := New(NewQueue(k))
	rng := NewStream(seed, "sim-workload")
	const (
		pending = iota
		ran
		cancelled
	)
	var state []int
	var handles []Handle
	var trace []string
	lastAt, lastID := Time(-1), -1
	var schedule func(d Time)
	var cancel func(id int)
	var timeouts []int
	fire := func(id int) {
		if state[id] != pending {
			t.Fatalf("%s: event %d ran in state %d", k, id, state[id])
		}
		state[id] = ran
		now := s.Now()
		if now < lastAt || (now == lastAt && id < lastID) {
			t.Fatalf("%s: event %d@%v after %d@%v: not in (time, scheduling) order", k, id, now, lastID, lastAt)
		}
		lastAt, lastID = now, id
		trace = append(trace, fmt.Sprintf("%d@%d", id, now))
		for range rng.IntN(3) {
			schedule(spread.draw(rng))
		}
		if rng.IntN(2) == 0 && len(handles) < maxEvents {
			// A far-future timeout that is usually cancelled: enough dead
			// entries pile up to make the simulator compact its queue.
			timeouts = append(timeouts, len(handles))
			schedule(Second + Time(rng.IntN(1000)))
		}
		if len(timeouts) > 0 && rng.Float64() < 0.45 {
			j := rng.IntN(len(timeouts))
			cancel(timeouts[j])
			timeouts[j] = timeouts[len(timeouts)-1]
			timeouts = timeouts[:len(timeouts)-1]
		}
		if len(handles) > 0 && rng.Float64() < 0.3 {
			cancel(rng.IntN(len(handles)))
		}
		if rng.IntN(100) == 0 {
			s.Stop()
		}
	}
	cancel = func(v int) {
		got := s.Cancel(handles[v])
		if want := state[v] == pending; got != want {
			t.Fatalf("%s: Cancel(event %d in state %d) = %v, want %v", k, v, state[v], got, want)
		}
		if got {
			state[v] = cancelled
		}
		trace = append(trace, fmt.Sprintf("x%d:%v", v, got))
	}
	schedule = func(d Time) {
		if len(handles) >= maxEvents {
			return
		}
		id := len(handles)
		state = append(state, pending)
		d = max(d, 0)
		handles = append(handles, s.MustAfter(d, func() { fire(id) }))
	}
	for range 20 {
		schedule(spread.draw(rng))
	}
	for s.Pending() > 0 {
		switch rng.IntN(3) {
		case 0:
			s.Run()
		case 1:
			s.RunUntil(s.Now() + Time(rng.Exp(1e6)))
		case 2:
			s.Step()
		}
	}
	for id, st := range state {
		if st == pending {
			t.Fatalf("%s: event %d neither ran nor was cancelled", k, id)
		}
	}
	return trace
}

// The metamorphic test: the same random workload through every queue
// implementation must give the identical trace (each trace also passes the
// order checks inside simWorkload). Any difference in event order would
// change the random draws that follow and so the whole rest of the trace.
func TestMetamorphicQueues(t *testing.T) {
	maxEvents := 20000
	if testing.Short() {
		maxEvents = 5000
	}
	for i, sp := range spreads {
		if sp.name == "backwards" {
			continue // the Simulator refuses negative delays; covered at queue level
		}
		t.Run(sp.name, func(t *testing.T) {
			var ref []string
			for _, k := range QueueKinds {
				tr := simWorkload(t, k, sp, uint64(100+i), maxEvents)
				if len(tr) < maxEvents/2 {
					t.Fatalf("%s: trace has %d entries, workload too small to mean anything", k, len(tr))
				}
				if ref == nil {
					ref = tr
					continue
				}
				if !slices.Equal(tr, ref) {
					j := 0
					for j < min(len(tr), len(ref)) && tr[j] == ref[j] {
						j++
					}
					t.Fatalf("%s differs from %s at entry %d of %d/%d", k, QueueKinds[0], j, len(tr), len(ref))
				}
			}
		})
	}
}

// Sanity of the workload generator itself: different seeds give different
// traces, so identical traces across queues are evidence, not a tautology.
func TestMetamorphicWorkloadVaries(t *testing.T) {
	sp := spreads[2]
	a := simWorkload(t, QueueBinaryHeap, sp, 1, 2000)
	b := simWorkload(t, QueueBinaryHeap, sp, 2, 2000)
	if slices.Equal(a, b) {
		t.Error("seeds 1 and 2 gave the same trace")
	}
}
