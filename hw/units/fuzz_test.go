package units

import (
	"encoding"
	"math"
	"testing"
)

// fuzzParse checks, for any input, that parsing never panics and that a
// successful parse gives a value whose canonical text parses back to it.
func fuzzParse[T comparable, P interface {
	*T
	encoding.TextUnmarshaler
}](t *testing.T, in string) {
	var v T
	if err := P(&v).UnmarshalText([]byte(in)); err != nil {
		return
	}
	b, err := any(v).(encoding.TextMarshaler).MarshalText()
	if err != nil {
		t.Fatalf("%q parsed to %v which does not marshal: %v", in, v, err)
	}
	var back T
	if err := P(&back).UnmarshalText(b); err != nil {
		t.Fatalf("%q -> %v -> %q does not parse: %v", in, v, b, err)
	}
	if back != v {
		t.Fatalf("%q -> %v -> %q -> %v", in, v, b, back)
	}
}

func addSeeds(f *testing.F, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
}

func FuzzParseDuration(f *testing.F) {
	addSeeds(f, "1.3us", "250ns", "5min", "1h", "1e3ns", "0.5ns", "9223372036.854775807s", "1µs")
	f.Fuzz(func(t *testing.T, s string) { fuzzParse[Duration](t, s) })
}

func FuzzParseBandwidth(f *testing.F) {
	addSeeds(f, "25GB/s", "200Gbps", "12.5GiB/s", "1e-300bps", "1.7976931348623157e308B/s", "0.1Kb/s")
	f.Fuzz(func(t *testing.T, s string) { fuzzParse[Bandwidth](t, s) })
}

func FuzzParseBytes(f *testing.F) {
	addSeeds(f, "4KB", "2MiB", "602112B", "8EiB", "7.999PiB", "0.001KB")
	f.Fuzz(func(t *testing.T, s string) { fuzzParse[Bytes](t, s) })
}

func FuzzParseFraction(f *testing.F) {
	addSeeds(f, "80%", "100%", "1e-320%", "33.333333333333333%")
	f.Fuzz(func(t *testing.T, s string) { fuzzParse[Fraction](t, s) })
}

func FuzzParseMoney(f *testing.F) {
	addSeeds(f, "$231", "$4.10", "$1,000", "$", "$$1", "$ 1")
	f.Fuzz(func(t *testing.T, s string) { fuzzParse[Money](t, s) })
}

func FuzzParseRate(f *testing.F) {
	addSeeds(f, "2000/s", "1.5k/s", "100/ms", "1/h", "3/min")
	f.Fuzz(func(t *testing.T, s string) { fuzzParse[Rate](t, s) })
}

func FuzzParseOthers(f *testing.F) {
	addSeeds(f, "150W", "0.8kW", "2.0GHz", "150%")
	f.Fuzz(func(t *testing.T, s string) {
		fuzzParse[Power](t, s)
		fuzzParse[Frequency](t, s)
		fuzzParse[Ratio](t, s)
	})
}

// FuzzRoundTripValues drives the marshal side from arbitrary bit patterns:
// every value in a quantity's domain must format to text that parses back
// to exactly the same value.
func FuzzRoundTripValues(f *testing.F) {
	f.Add(uint64(0x3FF0000000000000), int64(1300))
	f.Add(math.Float64bits(1.0/3), int64(math.MaxInt64))
	f.Add(math.Float64bits(5e-324), int64(1))
	f.Fuzz(func(t *testing.T, bits uint64, n int64) {
		v := math.Float64frombits(bits)
		if !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 {
			checkRoundTrip(t, Bandwidth(v), new(Bandwidth))
			checkRoundTrip(t, Power(v), new(Power))
			checkRoundTrip(t, Money(v), new(Money))
			checkRoundTrip(t, Frequency(v), new(Frequency))
			checkRoundTrip(t, Rate(v), new(Rate))
			checkRoundTrip(t, Ratio(v), new(Ratio))
			if v <= 1 {
				checkRoundTrip(t, Fraction(v), new(Fraction))
			}
		}
		if n >= 0 {
			checkRoundTrip(t, Duration(n), new(Duration))
			checkRoundTrip(t, Bytes(n), new(Bytes))
		}
	})
}
