package units

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/internal/suggest"
)

// unit is one accepted spelling of a unit with its exact scale to the SI
// base unit of its quantity, as the rational num/den.
type unit struct {
	name     string
	num, den int64
}

// quantity describes a kind of value: its name in messages, its units in
// the order they are listed to a user, and an example.
type quantity struct {
	name    string
	units   []unit
	example string
}

// maxInput bounds the length of a quantity string. Nothing legitimate is
// longer, and it keeps a hostile or fuzzed input from making big.Rat work
// on megabyte-long mantissas.
const maxInput = 64

// maxExponent bounds a scientific exponent ("1e400"): big.Rat would
// otherwise compute 10^1e9 exactly before we could say it is out of range.
const maxExponent = 400

// Error is a quantity that did not parse. Its message names the quantity,
// repeats the input, says what was wrong and lists the accepted units.
type Error struct {
	Quantity string // "bandwidth"
	Input    string // what was given
	Reason   string // what was wrong
	Accepted []string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%s %q: %s", e.Quantity, e.Input, e.Reason)
	if len(e.Accepted) > 0 {
		msg += "; accepted units: " + strings.Join(e.Accepted, ", ")
	}
	return msg
}

func (q *quantity) unitNames() []string {
	names := make([]string, len(q.units))
	for i, u := range q.units {
		names[i] = u.name
	}
	return names
}

func (q *quantity) fail(input, format string, args ...any) *Error {
	return &Error{Quantity: q.name, Input: input, Reason: fmt.Sprintf(format, args...), Accepted: q.unitNames()}
}

// splitNumber splits s into a leading decimal number (optional sign, digits
// with an optional point, optional exponent) and the rest. It returns an
// empty number when s does not start with one.
func splitNumber(s string) (num, rest string) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return "", s
	}
	// An exponent only counts when digits follow, so that a unit starting
	// with e or E (none today) would not be swallowed.
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j {
			i = k
		}
	}
	return s[:i], s[i:]
}

// parseRat reads s as a non-negative number followed by one of q's units
// and returns the value in base units, exactly.
func (q *quantity) parseRat(s string) (*big.Rat, error) {
	in := s
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, q.fail(in, "empty value; write a number followed by a unit, e.g. %s", q.example)
	}
	if len(s) > maxInput {
		return nil, &Error{Quantity: q.name, Input: in[:maxInput] + "...", Reason: fmt.Sprintf("longer than %d characters", maxInput)}
	}
	numStr, unitStr := splitNumber(s)
	if numStr == "" {
		return nil, q.fail(in, "does not start with a number; write e.g. %s", q.example)
	}
	unitStr = strings.TrimSpace(unitStr)
	if numStr[0] == '-' {
		return nil, q.fail(in, "negative values are not allowed")
	}
	if unitStr == "" {
		return nil, q.fail(in, "missing unit (a bare number is ambiguous); write e.g. %s", q.example)
	}
	var u *unit
	for i := range q.units {
		if q.units[i].name == unitStr {
			u = &q.units[i]
			break
		}
	}
	if u == nil {
		reason := fmt.Sprintf("unknown unit %q", unitStr)
		if near := q.nearestUnit(unitStr); near != "" {
			reason += fmt.Sprintf(" (did you mean %q?)", near)
		}
		return nil, q.fail(in, "%s", reason)
	}
	if e := exponentOf(numStr); e > maxExponent || e < -maxExponent {
		return nil, q.fail(in, "exponent out of range")
	}
	r, ok := new(big.Rat).SetString(numStr)
	if !ok {
		return nil, q.fail(in, "malformed number %q", numStr)
	}
	return r.Mul(r, big.NewRat(u.num, u.den)), nil
}

// exponentOf returns the decimal exponent written in a number ("1e-7" ->
// -7), 0 when there is none, and a huge value when it does not fit an int.
func exponentOf(num string) int {
	i := strings.IndexAny(num, "eE")
	if i < 0 {
		return 0
	}
	e, err := strconv.Atoi(strings.TrimPrefix(num[i+1:], "+"))
	if err != nil {
		return math.MaxInt
	}
	return e
}

// nearestUnit suggests a unit for a misspelt one: an exact match ignoring
// case first (gbps -> Gbps), then the closest by edit distance if it is
// close enough to be a plausible typo.
func (q *quantity) nearestUnit(s string) string {
	for _, u := range q.units {
		if strings.EqualFold(u.name, s) {
			return u.name
		}
	}
	best, bestD := "", 3
	for _, u := range q.units {
		if d := suggest.Distance(s, u.name); d < bestD {
			best, bestD = u.name, d
		}
	}
	return best
}

