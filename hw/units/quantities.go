package units

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
)

// Unit tables. Decimal prefixes (K, M, G, T) are powers of 1000, binary
// ones (Ki, Mi, Gi, Ti) powers of 1024, as in IEC 80000-13; a lower-case b
// is a bit and an upper-case B a byte, as network and storage vendors write
// them (200Gbps NIC, 25GB/s PCIe). Both "K" and the SI "k" mean 1000.
const (
	kilo = 1000
	mega = kilo * 1000
	giga = mega * 1000
	tera = giga * 1000
	peta = tera * 1000
	kibi = 1024
	mebi = kibi * 1024
	gibi = mebi * 1024
	tebi = gibi * 1024
	pebi = tebi * 1024
)

var durationQ = &quantity{
	name:    "duration",
	example: `"1.3us" or "5min"`,
	units: []unit{
		{"ns", 1, 1}, {"us", 1000, 1}, {"µs", 1000, 1}, {"μs", 1000, 1},
		{"ms", 1_000_000, 1}, {"s", 1_000_000_000, 1},
		{"min", 60_000_000_000, 1}, {"h", 3_600_000_000_000, 1},
	},
}

var bandwidthQ = &quantity{
	name:    "bandwidth",
	example: `"25GB/s" or "200Gbps"`,
	units: []unit{
		{"B/s", 1, 1},
		{"KB/s", kilo, 1}, {"kB/s", kilo, 1}, {"MB/s", mega, 1}, {"GB/s", giga, 1}, {"TB/s", tera, 1},
		{"KiB/s", kibi, 1}, {"MiB/s", mebi, 1}, {"GiB/s", gibi, 1}, {"TiB/s", tebi, 1},
		{"bps", 1, 8}, {"Kbps", kilo, 8}, {"kbps", kilo, 8}, {"Mbps", mega, 8}, {"Gbps", giga, 8}, {"Tbps", tera, 8},
		{"b/s", 1, 8}, {"Kb/s", kilo, 8}, {"kb/s", kilo, 8}, {"Mb/s", mega, 8}, {"Gb/s", giga, 8}, {"Tb/s", tera, 8},
		{"bit/s", 1, 8}, {"kbit/s", kilo, 8}, {"Mbit/s", mega, 8}, {"Gbit/s", giga, 8}, {"Tbit/s", tera, 8},
	},
}

var bytesQ = &quantity{
	name:    "size",
	example: `"4KB" or "2MiB"`,
	units: []unit{
		{"B", 1, 1},
		{"KB", kilo, 1}, {"kB", kilo, 1}, {"MB", mega, 1}, {"GB", giga, 1}, {"TB", tera, 1}, {"PB", peta, 1},
		{"KiB", kibi, 1}, {"MiB", mebi, 1}, {"GiB", gibi, 1}, {"TiB", tebi, 1}, {"PiB", pebi, 1},
	},
}

var fractionQ = &quantity{
	name:    "fraction",
	example: `"80%"`,
	units:   []unit{{"%", 1, 100}},
}

var percent = [][]string{{"%"}}

var ratioQ = &quantity{
	name:    "ratio",
	example: `"150%"`,
	units:   []unit{{"%", 1, 100}},
}

var powerQ = &quantity{
	name:    "power",
	example: `"150W" or "0.8kW"`,
	units:   []unit{{"mW", 1, 1000}, {"W", 1, 1}, {"kW", kilo, 1}, {"MW", mega, 1}},
}

var frequencyQ = &quantity{
	name:    "frequency",
	example: `"2.0GHz"`,
	units:   []unit{{"Hz", 1, 1}, {"kHz", kilo, 1}, {"MHz", mega, 1}, {"GHz", giga, 1}},
}

var rateQ = &quantity{
	name:    "rate",
	example: `"2000/s" or "1.5k/s"`,
	units: []unit{
		{"/s", 1, 1}, {"k/s", kilo, 1}, {"M/s", mega, 1}, {"G/s", giga, 1},
		{"/ms", 1000, 1}, {"/us", 1_000_000, 1}, {"/min", 1, 60}, {"/h", 1, 3600},
	},
}

