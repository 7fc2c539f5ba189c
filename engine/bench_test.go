package engine

import (
	"container/heap"
	"fmt"
	"testing"
)

// The HOLD model (Jones, "An empirical comparison of priority-queue and
// event-set implementations", CACM 1986): with n events pending, repeatedly
// pop the earliest and push one at its time plus an exponential increment.
// One benchmark op is one hold (one Pop and one Push). The increments are
// drawn once into a ring (mean 1s, so that even at 1e6 pending the typical
// gap of 1ms between events is far above the 1ns resolution), which keeps
// RNG cost out of the timing and makes every implementation see the same
// sequence.

const holdRing = 1 << 16

var holdIncs = func() []Time {
	s := NewStream(1, "hold")
	r := make([]Time, holdRing)
	for i := range r {
		r[i] = Seconds(s.Exp(1))
	}
	return r
}()

// holdBimodal is a classic calendar-queue stress (Ronngren and Ayani,
// ACM TOMACS 1997): 90% of increments Exp(1us), 10% Exp(1s), so most
// events crowd just ahead of now while a tenth lie six decades further out.
var holdBimodal = func() []Time {
	s := NewStream(1, "hold-bimodal")
	r := make([]Time, holdRing)
	for i := range r {
		if s.IntN(10) == 0 {
			r[i] = Seconds(s.Exp(1))
		} else {
			r[i] = Microseconds(s.Exp(1))
		}
	}
	return r
}()

var holdSizes = []int{100, 10_000, 1_000_000}

// holdFn is the callback the raw HOLD events carry: the queues move it with
// each event, as they do for the simulator.
var holdFn = func() {}

// holdState is one warmed-up pending set, kept across the benchmark's
// rounds (b.Run calls the function again with a larger b.N) so that 1e6
// events are pushed once, not once per round.
type holdState struct {
	q    EventQueue
	incs []Time
	seq  uint64
	i    int
}

func newHoldState(q EventQueue, n int, incs []Time) *holdState {
	h := &holdState{q: q, incs: incs}
	for range n {
		h.seq++
		q.Push(Event{At: incs[h.i&(holdRing-1)], Seq: h.seq, Fn: holdFn})
		h.i++
	}
	h.run(2 * n) // reach the steady-state time distribution
	return h
}

func (h *holdState) run(ops int) {
	q, seq, i, incs := h.q, h.seq, h.i, h.incs
	for range ops {
		e, _ := q.Pop()
		seq++
		q.Push(Event{At: e.At + incs[i&(holdRing-1)], Seq: seq, Fn: e.Fn})
		i++
	}
	h.seq, h.i = seq, i
}

// ptrEvent and ptrHeap are the baseline: the textbook Go event set, a
// container/heap of pointers to event structs, one allocation per event.
type ptrEvent struct {
	at   Time
	seq  uint64
	slot int32
}

type ptrHeap []*ptrEvent

func (h ptrHeap) Len() int { return len(h) }
func (h ptrHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h ptrHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *ptrHeap) Push(x any)   { *h = append(*h, x.(*ptrEvent)) }
func (h *ptrHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}

// ptrHold is the same hold loop on the baseline.
type ptrHold struct {
	h   ptrHeap
	seq uint64
	i   int
}

func newPtrHold(n int) *ptrHold {
	p := &ptrHold{}
	for range n {
		p.seq++
		heap.Push(&p.h, &ptrEvent{at: holdIncs[p.i&(holdRing-1)], seq: p.seq})
		p.i++
	}
	p.run(2 * n)
	return p
}

func (p *ptrHold) run(ops int) {
	for range ops {
		e := heap.Pop(&p.h).(*ptrEvent)
		p.seq++
		heap.Push(&p.h, &ptrEvent{at: e.at + holdIncs[p.i&(holdRing-1)], seq: p.seq, slot: e.slot})
		p.i++
	}
}

// BenchmarkHold: ns per hold for every EventQueue and the container/heap
// baseline, at 1e2, 1e4 and 1e6 pending events.
func BenchmarkHold(b *testing.B) {
	impls := append([]string{"container-heap"}, func() []string {
		var s []string
		for _, k := range QueueKinds {
			s = append(s, string(k))
		}
		return s
	}()...)
	for _, impl := range impls {
		for _, n := range holdSizes {
			var run func(int)
			b.Run(fmt.Sprintf("impl=%s/n=%d", impl, n), func(b *testing.B) {
				if run == nil {
					if impl == "container-heap" {
						run = newPtrHold(n).run
					} else {
						run = newHoldState(NewQueue(QueueKind(impl)), n, holdIncs).run
					}
				}
				b.ReportAllocs()
				b.ResetTimer()
				run(b.N)
			})
		}
	}
}

// BenchmarkHoldBimodal is HOLD at 1e4 pending with the bimodal increments,
// the case where a calendar queue's single bucket width fits neither mode.
func BenchmarkHoldBimodal(b *testing.B) {
	for _, k := range QueueKinds {
		var h *holdState
		b.Run("impl="+string(k)+"/n=10000", func(b *testing.B) {
			if h == nil {
				h = newHoldState(NewQueue(k), 10_000, holdBimodal)
			}
			b.ReportAllocs()
			b.ResetTimer()
			h.run(b.N)
		})
	}
}