// parseFloat parses s into a float64 in base units, rounded once to
// nearest from the exact rational.
func (q *quantity) parseFloat(s string) (float64, error) {
	r, err := q.parseRat(s)
	if err != nil {
		return 0, err
	}
	f, _ := r.Float64()
	if math.IsInf(f, 0) {
		return 0, q.fail(s, "too large for a float64")
	}
	return f, nil
}

// parseInt parses s into an exact int64 count of base units; a value that
// is not a whole number of base units is an error, not a rounding.
func (q *quantity) parseInt(s string, base string) (int64, error) {
	r, err := q.parseRat(s)
	if err != nil {
		return 0, err
	}
	if !r.IsInt() {
		return 0, q.fail(s, "not a whole number of %s (%s %s)", base, r.FloatString(3), base)
	}
	n := r.Num()
	if !n.IsInt64() {
		return 0, q.fail(s, "too large (more than %d %s)", int64(math.MaxInt64), base)
	}
	return n.Int64(), nil
}

// errDomain is returned by MarshalText for a value that the parser would
// reject (negative, NaN, infinite), so that a marshalled value always
// parses back.
var errDomain = errors.New("value outside the domain of the quantity")

func checkFloat(q *quantity, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return fmt.Errorf("%s %v: %w (must be finite and non-negative)", q.name, v, errDomain)
	}
	return nil
}

// formatShifted writes v / 10^pow10 as a decimal string exactly, from the
// shortest representation of v that parses back to v. Shifting the decimal
// point in text is exact, so parsing the result and multiplying by 10^pow10
// gives back v bit for bit.
func formatShifted(v float64, pow10 int) string {
	if v == 0 {
		return "0"
	}
	e := strconv.FormatFloat(v, 'e', -1, 64) // "d.ddde±XX"
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	digits := strings.Replace(mant, ".", "", 1)
	point := 1 + exp - pow10 // digits before the decimal point
	switch {
	case point > 21 || point < -20:
		// Scientific form beyond the range where plain digits stay readable.
		s := digits[:1]
		if len(digits) > 1 {
			s += "." + digits[1:]
		}
		return s + "e" + strconv.Itoa(point-1)
	case point <= 0:
		return "0." + strings.Repeat("0", -point) + digits
	case point >= len(digits):
		return digits + strings.Repeat("0", point-len(digits))
	default:
		return digits[:point] + "." + digits[point:]
	}
}

// formatFloat writes v in the first group of units that gives a short
// exact text, using in that group the shortest. Groups say what users
// prefer to read (for bandwidth: decimal bytes, then binary bytes, then
// bits); each group is ordered from the largest unit to the smallest, and a
// unit larger than v is skipped (except the group's smallest) so that
// 0.5 GB/s reads 500MB/s rather than 0.5GB/s. "Short" means at most
// niceDigits significant digits; when no group is short, the shortest text
// of all wins. The first group must consist of power-of-ten units, which
// are exact by construction; other units are kept only if they round-trip.
func (q *quantity) formatFloat(v float64, groups [][]string) string {
	const niceDigits = 6
	overall := ""
	for _, group := range groups {
		best := ""
		for i, name := range group {
			u := q.lookup(name)
			scale := float64(u.num) / float64(u.den)
			if v < scale && v != 0 && i != len(group)-1 {
				continue
			}
			var s string
			if p, ok := pow10Of(u); ok {
				s = formatShifted(v, p) + u.name
			} else {
				s = strconv.FormatFloat(v/scale, 'g', -1, 64) + u.name
				if back, err := q.parseFloat(s); err != nil || back != v {
					continue
				}
			}
			if best == "" || len(s) < len(best) {
				best = s
			}
		}
		if best == "" {
			continue
		}
		if significantDigits(best) <= niceDigits {
			return best
		}
		if overall == "" || len(best) < len(overall) {
			overall = best
		}
	}
	return overall
}

// significantDigits counts the digits of the number at the start of s,
// without leading zeros or an exponent.
func significantDigits(s string) int {
	num, _ := splitNumber(s)
	if i := strings.IndexAny(num, "eE"); i >= 0 {
		num = num[:i]
	}
	num = strings.TrimLeft(strings.Replace(num, ".", "", 1), "0")
	return len(num)
}

// lookup returns the unit called name. The preferred lists are literals in
// this package and a test checks each name, so a miss is a programming
// error caught by that test, never a user's input.
func (q *quantity) lookup(name string) unit {
	for _, u := range q.units {
		if u.name == name {
			return u
		}
	}
	panic("units: unknown unit " + name + " in " + q.name)
}

// pow10Of reports whether u's scale is 10^p for some integer p.
func pow10Of(u unit) (int, bool) {
	n, d := u.num, u.den
	p := 0
	for n > 1 && n%10 == 0 {
		n /= 10
		p++
	}
	for d > 1 && d%10 == 0 {
		d /= 10
		p--
	}
	return p, n == 1 && d == 1
}
