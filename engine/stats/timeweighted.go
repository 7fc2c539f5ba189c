package stats

import (
	"fmt"
	"math"

	"github.com/conspirator-sim/conspirator/engine"
)

// TimeWeighted tracks a piecewise-constant value over simulated time (the
// length of a queue, the number of busy servers, bytes of buffer in use) and
// gives its time average: (1/(now-start)) * integral of v(t) dt. This is how
// utilisation and the mean number in system L of queueing theory are
// measured; a per-event average would over-weight busy periods.
//
// The zero TimeWeighted holds value 0 from time 0. It is not safe for
// concurrent use.
type TimeWeighted struct {
	start Time    // beginning of the observation window (last Reset)
	last  Time    // time of the last Set
	v     float64 // value since last
	area  float64 // integral of v over [start, last], in value*nanoseconds
	max   float64 // largest value held in [start, last]
	min   float64
}

// Time is engine.Time, repeated here so that the fields read naturally.
type Time = engine.Time

// NewTimeWeighted returns a tracker holding v from time now on.
func NewTimeWeighted(now Time, v float64) *TimeWeighted {
	return &TimeWeighted{start: now, last: now, v: v, max: v, min: v}
}

// Set records that the value changes to v at time now. Times must not go
// backwards: a Set before the previous one means the model passed a stale
// clock, which is a bug, so Set panics rather than silently corrupting the
// average.
func (w *TimeWeighted) Set(now Time, v float64) {
	w.advance(now)
	w.v = v
	w.max = max(w.max, v)
	w.min = min(w.min, v)
}

// Add changes the value by dv at time now (Set(now, Value()+dv)).
func (w *TimeWeighted) Add(now Time, dv float64) { w.Set(now, w.v+dv) }

func (w *TimeWeighted) advance(now Time) {
	if now < w.last {
		panic(fmt.Sprintf("stats: TimeWeighted updated at %v, before its last update at %v: simulated time must not go backwards", now, w.last))
	}
	w.area += w.v * float64(now-w.last)
	w.last = now
}

// Value returns the current value.
func (w *TimeWeighted) Value() float64 { return w.v }

// Reset starts a new observation window at now, keeping the current value:
// call it at the end of a warm-up so that the empty-and-idle start does not
// bias the averages. Max and Min restart from the current value.
func (w *TimeWeighted) Reset(now Time) {
	w.advance(now)
	w.start = now
	w.area = 0
	w.max, w.min = w.v, w.v
}

// Start returns the beginning of the current observation window.
func (w *TimeWeighted) Start() Time { return w.start }

// Integral returns the integral of the value over [Start(), now], in
// value*seconds (busy core-seconds, for a count of busy cores). now must not
// be before the last Set.
func (w *TimeWeighted) Integral(now Time) float64 {
	if now < w.last {
		panic(fmt.Sprintf("stats: TimeWeighted read at %v, before its last update at %v: simulated time must not go backwards", now, w.last))
	}
	return (w.area + w.v*float64(now-w.last)) / float64(engine.Second)
}

// Mean returns the time average over [Start(), now]. It returns NaN for an
// empty window (now == Start()), where no time has passed to average over.
func (w *TimeWeighted) Mean(now Time) float64 {
	d := now - w.start
	if d <= 0 {
		if d < 0 {
			panic(fmt.Sprintf("stats: TimeWeighted read at %v, before its window start %v: simulated time must not go backwards", now, w.start))
		}
		return math.NaN()
	}
	return w.Integral(now) / d.Seconds()
}

// Max returns the largest value held since the last Reset (or creation).
func (w *TimeWeighted) Max() float64 { return w.max }

// Min returns the smallest value held since the last Reset (or creation).
func (w *TimeWeighted) Min() float64 { return w.min }