// Duration is a span of simulated time; it is an engine.Time so that the
// engine can use it without conversion. Accepted: "250ns", "1.3us",
// "1.5ms", "2s", "5min", "1h" (also µs and μs). A value finer than one
// nanosecond is an error, not a rounding.
type Duration engine.Time

// ParseDuration parses a duration such as "1.3us".
func ParseDuration(s string) (Duration, error) {
	n, err := durationQ.parseInt(s, "nanoseconds")
	return Duration(n), err
}

// Time returns d as engine time.
func (d Duration) Time() engine.Time { return engine.Time(d) }

// String is the canonical form: whole hours or minutes where exact, else
// the largest of s, ms, us, ns that keeps an integer part, with as many
// decimals as needed to be exact ("1.3us", "1.000001s", "90min").
func (d Duration) String() string {
	v := int64(d)
	sign := ""
	if v < 0 {
		sign, v = "-", -v // only for printing; MarshalText refuses negatives
		if v < 0 {        // math.MinInt64
			return "-9223372036.854775808s"
		}
	}
	const (
		us  = int64(engine.Microsecond)
		ms  = int64(engine.Millisecond)
		sec = int64(engine.Second)
		mn  = int64(engine.Minute)
		hr  = int64(engine.Hour)
	)
	switch {
	case v == 0:
		return "0s"
	case v%hr == 0:
		return sign + strconv.FormatInt(v/hr, 10) + "h"
	case v%mn == 0:
		return sign + strconv.FormatInt(v/mn, 10) + "min"
	case v >= sec:
		return sign + fixed(v, 9) + "s"
	case v >= ms:
		return sign + fixed(v, 6) + "ms"
	case v >= us:
		return sign + fixed(v, 3) + "us"
	default:
		return sign + strconv.FormatInt(v, 10) + "ns"
	}
}

