package engine

import "fmt"

// Handle names a scheduled event so that it can be cancelled. The zero
// Handle names no event; cancelling it is a no-op. A Handle is the event's
// key, (time, scheduling sequence number): the simulator keeps no table of
// pending callbacks, which travel in the queue with their events. A Handle
// means something only to the simulator that returned it.
type Handle struct {
	at  Time
	seq uint64
}

// Valid reports whether h was returned by a successful At or After call.
func (h Handle) Valid() bool { return h.seq != 0 }

// Simulator runs callbacks in simulated-time order.
//
// It is not safe for concurrent use: one simulation, one goroutine. A
// callback may schedule and cancel events and call Stop; it must not call
// Run, RunUntil or Step.
type Simulator struct {
	now   Time
	seq   uint64
	queue EventQueue
	pu    popUntiler // queue's one-step test-and-pop, or nil
	live  int        // scheduled, not yet run or cancelled
	dead  int        // cancelled but still in the queue
	// deadFrom is at most the time of every cancelled event still in the
	// queue (MaxTime when there is none): an event taken before it cannot
	// be a cancelled one, so it is not looked up. Models cancel mostly
	// timeouts and completions later than the events that run meanwhile.
	deadFrom Time
	// last is the key of the last event taken from the queue, run or
	// discarded: keys leave in increasing order and new events are
	// scheduled after it, so an event is still in the queue iff its key
	// is greater than last and compaction has not dropped it.
	lastAt  Time
	lastSeq uint64
	// cancelled holds the seq of every cancelled event not yet passed by
	// last: those still in the queue, discarded when they reach its
	// front, and those compaction dropped, kept so that cancelling them
	// again still reports false until last passes them.
	cancelled seqSet
	scratch   []Event
	keep      func(Event) bool // compaction predicate, built once
	stopped   bool
	running   bool
	fired     uint64
	// horizonErr is the first request to schedule past Horizon: the run
	// stops there and the model reports it (Err), so that no result is
	// computed from a clock that wrapped or was clipped.
	horizonErr *HorizonError
}

// New returns a simulator at time 0 whose pending-event set is q; a nil q
// selects QueueDefault. q must be empty and used by this simulator only:
// its events carry the simulator's callbacks.
func New(q EventQueue) *Simulator {
	if q == nil {
		q = NewQueue(QueueDefault)
	}
	if q.Len() != 0 {
		panic(fmt.Sprintf("engine: New needs an empty queue, got one holding %d events", q.Len()))
	}
	pu, _ := q.(popUntiler)
	return &Simulator{queue: q, pu: pu, deadFrom: MaxTime}
}

// Now returns the current simulated time.
func (s *Simulator) Now() Time { return s.now }

// Pending returns the number of scheduled events not yet run or cancelled.
func (s *Simulator) Pending() int { return s.live }

// Fired returns the number of callbacks run so far.
func (s *Simulator) Fired() uint64 { return s.fired }

// ScheduleError reports a refused Schedule call: an event in the past or a
// negative delay. Models that compute delays from inputs can surface it to
// the user; it means the model (or its parameters) is wrong.
type ScheduleError struct {
	Now, At Time
	Delay   Time // set for After
	IsDelay bool
	NilFunc bool // the callback was nil
}

func (e *ScheduleError) Error() string {
	if e.NilFunc {
		return fmt.Sprintf("engine: nil callback scheduled at %v: pass the function to run", e.Now)
	}
	if e.IsDelay {
		return fmt.Sprintf("engine: negative delay %v at %v: a delay must be >= 0", e.Delay, e.Now)
	}
	return fmt.Sprintf("engine: cannot schedule at %v, which is before now (%v): events may only be scheduled at or after the current time", e.At, e.Now)
}

// At schedules fn to run at absolute time t. t must not be before Now;
// otherwise nothing is scheduled and a *ScheduleError is returned. Events at
// equal times run in the order they were scheduled.
func (s *Simulator) At(t Time, fn func()) (Handle, error) {
	if fn == nil {
		return Handle{}, &ScheduleError{Now: s.now, At: t, NilFunc: true}
	}
	if t < s.now {
		return Handle{}, &ScheduleError{Now: s.now, At: t}
	}
	if t > Horizon {
		return Handle{}, s.pastHorizon(t)
	}
	return s.schedule(t, fn), nil
}

