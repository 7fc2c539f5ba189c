package engine

import (
	"math"
	"testing"
)

// Expected strings are derived by hand from the rule in Time.String: pick
// the largest unit whose integer part is non-zero, round to four decimals,
// drop trailing zeros, and carry into the next unit when rounding reaches
// 1000.
func TestTimeString(t *testing.T) {
	cases := []struct {
		in   Time
		want string
	}{
		{0, "0s"},
		{1, "1ns"},
		{250, "250ns"},
		{999, "999ns"},
		{-1, "-1ns"},
		{-250, "-250ns"},
		{Microsecond, "1us"},
		{1500, "1.5us"},             // 1500ns = 1.5us
		{-3 * Microsecond, "-3us"},  // sign kept, unit from |t|
		{999_999, "999.999us"},      // three decimals fit in four
		{1_500_000, "1.5ms"},        // the example
		{1_234_567, "1.2346ms"},     // 1.234567 rounds half-up at the 4th decimal
		{1_234_549, "1.2345ms"},     // 1.234549 rounds down
		{999_999_999, "1s"},         // 999.999999ms rounds to 1000ms: carried to 1s
		{999_999_960, "1s"},         // 999.99996ms -> 1000.0000ms -> 1s
		{999_999_940, "999.9999ms"}, // 999.99994ms stays below the carry
		{999_999 + 1, "1ms"},        // exactly 1000us
		{2 * Second, "2s"},
		{2 * Hour, "7200s"}, // hours deliberately not used
		{-90 * Second, "-90s"},
		{MaxTime, "9223372036.8548s"},        // 9223372036.854775807s
		{math.MinInt64, "-9223372036.8548s"}, // |MinInt64| is not representable; prints as -MaxTime
		{Time(1<<62 + 123_456_789), "4611686018.5508s"}, // 2^62 ns = 4611686018.427387904s, +0.123456789s = ...550844693s
	}
	for _, c := range cases {
		if got := c.in.String(); got != c.want {
			t.Errorf("Time(%d).String() = %q, want %q", int64(c.in), got, c.want)
		}
	}
}

// The constructors round to the nearest nanosecond and saturate, so an
// absurd float never wraps into the past.
func TestTimeConstructors(t *testing.T) {
	cases := []struct {
		name string
		got  Time
		want Time
	}{
		{"Nanoseconds(7)", Nanoseconds(7), 7},
		{"Microseconds(1.5)", Microseconds(1.5), 1500},
		{"Microseconds(-1.5)", Microseconds(-1.5), -1500},
		{"Milliseconds(1.5)", Milliseconds(1.5), 1_500_000},
		{"Seconds(2)", Seconds(2), 2_000_000_000},
		{"Seconds(1e-9)", Seconds(1e-9), 1},
		{"Seconds(0.4e-9) rounds to 0", Seconds(0.4e-9), 0},
		{"Seconds(1.6e-9) rounds to 2", Seconds(1.6e-9), 2},
		{"Microseconds(0.0004) rounds to 0", Microseconds(0.0004), 0},
		{"Seconds(0)", Seconds(0), 0},
		{"Seconds(1e300) saturates", Seconds(1e300), MaxTime},
		{"Seconds(-1e300) saturates", Seconds(-1e300), -MaxTime},
		{"Seconds(+Inf) saturates", Seconds(math.Inf(1)), MaxTime},
		{"Seconds(-Inf) saturates", Seconds(math.Inf(-1)), -MaxTime},
		{"Seconds(NaN) is 0", Seconds(math.NaN()), 0},
		{"Seconds(9.3e9) just past the int64 range", Seconds(9.3e9), MaxTime},
		// 149 days, the longest trace replayed: 149*86400 s = 12873600 s.
		{"Seconds(149 days)", Seconds(149 * 86400), 12_873_600 * Second},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, int64(c.got), int64(c.want))
		}
	}
}

func TestTimeConversions(t *testing.T) {
	v := 1_500_000 * Nanosecond // 1.5ms
	if got := v.Seconds(); got != 0.0015 {
		t.Errorf("Seconds() = %v, want 0.0015", got)
	}
	if got := v.Millis(); got != 1.5 {
		t.Errorf("Millis() = %v, want 1.5", got)
	}
	if got := v.Micros(); got != 1500 {
		t.Errorf("Micros() = %v, want 1500", got)
	}
	// Units are consistent with each other.
	if Hour != 3600*Second || Minute != 60*Second || Second != 1e9*Nanosecond {
		t.Errorf("unit constants inconsistent: Hour=%d Minute=%d Second=%d", Hour, Minute, Second)
	}
}

// The horizon is 100 years and at most half of MaxTime, so that two times
// within it add without wrapping; AddSat and Scale saturate.
func TestHorizonAndSaturation(t *testing.T) {
	if Horizon != Time(3_155_760_000)*Second {
		t.Fatalf("Horizon = %d ns, want 100 years of 365.25 days = 3,155,760,000 s", Horizon)
	}
	if Horizon > MaxTime/2 {
		t.Fatalf("Horizon %d is over half of MaxTime: a sum of two bounded times could wrap", Horizon)
	}
	if HorizonSeconds != 3_155_760_000 {
		t.Fatalf("HorizonSeconds = %g", HorizonSeconds)
	}
	for _, c := range []struct {
		a, b, want Time
	}{
		{1, 2, 3},
		{MaxTime, 1, MaxTime},
		{MaxTime - 5, 10, MaxTime},
		{Horizon, Horizon, 2 * Horizon},
		{0, 0, 0},
	} {
		if got := AddSat(c.a, c.b); got != c.want {
			t.Errorf("AddSat(%d, %d) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	for _, c := range []struct {
		t    Time
		f    float64
		want Time
	}{
		{Second, 1.5, 1500 * Millisecond},
		{Horizon, 1e9, MaxTime},
		{Second, math.Inf(1), MaxTime},
		{Second, math.NaN(), 0},
	} {
		if got := Scale(c.t, c.f); got != c.want {
			t.Errorf("Scale(%d, %g) = %d, want %d", c.t, c.f, got, c.want)
		}
	}
}
