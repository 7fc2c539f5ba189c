package units

import (
	"encoding"
	"math"
	"strings"
	"testing"
)

// Compile-time checks that every quantity round-trips through text, which
// is what the scenario loader relies on.
var (
	_ encoding.TextUnmarshaler = (*Duration)(nil)
	_ encoding.TextMarshaler   = Duration(0)
	_ encoding.TextUnmarshaler = (*Bandwidth)(nil)
	_ encoding.TextMarshaler   = Bandwidth(0)
	_ encoding.TextUnmarshaler = (*Bytes)(nil)
	_ encoding.TextMarshaler   = Bytes(0)
	_ encoding.TextUnmarshaler = (*Fraction)(nil)
	_ encoding.TextMarshaler   = Fraction(0)
	_ encoding.TextUnmarshaler = (*Ratio)(nil)
	_ encoding.TextMarshaler   = Ratio(0)
	_ encoding.TextUnmarshaler = (*Power)(nil)
	_ encoding.TextMarshaler   = Power(0)
	_ encoding.TextUnmarshaler = (*Money)(nil)
	_ encoding.TextMarshaler   = Money(0)
	_ encoding.TextUnmarshaler = (*Frequency)(nil)
	_ encoding.TextMarshaler   = Frequency(0)
	_ encoding.TextUnmarshaler = (*Rate)(nil)
	_ encoding.TextMarshaler   = Rate(0)
)

// Expected SI values are derived by hand from the unit definitions
// (decimal prefixes 10^3k, binary 2^10k, 8 bits per byte).
func TestParseDuration(t *testing.T) {
	cases := []struct {
		in   string
		want int64 // nanoseconds
	}{
		{"250ns", 250},
		{"1.3us", 1300},           // 1.3 * 1000
		{"1.3µs", 1300},           // micro sign U+00B5
		{"1.3μs", 1300},           // Greek mu U+03BC
		{"1.5ms", 1_500_000},      // 1.5 * 10^6
		{"2s", 2_000_000_000},     // 2 * 10^9
		{"5min", 300_000_000_000}, // 5 * 60 * 10^9
		{"1h", 3_600_000_000_000}, // 3600 * 10^9
		{"0.000001s", 1000},       // 10^-6 s = 1 us
		{"1e3ns", 1000},           // scientific notation
		{" 2 s ", 2_000_000_000},  // surrounding and inner spaces are tolerated
		{"0s", 0},
		{"149h", 149 * 3_600_000_000_000},
	}
	for _, c := range cases {
		got, err := ParseDuration(c.in)
		if err != nil {
			t.Errorf("ParseDuration(%q): %v", c.in, err)
			continue
		}
		if int64(got) != c.want {
			t.Errorf("ParseDuration(%q) = %d ns, want %d", c.in, int64(got), c.want)
		}
	}
}

func TestParseBandwidth(t *testing.T) {
	cases := []struct {
		in   string
		want float64 // bytes per second
	}{
		{"25GB/s", 25e9},
		{"800MB/s", 800e6},
		{"200Gbps", 25e9},          // 200e9 bits / 8
		{"100Gb/s", 12.5e9},        // 100e9 / 8
		{"100Gbit/s", 12.5e9},      // same, spelled out
		{"12.5GiB/s", 13421772800}, // 12.5 * 2^30 = 12.5 * 1073741824
		{"1KiB/s", 1024},
		{"1kB/s", 1000},
		{"1bps", 0.125},
		{"64B/s", 64},
		{"1.5TB/s", 1.5e12},
	}
	for _, c := range cases {
		got, err := ParseBandwidth(c.in)
		if err != nil {
			t.Errorf("ParseBandwidth(%q): %v", c.in, err)
			continue
		}
		if float64(got) != c.want {
			t.Errorf("ParseBandwidth(%q) = %v B/s, want %v", c.in, float64(got), c.want)
		}
	}
}

