package llm

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// csvTrace reads the rows of a CSV trace whose columns are found by name
// in its header row.
type csvTrace struct {
	name string
	r    *csv.Reader
	cols []string // the columns read, as the format names them
	idx  []int    // their positions in a row
	need int      // fields a row must have: max(idx)+1
}

// openCSV reads the header of a CSV trace and finds cols in it (case and
// surrounding space ignored; a leading byte-order mark skipped).
func openCSV(r io.Reader, name string, cols []string) (*csvTrace, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // a short row is reported by next, naming its line
	cr.ReuseRecord = true
	want := strings.Join(cols, ",")
	hdr, err := cr.Read()
	if err == io.EOF {
		return nil, &ParseError{File: name, Reason: "the file is empty; want a header row naming " + want}
	}
	if err != nil {
		return nil, csvError(name, err)
	}
	t := &csvTrace{name: name, r: cr, cols: cols}
	var missing []string
	for _, c := range cols {
		at := -1
		for i, h := range hdr {
			h = strings.TrimSpace(strings.TrimPrefix(h, bom))
			if strings.EqualFold(h, c) {
				at = i
				break
			}
		}
		if at < 0 {
			missing = append(missing, c)
		}
		t.idx = append(t.idx, at)
		t.need = max(t.need, at+1)
	}
	if len(missing) > 0 {
		return nil, &ParseError{File: name, Row: 1, Reason: fmt.Sprintf("the header %s lacks %s; want a header naming %s",
			quote(strings.Join(hdr, ",")), strings.Join(missing, ", "), want)}
	}
	return t, nil
}

// csvError turns a CSV syntax error into a ParseError at its position.
func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &ParseError{File: name, Row: pe.Line, Col: pe.Column,
			Reason: "CSV syntax: " + pe.Err.Error() + "; quote a field that holds a comma or a quote, doubling the quotes inside"}
	}
	return fmt.Errorf("llm: %s: %w", name, err)
}

// next returns the wanted fields of the next data row (trimmed, in the
// order of cols) and the row's line; io.EOF at the end. Blank lines are
// skipped by encoding/csv.
func (t *csvTrace) next(vals []string) ([]string, int, error) {
	rec, err := t.r.Read()
	if err != nil {
		if err == io.EOF {
			return nil, 0, err
		}
		return nil, 0, csvError(t.name, err)
	}
	line, _ := t.r.FieldPos(0)
	if len(rec) < t.need {
		return nil, line, &ParseError{File: t.name, Row: line, Reason: fmt.Sprintf("the row has %d fields; want at least %d (%s)", len(rec), t.need, strings.Join(t.cols, ","))}
	}
	vals = vals[:0]
	for _, i := range t.idx {
		vals = append(vals, strings.TrimSpace(rec[i]))
	}
	return vals, line, nil
}

// errAt returns a ParseError at the k-th wanted column of the current row.
func (t *csvTrace) errAt(k int, reason string) error {
	line, col := t.r.FieldPos(t.idx[k])
	return &ParseError{File: t.name, Row: line, Col: col, Column: t.cols[k], Reason: reason}
}

// tokens parses the k-th wanted field as a whole number of tokens, without
// checking its range.
func (t *csvTrace) tokens(vals []string, k int) (int64, error) {
	v, err := strconv.ParseInt(vals[k], 10, 64)
	if err != nil {
		return 0, t.errAt(k, fmt.Sprintf("value %s is not a whole number of tokens; write the count in digits, e.g. 374", quote(vals[k])))
	}
	return v, nil
}

// length parses the k-th wanted field as a length in 1..MaxTokens.
func (t *csvTrace) length(vals []string, k int, what string) (int, error) {
	v, err := t.tokens(vals, k)
	if err != nil {
		return 0, err
	}
	if why := checkLength(v, what); why != "" {
		return 0, t.errAt(k, why)
	}
	return int(v), nil
}

// finiteIn parses s as a finite number in [lo, hi].
func finiteIn(s string, lo, hi float64) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil && !math.IsNaN(v) && v >= lo && v <= hi
}
