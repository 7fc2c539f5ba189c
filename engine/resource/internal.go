package resource

import (
	"fmt"
	"math"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/stats"
)

// completionSlack is how much of a nanosecond of work may remain on a job
// or flow at its completion event for it to count as done. Completion times
// are rounded to whole nanoseconds, and float64 bookkeeping leaves residues
// of the order of 1e-16 relative; anything finishing within half a
// nanosecond of the event finishes at it.
const completionSlack = 0.5e-9 // seconds

// delayFor converts a time to completion in seconds to engine.Time, rounding
// up so that a job is never declared done before its work is, and to at
// least 1ns so that every completion event advances the clock. A value
// within 1e-4ns of a whole nanosecond is taken as that nanosecond, so that
// exact inputs (26 bytes at 13 B/s) give exact times rather than one
// nanosecond late. done reports that the work already counts as finished
// (delay 0). Huge delays saturate at engine.MaxTime ("never").
func delayFor(seconds float64, done bool) engine.Time {
	if done {
		return 0
	}
	ns := seconds * float64(engine.Second)
	// Floor(ns+0.5) is one instruction on amd64 where math.Round is a
	// dozen, and it is the nearest whole number whenever ns is within 1e-4
	// of one, the only case the test uses it in (TestDelayForRounding).
	if r := math.Floor(ns + 0.5); math.Abs(ns-r) <= 1e-4 {
		ns = r
	} else {
		ns = math.Ceil(ns)
	}
	switch {
	case !(ns >= 1): // also catches NaN
		return 1
	case ns >= float64(engine.MaxTime):
		return engine.MaxTime
	}
	return engine.Time(ns)
}

// checkRate reports a capacity that is not a finite number > 0 (or >= 0
// when zero is allowed), naming the parameter.
func checkRate(what string, v float64, allowZero bool) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("resource: %s is %v: it must be a finite number", what, v)
	case allowZero && v < 0:
		return fmt.Errorf("resource: %s is %v: it must be >= 0", what, v)
	case !allowZero && v <= 0:
		return fmt.Errorf("resource: %s is %v: it must be > 0", what, v)
	}
	return nil
}

// fifo is a growable ring buffer: O(1) push and pop, storage reused once it
// has grown to the largest backlog seen.
type fifo[T any] struct {
	buf  []T
	head int
	n    int
}

func (f *fifo[T]) len() int { return f.n }

func (f *fifo[T]) push(x T) {
	if f.n == len(f.buf) {
		nb := make([]T, max(8, 2*len(f.buf)))
		for i := range f.n {
			nb[i] = f.buf[(f.head+i)%len(f.buf)]
		}
		f.buf, f.head = nb, 0
	}
	f.buf[(f.head+f.n)%len(f.buf)] = x
	f.n++
}

// front returns the oldest element; the fifo must not be empty.
func (f *fifo[T]) front() *T { return &f.buf[f.head] }

// pop removes and returns the oldest element; the fifo must not be empty.
func (f *fifo[T]) pop() T {
	x := f.buf[f.head]
	var zero T
	f.buf[f.head] = zero // drop references to callbacks
	f.head = (f.head + 1) % len(f.buf)
	f.n--
	return x
}

// resetTW starts w's observation window at now: empty, and NaN for good
// once the resource's statistics are stopped (see Queue.StopStats), so
// that a reader cannot take the value it held then for a measurement.
func resetTW(w *stats.TimeWeighted, now engine.Time, stopped bool) {
	if stopped {
		*w = *stats.NewTimeWeighted(now, math.NaN())
		return
	}
	w.Reset(now)
}

// TransferTime is how long bytes take at rate bytes per second, rounded
// to the nanosecond as every resource here rounds its completions: a
// closed form that must match a simulated transfer to the nanosecond uses
// it.
func TransferTime(bytes, bytesPerSec float64) engine.Time {
	return delayFor(bytes/bytesPerSec, bytes <= 0)
}