func TestParseBytes(t *testing.T) {
	cases := []struct {
		in   string
		want int64
	}{
		{"4KB", 4000},
		{"4KiB", 4096},
		{"2MiB", 2 * 1048576},
		{"602112B", 602112},    // 224*224*3*4: one fp32 ImageNet image
		{"1.5KiB", 1536},       // 1.5 * 1024
		{"0.5GB", 500_000_000}, // 0.5 * 10^9
		{"80GiB", 80 << 30},    // H100 memory size in binary
		{"8EiB", -1},           // overflow: marker for the error table below
		{"1PiB", 1 << 50},
	}
	for _, c := range cases {
		got, err := ParseBytes(c.in)
		if c.want < 0 {
			if err == nil {
				t.Errorf("ParseBytes(%q) = %d, want an error", c.in, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseBytes(%q): %v", c.in, err)
			continue
		}
		if int64(got) != c.want {
			t.Errorf("ParseBytes(%q) = %d, want %d", c.in, int64(got), c.want)
		}
	}
}

func TestParseOthers(t *testing.T) {
	cases := []struct {
		in    string
		parse func(string) (float64, error)
		want  float64
	}{
		{"80%", pf(ParseFraction), 0.8},
		{"0%", pf(ParseFraction), 0},
		{"100%", pf(ParseFraction), 1},
		{"12.5%", pf(ParseFraction), 0.125},
		{"150%", pf(ParseRatio), 1.5},
		{"150W", pf(ParsePower), 150},
		{"0.8kW", pf(ParsePower), 800},
		{"500mW", pf(ParsePower), 0.5},
		{"$231", pf(ParseMoney), 231},
		{"$4.10", pf(ParseMoney), 4.1},
		{"$0.12", pf(ParseMoney), 0.12},
		{"2.0GHz", pf(ParseFrequency), 2e9},
		{"800MHz", pf(ParseFrequency), 8e8},
		{"2000/s", pf(ParseRate), 2000},
		{"1.5k/s", pf(ParseRate), 1500},
		{"100/ms", pf(ParseRate), 100_000}, // 100 per 10^-3 s
		{"30/min", pf(ParseRate), 0.5},     // 30 / 60 s
		{"1/us", pf(ParseRate), 1e6},
	}
	for _, c := range cases {
		got, err := c.parse(c.in)
		if err != nil {
			t.Errorf("parse(%q): %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("parse(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func pf[T ~float64](p func(string) (T, error)) func(string) (float64, error) {
	return func(s string) (float64, error) {
		v, err := p(s)
		return float64(v), err
	}
}

// Each bad input must fail with a message that names the problem and, for
// unit problems, lists the accepted units.
func TestParseErrors(t *testing.T) {
	cases := []struct {
		in      string
		parse   func(string) (float64, error)
		wantMsg []string
	}{
		{"25", pf(ParseBandwidth), []string{"missing unit", "accepted units: B/s", "Gbps"}},
		{"25GBs", pf(ParseBandwidth), []string{`unknown unit "GBs"`, "accepted units:"}},
		{"200gbps", pf(ParseBandwidth), []string{`did you mean "Gbps"`}},
		{"-1GB/s", pf(ParseBandwidth), []string{"negative"}},
		{"NaNGB/s", pf(ParseBandwidth), []string{"does not start with a number"}},
		{"InfGB/s", pf(ParseBandwidth), []string{"does not start with a number"}},
		{"1e999GB/s", pf(ParseBandwidth), []string{"exponent out of range"}},
		{"1e300TB/s", pf(ParseBandwidth), []string{"too large"}},
		{"", pf(ParseBandwidth), []string{"empty"}},
		{"GB/s", pf(ParseBandwidth), []string{"does not start with a number"}},
		{"0.8", pf(ParseFraction), []string{"missing unit", "accepted units: %"}},
		{"80", pf(ParseFraction), []string{"missing unit"}},
		{"120%", pf(ParseFraction), []string{"above 100%"}},
		{"-5%", pf(ParseRatio), []string{"negative"}},
		{"150", pf(ParsePower), []string{"missing unit", "W, kW"}},
		{"1,000", pf(ParseMoney), []string{"thousands separators"}},
		{"$1,000", pf(ParseMoney), []string{"thousands separators"}},
		{"231", pf(ParseMoney), []string{"dollar sign"}},
		{"231$", pf(ParseMoney), []string{"dollar sign first"}},
		{"$-3", pf(ParseMoney), []string{"negative"}},
		{"2000", pf(ParseRate), []string{"missing unit", "/s"}},
		{"2 GHZ", pf(ParseFrequency), []string{`did you mean "GHz"`}},
		{"1.2.3s", pf(ParseFrequency), []string{"unknown unit"}},
		{strings.Repeat("1", 100) + "s", pf(ParseRate), []string{"longer than"}},
	}
	for _, c := range cases {
		v, err := c.parse(c.in)
		if err == nil {
			t.Errorf("parse(%q) = %v, want an error", c.in, v)
			continue
		}
		for _, w := range c.wantMsg {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("parse(%q) error %q does not mention %q", c.in, err, w)
			}
		}
	}
}

func TestIntegerErrors(t *testing.T) {
	for _, in := range []string{"0.5ns", "1.0000000001s", "1.5B", "0.1KiB", "1e-3B"} {
		var err error
		if strings.HasSuffix(in, "B") {
			_, err = ParseBytes(in)
		} else {
			_, err = ParseDuration(in)
		}
		if err == nil || !strings.Contains(err.Error(), "not a whole number") {
			t.Errorf("%q: err = %v, want a whole-number error", in, err)
		}
	}
	if _, err := ParseDuration("3000000h"); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("3000000h (10.8e21 ns > 2^63) err = %v, want too large", err)
	}
}

// The canonical form is pinned for readable values, and must parse back.
func TestCanonicalForm(t *testing.T) {
	cases := []struct {
		got, want string
	}{
		{Duration(1300).String(), "1.3us"},
		{Duration(250).String(), "250ns"},
		{Duration(1_500_000).String(), "1.5ms"},
		{Duration(90 * 60 * 1_000_000_000).String(), "90min"},
		{Duration(2 * 3_600_000_000_000).String(), "2h"},
		{Duration(1_000_000_001).String(), "1.000000001s"},
		{Duration(0).String(), "0s"},
		{Bandwidth(25e9).String(), "25GB/s"},
		{Bandwidth(13421772800).String(), "12.5GiB/s"},
		{Bandwidth(5e8).String(), "500MB/s"},
		{Bandwidth(0.125).String(), "0.125B/s"},
		{Bandwidth(1e9 / 8 * 3).String(), "375MB/s"}, // 3 Gbps
		{Bandwidth(0).String(), "0B/s"},
		{Bytes(4096).String(), "4KiB"},
		{Bytes(4000).String(), "4KB"},
		{Bytes(602112).String(), "588KiB"}, // 602112 / 1024 = 588
		{Bytes(0).String(), "0B"},
		{Fraction(0.8).String(), "80%"},
		{Fraction(1.0 / 3).String(), "33.33333333333333%"},
		{Power(800).String(), "800W"},
		{Power(1200).String(), "1.2kW"},
		{Money(4.1).String(), "$4.1"},
		{Frequency(2e9).String(), "2GHz"},
		{Rate(1500).String(), "1.5k/s"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// Values that are awkward in decimal must still round-trip exactly.
func TestRoundTripHard(t *testing.T) {
	floats := []float64{0, 1, 0.1, 1.0 / 3, math.SmallestNonzeroFloat64, math.MaxFloat64, 1e-300, 12345.678e20, math.Nextafter(25e9, 0), 5e-324}
	for _, v := range floats {
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
	for _, v := range []int64{0, 1, 999, 1000, 1001, math.MaxInt64, 1 << 40, 7 * 60 * 1e9} {
		checkRoundTrip(t, Duration(v), new(Duration))
		checkRoundTrip(t, Bytes(v), new(Bytes))
	}
}

func checkRoundTrip[T comparable, P interface {
	*T
	encoding.TextUnmarshaler
}](t *testing.T, v T, dst P) {
	t.Helper()
	m, ok := any(v).(encoding.TextMarshaler)
	if !ok {
		t.Fatalf("%T is not a TextMarshaler", v)
	}
	b, err := m.MarshalText()
	if err != nil {
		t.Errorf("MarshalText(%v): %v", v, err)
		return
	}
	if err := dst.UnmarshalText(b); err != nil {
		t.Errorf("%T %v marshalled to %q which does not parse: %v", v, v, b, err)
		return
	}
	if *dst != v {
		t.Errorf("%T %v -> %q -> %v, not the same value", v, v, b, *dst)
	}
}

func TestMarshalRejectsOutOfDomain(t *testing.T) {
	bad := []encoding.TextMarshaler{
		Duration(-1), Bytes(-1), Bandwidth(-1), Bandwidth(math.NaN()), Bandwidth(math.Inf(1)),
		Fraction(1.5), Money(math.NaN()), Rate(-3),
	}
	for _, v := range bad {
		if b, err := v.MarshalText(); err == nil {
			t.Errorf("%T(%v).MarshalText() = %q, want an error", v, v, b)
		}
	}
}

func TestPreferredUnitsExist(t *testing.T) {
	for _, p := range []struct {
		q      *quantity
		prefer [][]string
	}{{bandwidthQ, bandwidthPrefer}, {powerQ, powerPrefer}, {frequencyQ, frequencyPrefer}, {rateQ, ratePrefer}, {fractionQ, percent}} {
		for gi, group := range p.prefer {
			for _, name := range group {
				u := p.q.lookup(name) // panics on a typo in a prefer list
				if _, ok := pow10Of(u); gi == 0 && !ok {
					t.Errorf("%s: %s in the first preferred group is not a power of ten, so a format may not exist", p.q.name, name)
				}
			}
		}
	}
}

func TestAcceptedAndBase(t *testing.T) {
	if got := Accepted(Bandwidth(0)); len(got) == 0 || got[0] != "B/s" {
		t.Errorf("Accepted(Bandwidth) = %v", got)
	}
	if got := Accepted(3); got != nil {
		t.Errorf("Accepted(int) = %v, want nil", got)
	}
	if BaseUnit(Duration(0)) != "ns" || BaseUnit("x") != "" {
		t.Errorf("BaseUnit wrong")
	}
}
