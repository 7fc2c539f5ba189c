package engine

import (
	"math"
	"strconv"
)

// Time is simulated time, or a duration of it, in integer nanoseconds.
// Integers rather than floats so that runs are reproducible bit for bit: a
// sum of float64 delays depends on the order of additions, a sum of int64
// nanoseconds does not. int64 nanoseconds reach about 292 years, far beyond
// the 149-day traces this project replays.
type Time int64

// Units of Time.
const (
	Nanosecond  Time = 1
	Microsecond      = 1000 * Nanosecond
	Millisecond      = 1000 * Microsecond
	Second           = 1000 * Millisecond
	Minute           = 60 * Second
	Hour             = 60 * Minute
)

// MaxTime is the largest representable time; RunUntil(MaxTime) runs to the end.
const MaxTime Time = math.MaxInt64

// Nanoseconds returns n nanoseconds.
func Nanoseconds(n int64) Time { return Time(n) }

// Microseconds returns us microseconds, rounded to the nearest nanosecond.
func Microseconds(us float64) Time { return fromFloat(us, float64(Microsecond)) }

// Milliseconds returns ms milliseconds, rounded to the nearest nanosecond.
func Milliseconds(ms float64) Time { return fromFloat(ms, float64(Millisecond)) }

// Seconds returns s seconds, rounded to the nearest nanosecond.
func Seconds(s float64) Time { return fromFloat(s, float64(Second)) }

// fromFloat converts v units of scale nanoseconds, rounding to nearest and
// saturating at ±MaxTime so that an absurd input cannot wrap around.
func fromFloat(v, scale float64) Time {
	ns := math.Round(v * scale)
	switch {
	case math.IsNaN(ns):
		return 0
	case ns >= math.MaxInt64:
		return MaxTime
	case ns <= math.MinInt64:
		return -MaxTime
	}
	return Time(ns)
}

// Seconds returns t in seconds.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

// Micros returns t in microseconds.
func (t Time) Micros() float64 { return float64(t) / float64(Microsecond) }

// Millis returns t in milliseconds.
func (t Time) Millis() float64 { return float64(t) / float64(Millisecond) }

// String formats t with the largest unit (ns, us, ms, s) that keeps the
// integer part non-zero, rounded to at most four decimals: "250ns", "1.5ms",
// "1.2346ms" for 1234567ns, "2s",
// "-3us". Hours are not used: "7200s" is clearer in logs of a trace replay
// than a mixed "2h0m0s".
func (t Time) String() string {
	if t == 0 {
		return "0s"
	}
	sign := ""
	v := t
	if v < 0 {
		sign = "-"
		if v == math.MinInt64 {
			return "-" + MaxTime.String()
		}
		v = -v
	}
	if v < Microsecond {
		return sign + strconv.FormatInt(int64(v), 10) + "ns"
	}
	u := 0
	for u < len(timeUnits)-1 && v >= timeUnits[u+1].scale {
		u++
	}
	f := roundTo4(v, timeUnits[u].scale)
	if f >= 1000 && u < len(timeUnits)-1 {
		// Rounding carried into the next unit (999.99996us): say 1ms, not
		// 1000us.
		u++
		f = roundTo4(v, timeUnits[u].scale)
	}
	return sign + strconv.FormatFloat(f, 'f', -1, 64) + timeUnits[u].name
}

var timeUnits = [...]struct {
	name  string
	scale Time
}{{"us", Microsecond}, {"ms", Millisecond}, {"s", Second}}

// roundTo4 returns v/scale rounded to four decimals.
func roundTo4(v, scale Time) float64 {
	return math.Round(float64(v)/float64(scale)*1e4) / 1e4
}