// After schedules fn to run d after Now. d must be >= 0; otherwise nothing
// is scheduled and a *ScheduleError is returned.
func (s *Simulator) After(d Time, fn func()) (Handle, error) {
	if fn == nil {
		return Handle{}, &ScheduleError{Now: s.now, Delay: d, IsDelay: true, NilFunc: true}
	}
	if d < 0 {
		return Handle{}, &ScheduleError{Now: s.now, Delay: d, IsDelay: true}
	}
	t := AddSat(s.now, d)
	if t > Horizon {
		return Handle{}, s.pastHorizon(t)
	}
	return s.schedule(t, fn), nil
}

// MustAfter is After for delays the model has already proven non-negative
// (sums of validated, non-negative parameters). It panics on a negative
// delay, which is a bug in the model, not bad user input. A delay that
// reaches past Horizon is input, not a bug: nothing is scheduled, the run
// stops and Err reports it.
func (s *Simulator) MustAfter(d Time, fn func()) Handle {
	h, err := s.After(d, fn)
	if err != nil && !isHorizon(err) {
		panic(err)
	}
	return h
}

// MustAt is At for times the model has already proven not to be in the
// past; it panics otherwise (a model bug). A time past Horizon stops the
// run, as in MustAfter.
func (s *Simulator) MustAt(t Time, fn func()) Handle {
	h, err := s.At(t, fn)
	if err != nil && !isHorizon(err) {
		panic(err)
	}
	return h
}

// HorizonError reports a run whose simulated clock would pass Horizon: an
// event asked for at At, scheduled at Now. The run stops at once; the
// result would otherwise rest on a clipped clock.
type HorizonError struct{ Now, At Time }

func (e *HorizonError) Error() string {
	at := "beyond the clock's range"
	if e.At < MaxTime {
		at = "at " + e.At.String()
	}
	return fmt.Sprintf("simulated time would pass the engine's horizon of %s (%v): an event %s was scheduled at %v; "+
		"shorten the inputs' times (arrivals, durations, iterations, think times, 1/rate, latencies) so that the run ends within it",
		HorizonText, Horizon, at, e.Now)
}

func isHorizon(err error) bool { _, ok := err.(*HorizonError); return ok }

// pastHorizon records the first event asked for past Horizon and stops
// the run.
func (s *Simulator) pastHorizon(t Time) *HorizonError {
	if s.horizonErr == nil {
		s.horizonErr = &HorizonError{Now: s.now, At: t}
	}
	s.stopped = true
	return s.horizonErr
}

// Err returns the *HorizonError of the first event asked for past
// Horizon, or nil. A model checks it after Run: a non-nil Err means the
// run stopped early and its results must not be reported.
func (s *Simulator) Err() error {
	if s.horizonErr == nil {
		return nil
	}
	return s.horizonErr
}

func (s *Simulator) schedule(t Time, fn func()) Handle {
	s.seq++
	s.queue.Push(Event{At: t, Seq: s.seq, Fn: fn})
	s.live++
	return Handle{at: t, seq: s.seq}
}

// Cancel removes a scheduled event. It reports whether the event was still
// pending; cancelling an event that already ran, was already cancelled, or
// the zero Handle is a no-op that returns false. Cancellation is lazy: the
// entry stays in the queue and is discarded when it reaches the front, which
// keeps the queue implementations simple and Cancel O(1) amortised. So that
// a model that arms and cancels many far-future timeouts does not fill the
// queue with dead entries, the queue is compacted once the dead entries
// outnumber the live ones.
func (s *Simulator) Cancel(h Handle) bool {
	if h.seq == 0 || h.seq > s.seq || !s.after(h.at, h.seq) {
		return false // the zero Handle, another simulator's, or already taken
	}
	if !s.cancelled.add(h.seq, h.at) {
		return false // cancelled before
	}
	s.live--
	s.dead++
	s.deadFrom = min(s.deadFrom, h.at)
	if s.dead > compactMin && s.dead > s.live {
		s.compact()
	}
	return true
}

