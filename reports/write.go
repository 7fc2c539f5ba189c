package reports

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
)

// WriteJSONAtomic writes v as indented JSON with a trailing newline,
// atomically (temp file, fsync, rename). Map keys come out sorted and
// struct fields in declaration order, so equal values give equal bytes.
func WriteJSONAtomic(fsys atomicfs.FS, path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return atomicfs.WriteFile(fsys, path, append(b, '\n'))
}

// EncodeCSV formats a header and rows as CSV (RFC 4180, "\n" line ends).
func EncodeCSV(header []string, rows [][]string) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if err := w.Write(header); err != nil {
		return nil, err
	}
	for i, r := range rows {
		if len(r) != len(header) {
			return nil, fmt.Errorf("csv row %d has %d fields, header has %d", i+1, len(r), len(header))
		}
		if err := w.Write(r); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// WriteCSVAtomic writes a header and rows to path atomically.
func WriteCSVAtomic(fsys atomicfs.FS, path string, header []string, rows [][]string) error {
	b, err := EncodeCSV(header, rows)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return atomicfs.WriteFile(fsys, path, b)
}

// FormatFloat is the one number format of CSV and tables: the shortest
// representation that reads back to the same float64, "" for NaN.
func FormatFloat(v float64) string {
	if math.IsNaN(v) {
		return ""
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// fmtSig formats v for a human table: 4 significant digits, whole numbers
// from 10,000 up to a billion ("233493", never "2.335e+05"), an exponent
// only beyond that or below 0.001, "0" within 1e-9 of zero (a rounding
// error's -2.220e-14 says nothing), "-" for NaN.
func fmtSig(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.IsInf(v, 0):
		return "inf"
	case math.Abs(v) < 1e-9:
		// Zero up to rounding (two equal latencies' difference:
		// -2.220e-14) is the 0 it is, never a sign or an exponent.
		return "0"
	case math.Abs(v) >= 1e9 || math.Abs(v) < 1e-3:
		return strconv.FormatFloat(v, 'e', 3, 64)
	case math.Abs(v) >= 1e4:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}