// simHold is HOLD through the full Simulator: each op fires one callback,
// which schedules its successor (handle, queue push). It runs the way a
// model does, and the way bench/ns3_hold.cc drives ns-3: Run, with the
// callback calling Stop after the ops asked for. With cancel set, each
// firing also cancels the timeout armed by the previous firing and arms
// a new one 10s out, the request-timeout pattern; the dead entries this
// leaves make the simulator compact its queue now and then.
type simHold struct {
	s      *Simulator
	i      int
	left   int // callbacks to run before Stop
	cancel bool
	tmo    Handle
	fire   func()
	noop   func()
}

func newSimHold(k QueueKind, n int, cancel bool) *simHold {
	h := &simHold{s: New(NewQueue(k)), cancel: cancel}
	h.noop = func() { h.count() }
	h.fire = func() {
		h.s.MustAfter(holdIncs[h.i&(holdRing-1)], h.fire)
		h.i++
		if h.cancel {
			h.s.Cancel(h.tmo)
			h.tmo = h.s.MustAfter(10*Second, h.noop)
		}
		h.count()
	}
	for range n {
		h.s.MustAt(holdIncs[h.i&(holdRing-1)], h.fire)
		h.i++
	}
	h.run(2 * n)
	return h
}

func (h *simHold) count() {
	if h.left--; h.left == 0 {
		h.s.Stop()
	}
}

// run fires ops callbacks (ops > 0).
func (h *simHold) run(ops int) {
	h.left = ops
	h.s.Run()
}

func BenchmarkSimHold(b *testing.B) {
	// "default" is what models get (New(nil)): QueueDefault.
	for _, k := range append([]QueueKind{""}, QueueKinds...) {
		name := string(k)
		if k == "" {
			name = "default"
		}
		for _, n := range holdSizes {
			for _, cancel := range []bool{false, true} {
				if n > 10_000 && cancel {
					continue // 1e6: one case per kind keeps the run short
				}
				var h *simHold
				b.Run(fmt.Sprintf("impl=%s/n=%d/cancel=%v", name, n, cancel), func(b *testing.B) {
					if h == nil {
						h = newSimHold(k, n, cancel)
					}
					b.ReportAllocs()
					b.ResetTimer()
					h.run(b.N)
				})
			}
		}
	}
}

// mm1 is a lean M/M/1 queue on the engine, written the way a hot model
// should be: callbacks bound once, the waiting line a ring of arrival
// times, so the only per-event work is the engine's and two Exp draws.
type mm1 struct {
	s                 *Simulator
	arr, svc          *Stream
	meanIA, meanSvc   float64
	busy              bool
	line              []Time
	head              int
	served            int
	sumResp           Time
	arrive, departure func()
	inService         Time // arrival time of the customer in service
}

func newMM1(k QueueKind, seed uint64, meanIA, meanSvc Time) *mm1 {
	m := &mm1{s: New(NewQueue(k)), arr: NewStream(seed, "arrivals"), svc: NewStream(seed, "service"),
		meanIA: float64(meanIA), meanSvc: float64(meanSvc)}
	m.arrive = func() {
		m.s.MustAfter(Time(m.arr.Exp(m.meanIA)), m.arrive)
		if !m.busy {
			m.start(m.s.Now())
			return
		}
		m.line = append(m.line, m.s.Now())
	}
	m.departure = func() {
		m.served++
		m.sumResp += m.s.Now() - m.inService
		m.busy = false
		if m.head < len(m.line) {
			m.start(m.line[m.head])
			m.head++
			if m.head == len(m.line) { // line empty: reuse its storage
				m.line, m.head = m.line[:0], 0
			}
		}
	}
	m.s.MustAfter(Time(m.arr.Exp(m.meanIA)), m.arrive)
	return m
}

func (m *mm1) start(arrived Time) {
	m.busy = true
	m.inService = arrived
	m.s.MustAfter(Time(m.svc.Exp(m.meanSvc)), m.departure)
}

// BenchmarkMM1 runs an M/M/1 at rho = 0.9 end to end; one op is one event,
// and events/s is the throughput a model author can expect from the engine
// (RNG and model code included).
func BenchmarkMM1(b *testing.B) {
	for _, k := range QueueKinds {
		b.Run("impl="+string(k), func(b *testing.B) {
			m := newMM1(k, 1, Microsecond, 900*Nanosecond)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				m.s.Step()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// The lean M/M/1 is also checked against its closed form, so the benchmark
// measures a correct model: W = 1/(mu - lambda) = 1/(1/0.9 - 1) us = 9 us
// at rho = 0.9. The tolerance is loose (5%) because at rho = 0.9 responses
// are strongly correlated; 1e6 customers give a relative SE near 2%.
func TestMM1Closed(t *testing.T) {
	if testing.Short() {
		t.Skip("1e6 customers")
	}
	m := newMM1(QueueQuadHeap, 5, Microsecond, 900*Nanosecond)
	for m.served < 1_000_000 && m.s.Step() {
	}
	w := (m.sumResp / Time(m.served)).Micros()
	t.Logf("M/M/1 rho=0.9: %d customers, simulated W = %.3f us, theory 9 us", m.served, w)
	if w < 9*0.95 || w > 9*1.05 {
		t.Errorf("M/M/1 rho=0.9: simulated W = %.3f us, theory 9 us", w)
	}
}