// after reports whether the key (at, seq) comes after the last event taken
// from the queue, that is, whether that event can still be in it.
func (s *Simulator) after(at Time, seq uint64) bool {
	return at > s.lastAt || (at == s.lastAt && seq > s.lastSeq)
}

// compactMin is the number of dead entries below which compaction is not
// worth its O(n log n).
const compactMin = 1024

// compact drops cancelled entries from the queue. Queues that can filter
// in place do so in O(n); for any other queue the events are popped in
// order and the live ones pushed back. Either way each event keeps its
// (At, Seq), so the order of the remaining events is unchanged. The
// dropped events stay in s.cancelled until last passes them, so that a
// second Cancel still reports false; pages of entries last has passed are
// dropped here, which bounds the set by the cancelled events still ahead.
func (s *Simulator) compact() {
	s.cancelled.dropPassed(s.lastAt)
	if s.keep == nil {
		s.keep = func(e Event) bool { return !s.cancelled.has(e.Seq) }
	}
	s.dead, s.deadFrom = 0, MaxTime
	if f, ok := s.queue.(filterer); ok {
		f.filter(s.keep)
		return
	}
	sc := s.scratch[:0]
	for {
		e, ok := s.queue.Pop()
		if !ok {
			break
		}
		if s.keep(e) {
			sc = append(sc, e)
		}
	}
	for _, e := range sc {
		s.queue.Push(e)
	}
	clear(sc) // drop the callbacks
	s.scratch = sc[:0]
}

// NextAt is the time of the earliest pending event (ok false when none
// is). A cancelled event leaves the queue lazily, so the time may be one
// at which nothing runs: a caller that drives this simulator from an
// outer loop uses it as a time to RunUntil, never as a promise.
func (s *Simulator) NextAt() (Time, bool) {
	if s.live == 0 {
		return 0, false
	}
	e, ok := s.queue.Peek()
	return e.At, ok
}

// Stop makes Run or RunUntil return after the callback in progress.
// Pending events stay scheduled; a later Run continues with them.
func (s *Simulator) Stop() { s.stopped = true }

// next pops the earliest live event, discarding cancelled ones. ok is
// false when no live event remains.
func (s *Simulator) next(limit Time) (at Time, fn func(), ok bool) {
	for {
		var e Event
		if s.pu != nil {
			var ok bool
			if e, ok = s.pu.popUntil(limit); !ok {
				return 0, nil, false
			}
		} else {
			var ok bool
			if e, ok = s.queue.Peek(); !ok || e.At > limit {
				return 0, nil, false
			}
			s.queue.Pop()
		}
		s.lastAt, s.lastSeq = e.At, e.Seq
		if e.At >= s.deadFrom && s.cancelled.remove(e.Seq) { // a cancelled one
			if s.dead--; s.dead == 0 {
				s.deadFrom = MaxTime
			}
			continue
		}
		s.live--
		return e.At, e.Fn, true
	}
}

// Step runs the earliest pending event, advancing Now to its time. It
// reports whether an event ran.
func (s *Simulator) Step() bool {
	if s.running {
		panic("engine: Step called from inside a callback")
	}
	if s.horizonErr != nil {
		return false
	}
	at, fn, ok := s.next(MaxTime)
	if !ok {
		return false
	}
	s.now = at
	s.fired++
	s.running = true
	defer func() { s.running = false }()
	fn()
	return true
}

// Run runs events until none is pending or Stop is called.
func (s *Simulator) Run() { s.RunUntil(MaxTime) }

// RunUntil runs every event scheduled at or before t, in order, then sets
// Now to t (if t is later than Now and the run was not stopped). Events
// after t stay pending. It returns early, with Now at the last event run, if
// a callback calls Stop.
func (s *Simulator) RunUntil(t Time) {
	if s.running {
		panic("engine: Run or RunUntil called from inside a callback")
	}
	s.running = true
	s.stopped = s.horizonErr != nil // a run past the horizon does not resume
	defer func() { s.running = false }()
	for !s.stopped {
		at, fn, ok := s.next(t)
		if !ok {
			if t != MaxTime && t > s.now {
				s.now = t
			}
			return
		}
		s.now = at
		s.fired++
		fn()
	}
}