// fixed writes v / 10^decimals exactly, without trailing zeros.
func fixed(v int64, decimals int) string {
	s := strconv.FormatInt(v, 10)
	for len(s) <= decimals {
		s = "0" + s
	}
	whole, frac := s[:len(s)-decimals], strings.TrimRight(s[len(s)-decimals:], "0")
	if frac == "" {
		return whole
	}
	return whole + "." + frac
}

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) {
	if d < 0 {
		return nil, fmt.Errorf("duration %d ns: %w (must be non-negative)", int64(d), errDomain)
	}
	return []byte(d.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Bandwidth is a data rate in bytes per second. Accepted: B/s with K, M, G,
// T or Ki, Mi, Gi, Ti prefixes ("25GB/s", "12.5GiB/s"), and bits per second
// as bps, b/s or bit/s with K, M, G, T ("200Gbps", "100Gb/s").
type Bandwidth float64

// ParseBandwidth parses a bandwidth such as "25GB/s" or "200Gbps".
func ParseBandwidth(s string) (Bandwidth, error) {
	v, err := bandwidthQ.parseFloat(s)
	return Bandwidth(v), err
}

// BytesPerSecond returns b in bytes per second.
func (b Bandwidth) BytesPerSecond() float64 { return float64(b) }

// BitsPerSecond returns b in bits per second.
func (b Bandwidth) BitsPerSecond() float64 { return float64(b) * 8 }

var bandwidthPrefer = [][]string{
	{"TB/s", "GB/s", "MB/s", "KB/s", "B/s"},
	{"TiB/s", "GiB/s", "MiB/s", "KiB/s"},
	{"Tbps", "Gbps", "Mbps", "Kbps", "bps"},
}

// String is the shortest exact form, e.g. "25GB/s" or "12.5GiB/s".
func (b Bandwidth) String() string { return formatAny(bandwidthQ, float64(b), bandwidthPrefer) }

// MarshalText implements encoding.TextMarshaler.
func (b Bandwidth) MarshalText() ([]byte, error) {
	return marshalFloat(bandwidthQ, float64(b), bandwidthPrefer)
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (b *Bandwidth) UnmarshalText(t []byte) error {
	return unmarshalFloat(bandwidthQ, t, (*float64)(b))
}

// Bytes is an amount of data in bytes. Accepted: B with K, M, G, T, P or
// Ki, Mi, Gi, Ti, Pi prefixes ("4KB" = 4000 B, "2MiB" = 2097152 B). A
// fractional number of bytes is an error.
type Bytes int64

// ParseBytes parses a size such as "4KB" or "602112B".
func ParseBytes(s string) (Bytes, error) {
	n, err := bytesQ.parseInt(s, "bytes")
	return Bytes(n), err
}

// String is the shortest exact form among B and the decimal and binary
// prefixes: "4KB", "2MiB", "602112B" becomes "588KiB".
func (b Bytes) String() string {
	v := int64(b)
	if v < 0 {
		return strconv.FormatInt(v, 10) + "B"
	}
	best := strconv.FormatInt(v, 10) + "B"
	if v == 0 {
		return best
	}
	for _, u := range []struct {
		name  string
		scale int64
	}{{"PB", peta}, {"TB", tera}, {"GB", giga}, {"MB", mega}, {"KB", kilo}, {"PiB", pebi}, {"TiB", tebi}, {"GiB", gibi}, {"MiB", mebi}, {"KiB", kibi}} {
		if v%u.scale == 0 {
			if s := strconv.FormatInt(v/u.scale, 10) + u.name; len(s) < len(best) {
				best = s
			}
		}
	}
	return best
}

// MarshalText implements encoding.TextMarshaler.
func (b Bytes) MarshalText() ([]byte, error) {
	if b < 0 {
		return nil, fmt.Errorf("size %d B: %w (must be non-negative)", int64(b), errDomain)
	}
	return []byte(b.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (b *Bytes) UnmarshalText(t []byte) error {
	v, err := ParseBytes(string(t))
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// Fraction is a share between 0 and 1, written as a percentage between 0%
// and 100% ("80%" is 0.8). A bare number is an error: "0.8" and "80" are
// both plausible readings of a user's intent, so neither is guessed.
type Fraction float64

// ParseFraction parses a percentage between 0% and 100%.
func ParseFraction(s string) (Fraction, error) {
	v, err := fractionQ.parseFloat(s)
	if err == nil && v > 1 {
		return 0, fractionQ.fail(s, "above 100%% (a fraction is at most 100%%)")
	}
	return Fraction(v), err
}

// String writes f as a percentage, exactly: 0.8 is "80%".
func (f Fraction) String() string { return formatAny(fractionQ, float64(f), percent) }

// MarshalText implements encoding.TextMarshaler.
func (f Fraction) MarshalText() ([]byte, error) {
	if f > 1 {
		return nil, fmt.Errorf("fraction %v: %w (must be at most 1)", float64(f), errDomain)
	}
	return marshalFloat(fractionQ, float64(f), percent)
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (f *Fraction) UnmarshalText(t []byte) error {
	v, err := ParseFraction(string(t))
	if err != nil {
		return err
	}
	*f = v
	return nil
}

// Ratio is a non-negative proportion that may exceed 1, written as a
// percentage ("150%" is 1.5), for fields such as an overcommit factor where
// more than 100% is meaningful.
type Ratio float64

// ParseRatio parses a non-negative percentage.
func ParseRatio(s string) (Ratio, error) {
	v, err := ratioQ.parseFloat(s)
	return Ratio(v), err
}

// String writes r as a percentage, exactly.
func (r Ratio) String() string { return formatAny(ratioQ, float64(r), percent) }

// MarshalText implements encoding.TextMarshaler.
func (r Ratio) MarshalText() ([]byte, error) { return marshalFloat(ratioQ, float64(r), percent) }

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *Ratio) UnmarshalText(t []byte) error { return unmarshalFloat(ratioQ, t, (*float64)(r)) }

// Power is electrical power in watts: "150W", "0.8kW", "500mW", "1.2MW".
type Power float64

// ParsePower parses a power such as "150W".
func ParsePower(s string) (Power, error) {
	v, err := powerQ.parseFloat(s)
	return Power(v), err
}

// Watts returns p in watts.
func (p Power) Watts() float64 { return float64(p) }

var powerPrefer = [][]string{{"MW", "kW", "W", "mW"}}

// String is the shortest exact form, e.g. "150W" or "1.2kW".
func (p Power) String() string { return formatAny(powerQ, float64(p), powerPrefer) }

// MarshalText implements encoding.TextMarshaler.
func (p Power) MarshalText() ([]byte, error) { return marshalFloat(powerQ, float64(p), powerPrefer) }

// UnmarshalText implements encoding.TextUnmarshaler.
func (p *Power) UnmarshalText(t []byte) error { return unmarshalFloat(powerQ, t, (*float64)(p)) }

// Frequency is a clock rate in hertz: "2.0GHz", "800MHz".
type Frequency float64

// ParseFrequency parses a frequency such as "2.0GHz".
func ParseFrequency(s string) (Frequency, error) {
	v, err := frequencyQ.parseFloat(s)
	return Frequency(v), err
}

// Hertz returns f in hertz.
func (f Frequency) Hertz() float64 { return float64(f) }

var frequencyPrefer = [][]string{{"GHz", "MHz", "kHz", "Hz"}}

// String is the shortest exact form, e.g. "2GHz".
func (f Frequency) String() string { return formatAny(frequencyQ, float64(f), frequencyPrefer) }

// MarshalText implements encoding.TextMarshaler.
func (f Frequency) MarshalText() ([]byte, error) {
	return marshalFloat(frequencyQ, float64(f), frequencyPrefer)
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (f *Frequency) UnmarshalText(t []byte) error {
	return unmarshalFloat(frequencyQ, t, (*float64)(f))
}

// Rate is a number of events per second: "2000/s", "1.5k/s" (1500 per
// second), "100/ms" (100000 per second), "30/min", "2/h".
type Rate float64

// ParseRate parses a rate such as "2000/s".
func ParseRate(s string) (Rate, error) {
	v, err := rateQ.parseFloat(s)
	return Rate(v), err
}

// PerSecond returns r in events per second.
func (r Rate) PerSecond() float64 { return float64(r) }

// Interval returns the mean gap between events at rate r; a zero rate has
// no finite gap and reports false.
func (r Rate) Interval() (engine.Time, bool) {
	if r <= 0 {
		return 0, false
	}
	return engine.Seconds(1 / float64(r)), true
}

var ratePrefer = [][]string{{"G/s", "M/s", "k/s", "/s"}}

// String is the shortest exact form, e.g. "2k/s".
func (r Rate) String() string { return formatAny(rateQ, float64(r), ratePrefer) }

// MarshalText implements encoding.TextMarshaler.
func (r Rate) MarshalText() ([]byte, error) { return marshalFloat(rateQ, float64(r), ratePrefer) }

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *Rate) UnmarshalText(t []byte) error { return unmarshalFloat(rateQ, t, (*float64)(r)) }

// Money is an amount in US dollars, written with a leading dollar sign:
// "$231", "$4.10", "$0.12". Thousands separators ("$1,000") are rejected
// rather than read: in YAML flow lists a comma separates items, and in many
// locales it is the decimal mark, so "$1,000" is not safe to guess.
type Money float64

var moneyQ = &quantity{name: "money", example: `"$231" or "$4.10"`, units: []unit{{"$", 1, 1}}}

// ParseMoney parses an amount such as "$4.10".
func ParseMoney(s string) (Money, error) {
	t := strings.TrimSpace(s)
	if strings.Contains(t, ",") {
		return 0, moneyQ.fail(s, "write dollars without thousands separators, e.g. \"$1000\"")
	}
	rest, ok := strings.CutPrefix(t, "$")
	if !ok {
		if strings.HasSuffix(t, "$") || strings.HasSuffix(t, "USD") {
			return 0, moneyQ.fail(s, "put the dollar sign first, e.g. %s", moneyQ.example)
		}
		return 0, moneyQ.fail(s, "missing the leading dollar sign; write e.g. %s", moneyQ.example)
	}
	if rest == "" || rest[0] == ' ' {
		return 0, moneyQ.fail(s, "write the amount right after the dollar sign, e.g. %s", moneyQ.example)
	}
	// Reuse the strict number reader with the dollar sign moved to the
	// unit position, so that "$-3", "$1e999" and "$NaN" fail the same way
	// as other quantities.
	v, err := moneyQ.parseFloat(rest + "$")
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.Input = s
		}
		return 0, err
	}
	return Money(v), nil
}

// Dollars returns m in US dollars.
func (m Money) Dollars() float64 { return float64(m) }

// String writes m as "$" and the shortest exact decimal: 4.1 is "$4.1".
func (m Money) String() string { return "$" + formatShifted(float64(m), 0) }

// MarshalText implements encoding.TextMarshaler.
func (m Money) MarshalText() ([]byte, error) {
	if err := checkFloat(moneyQ, float64(m)); err != nil {
		return nil, err
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *Money) UnmarshalText(t []byte) error {
	v, err := ParseMoney(string(t))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

func formatAny(q *quantity, v float64, prefer [][]string) string {
	if checkFloat(q, v) != nil {
		return strconv.FormatFloat(v, 'g', -1, 64) + prefer[0][len(prefer[0])-1]
	}
	return q.formatFloat(v, prefer)
}

func marshalFloat(q *quantity, v float64, prefer [][]string) ([]byte, error) {
	if err := checkFloat(q, v); err != nil {
		return nil, err
	}
	return []byte(q.formatFloat(v, prefer)), nil
}

func unmarshalFloat(q *quantity, t []byte, dst *float64) error {
	v, err := q.parseFloat(string(t))
	if err != nil {
		return err
	}
	*dst = v
	return nil
}

// Accepted returns the units accepted by a quantity type's parser, for
// documentation: Accepted(Bandwidth(0)) lists "B/s", "KB/s", ... It returns
// nil for a type that is not a quantity of this package.
func Accepted(v any) []string {
	if q := quantityOf(v); q != nil {
		return q.unitNames()
	}
	return nil
}

// BaseUnit names the SI unit a quantity type holds its value in, for
// documentation ("B/s" for Bandwidth, "ns" for Duration).
func BaseUnit(v any) string {
	switch v.(type) {
	case Duration, *Duration:
		return "ns"
	case Bandwidth, *Bandwidth:
		return "B/s"
	case Bytes, *Bytes:
		return "B"
	case Fraction, *Fraction:
		return "fraction of 1 (write %)"
	case Ratio, *Ratio:
		return "ratio (write %)"
	case Power, *Power:
		return "W"
	case Money, *Money:
		return "USD"
	case Frequency, *Frequency:
		return "Hz"
	case Rate, *Rate:
		return "1/s"
	}
	return ""
}

func quantityOf(v any) *quantity {
	switch v.(type) {
	case Duration, *Duration:
		return durationQ
	case Bandwidth, *Bandwidth:
		return bandwidthQ
	case Bytes, *Bytes:
		return bytesQ
	case Fraction, *Fraction:
		return fractionQ
	case Ratio, *Ratio:
		return ratioQ
	case Power, *Power:
		return powerQ
	case Money, *Money:
		return moneyQ
	case Frequency, *Frequency:
		return frequencyQ
	case Rate, *Rate:
		return rateQ
	}
	return nil
}

// QuantityName names the quantity a type of this package holds, as used in
// messages and documentation ("bandwidth", "duration"); "" for other types.
func QuantityName(v any) string {
	if q := quantityOf(v); q != nil {
		return q.name
	}
	return ""
}

// Example returns a sample of the written form of a quantity type, for
// messages and documentation (`"25GB/s" or "200Gbps"`); "" for other types.
func Example(v any) string {
	if q := quantityOf(v); q != nil {
		return q.example
	}
	return ""
}
