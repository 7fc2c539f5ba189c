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

// Horizon is the latest time a simulation may reach: 100 years of 365.25
// days, 3.156e18 ns, about a third of MaxTime (292 years). Every input
// that sets a time, or a count that multiplies one, is bounded so that a
// run ends within it (scenarios and the data-file readers check them,
// naming the key or row); the simulator refuses an event past it (Err)
// instead of wrapping or clipping. Why a third: the sum of two times each
// within the horizon (an arrival and a duration, Now and a delay) cannot
// wrap, so models may add two bounded values without checking; and why
// 100 years: the longest trace this project replays spans 149 days, the
// longest measured job about 150 days, so the bound takes nothing a user
// of this field simulates.
const Horizon Time = 36525 * 24 * Hour // 36,525 days

// HorizonText is Horizon in words, for messages.
const HorizonText = "100 years"

// HorizonSeconds is Horizon in seconds, for checking inputs given in
// seconds before they are converted.
const HorizonSeconds = float64(Horizon / Second)

// AddSat returns a+b for non-negative a and b, saturating at MaxTime
// instead of wrapping.
func AddSat(a, b Time) Time {
	if b > 0 && a > MaxTime-b {
		return MaxTime
	}
	return a + b
}

// Scale returns t times f rounded to the nearest nanosecond, saturating at
// ±MaxTime (and 0 for NaN), as fromFloat: a duration stretched by a
// slowdown or multiplied by a count cannot wrap.
func Scale(t Time, f float64) Time { return fromFloat(float64(t), f) }

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

// MulSat returns n times t for non-negative n and t, saturating at MaxTime
// instead of wrapping: iterations times an iteration's length.
func MulSat(n int64, t Time) Time {
	if n <= 0 || t <= 0 {
		return Time(n) * t
	}
	if t > MaxTime/Time(n) {
		return MaxTime
	}
	return Time(n) * t
}

// CeilNanos returns ns nanoseconds rounded up, saturating at MaxTime (and
// 0 for NaN or a negative value): a duration divided by a speed.
func CeilNanos(ns float64) Time {
	switch c := math.Ceil(ns); {
	case !(c > 0):
		return 0
	case c >= math.MaxInt64:
		return MaxTime
	default:
		return Time(c)
	}
}
