package trace

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/conspirator-sim/conspirator/engine"
)

// fieldErr is why one row cannot be imported.
type fieldErr struct {
	col    string
	kind   string // RejectCounts key
	reason string
	skip   bool // a policy skip, not a bad row
}

// skipRow is a policy skip of a whole row.
func skipRow(kind, reason string) *fieldErr { return &fieldErr{kind: kind, reason: reason, skip: true} }

// csvTable streams the records of a CSV file whose columns are known by
// name, either from its header row or, for headerless files, from a fixed
// list.
type csvTable struct {
	b    *builder
	r    *csv.Reader
	want []string // required columns
	// width is the number of columns the header (or the fixed list of a
	// headerless file) names: a row with more fields is malformed (its
	// values would be read under the wrong names), never read by position.
	width int
}

// openCSV reads the header (or takes names for a headerless file) and
// checks that every required column is present. A headerless file whose
// first row equals names is treated as having that header.
func openCSV(r io.Reader, b *builder, names, required []string, comment bool) (*csvTable, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // rows of the wrong width are rejected per row
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	if comment {
		cr.Comment = '#'
	}
	t := &csvTable{b: b, r: cr, want: required}
	b.header = map[string]int{}
	if names != nil {
		for i, n := range names {
			b.header[n] = i
		}
		t.width = len(names)
		return t, nil
	}
	hdr, err := cr.Read()
	if err == io.EOF {
		return nil, &RowError{File: b.file, Reason: "file is empty; want a header row"}
	}
	if err != nil {
		return nil, &RowError{File: b.file, Row: 1, Reason: "bad header: " + err.Error()}
	}
	for i, h := range hdr {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		if _, dup := b.header[h]; dup {
			return nil, &RowError{File: b.file, Row: 1, Col: i + 1, Column: h, Reason: "column appears twice in the header"}
		}
		b.header[h] = i
	}
	t.width = len(hdr)
	var missing []string
	for _, w := range required {
		if _, ok := b.header[w]; !ok {
			missing = append(missing, w)
		}
	}
	if len(missing) > 0 {
		return nil, &RowError{File: b.file, Row: 1, Reason: fmt.Sprintf("header lacks column(s) %s; want %s",
			strings.Join(missing, ", "), strings.Join(required, ","))}
	}
	return t, nil
}

// each calls fn for every data record with its 1-based line. Malformed
// records (CSV syntax, too few fields) are rejected here.
func (t *csvTable) each(fn func(rec []string, line int) error) error {
	need := 0
	for _, w := range t.want {
		need = max(need, t.b.header[w]+1)
	}
	for {
		rec, err := t.r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				return fmt.Errorf("%s: %w", t.b.file, err)
			}
			t.b.res.Read++
			if e := t.b.reject(pe.Line, "", "malformed row", "CSV syntax: "+pe.Err.Error(), false); e != nil {
				return e
			}
			continue
		}
		line, _ := t.r.FieldPos(0)
		t.b.res.Read++
		if len(rec) < need {
			if e := t.b.reject(line, "", "malformed row", fmt.Sprintf("row has %d fields; want at least %d", len(rec), need), false); e != nil {
				return e
			}
			continue
		}
		if t.width > 0 && len(rec) > t.width {
			if e := t.b.rejectAt(line, t.width+1, "malformed row", fmt.Sprintf("row has %d fields but the header names %d columns; a value holding a comma must be quoted", len(rec), t.width)); e != nil {
				return e
			}
			continue
		}
		if col, ok := invalidUTF8(rec, t.b.header); !ok {
			if e := t.b.reject(line, col, "bad encoding", "field is not valid UTF-8; save the file as UTF-8", false); e != nil {
				return e
			}
			continue
		}
		if err := fn(rec, line); err != nil {
			return err
		}
	}
}

// invalidUTF8 finds a field that is not valid UTF-8 and returns its column
// name (or its 1-based index past the header): such a byte sequence would
// be copied into IDs, result files and plots as garbage.
func invalidUTF8(rec []string, header map[string]int) (string, bool) {
	for i, f := range rec {
		if utf8.ValidString(f) {
			continue
		}
		for name, k := range header {
			if k == i {
				return name, false
			}
		}
		return fmt.Sprintf("field %d", i+1), false
	}
	return "", true
}

// fields reads typed values from one record; the first problem wins and
// later reads return zero values, so format code reads straight through and
// checks p.err once.
type fields struct {
	rec    []string
	header map[string]int
	err    *fieldErr
}

func (t *csvTable) fields(rec []string) *fields { return &fields{rec: rec, header: t.b.header} }

func (f *fields) str(col string) string {
	i, ok := f.header[col]
	if !ok || i >= len(f.rec) {
		return ""
	}
	return strings.TrimSpace(f.rec[i])
}

func (f *fields) bad(col, format string, a ...any) {
	if f.err == nil {
		f.err = &fieldErr{col: col, kind: "bad " + col, reason: fmt.Sprintf(format, a...)}
	}
}

// float reads a required finite number >= lo.
func (f *fields) float(col string, lo float64) float64 {
	v, ok := f.optFloat(col, lo)
	if !ok && f.err == nil {
		f.bad(col, "value is missing; want a number >= %g", lo)
	}
	return v
}

// optFloat reads an optional finite number >= lo; ok is false when empty.
func (f *fields) optFloat(col string, lo float64) (v float64, ok bool) {
	if f.err != nil {
		return 0, false
	}
	s := f.str(col)
	if s == "" {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		f.bad(col, "value %q is not a finite number", truncate(s, 40))
		return 0, false
	}
	if v < lo {
		f.bad(col, "value %q is below %g", truncate(s, 40), lo)
		return 0, false
	}
	return v, true
}

// int reads a required integer in [lo, hi].
func (f *fields) int(col string, lo, hi int64) int64 {
	v, ok := f.optInt(col, lo, hi)
	if !ok && f.err == nil {
		f.bad(col, "value is missing; want an integer %d..%d", lo, hi)
	}
	return v
}

// optInt reads an optional integer in [lo, hi]; ok is false when empty.
func (f *fields) optInt(col string, lo, hi int64) (int64, bool) {
	if f.err != nil {
		return 0, false
	}
	s := f.str(col)
	if s == "" {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		// Tolerate "4.0", which tools that round-trip through floats write.
		x, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			f.bad(col, "value %q is not an integer", truncate(s, 40))
			return 0, false
		}
		v = int64(x)
	}
	if v < lo || v > hi {
		f.bad(col, "value %d is outside %d..%d", v, lo, hi)
		return 0, false
	}
	return v, true
}

// maxSeconds bounds trace times, each and an arrival plus its duration
// (addJob), by the simulator's horizon (engine.Horizon, 100 years): a
// Unix date up to 2070 still reads.
const maxSeconds = engine.HorizonSeconds

// seconds reads an optional time or duration in seconds (a number), or a
// date-time "2006-01-02 15:04:05" (UTC), returned as seconds since the Unix
// epoch. ok is false when empty.
func (f *fields) seconds(col string) (engine.Time, bool) {
	if f.err != nil {
		return 0, false
	}
	s := f.str(col)
	if s == "" || s == "None" || s == "null" {
		return 0, false
	}
	t, err := parseSeconds(s)
	if err != nil {
		f.bad(col, "%v", err)
		return 0, false
	}
	return t, true
}

// parseSeconds parses a non-negative number of seconds or a date-time.
func parseSeconds(s string) (engine.Time, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(v) || v < 0 || v > maxSeconds {
			return 0, fmt.Errorf("time %q is not a number of seconds in 0..%g", truncate(s, 40), maxSeconds)
		}
		return engine.Seconds(v), nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05", time.RFC3339, "2006-01-02T15:04:05"} {
		if tm, err := time.Parse(layout, s); err == nil {
			u := tm.Unix()
			if u < 0 || float64(u) > maxSeconds {
				return 0, fmt.Errorf("date %q is before 1970 or too far ahead", truncate(s, 40))
			}
			return engine.Time(u) * engine.Second, nil
		}
	}
	return 0, fmt.Errorf("time %q is neither seconds nor a date like \"2017-10-07 01:12:09\"", truncate(s, 40))
}

// gpuShare converts an amount of GPU per instance (1.0 = one whole GPU) to
// whole GPUs and a per-GPU share: 0.25 -> (1, 250); 2 -> (2, 1000); a
// non-integer above one is spread evenly, 1.5 -> (2, 750).
func gpuShare(x float64) (n int, milli int) {
	if x <= 0 {
		return 0, 0
	}
	if x <= 1 {
		return 1, max(1, int(math.Round(x*1000)))
	}
	if x > 1<<20 {
		return math.MaxInt32, 1000 // rejected as too many GPUs
	}
	n = int(math.Ceil(x - 1e-9))
	return n, min(1000, max(1, int(math.Round(x/float64(n)*1000))))
}
