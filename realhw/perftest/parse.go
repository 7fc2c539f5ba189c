package perftest

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/realhw"
)

// Kind is a perftest measurement kind.
type Kind string

const (
	Bandwidth Kind = "bw"
	Latency   Kind = "lat"
)

// Result is one perftest run's table.
type Result struct {
	Tool string // "ib_write_bw", "ib_read_lat", ...
	Verb string // "write", "read", "send"
	Kind Kind
	// RTTFactor is how many reported latencies make one round trip:
	// ib_write_lat and ib_send_lat report half a round trip (2), ib_read_lat
	// a full one (1) (perftest_parameters.c, rtt_factor). 0 for bandwidth.
	RTTFactor int
	// BWUnit is the bandwidth unit the header named: "MiB/s" (labelled
	// MiB/sec, or MB/sec before perftest 1d202bb, both divided by 2^20) or
	// "Gb/s" (--report_gbits, 10^9 bit/s).
	BWUnit string
	Rows   []Row
	// Skipped lists the noise lines skipped inside the table, by line.
	Skipped []int
	// Warnings says what was odd but not fatal: a table without its
	// closing dashes line (output pasted or cut short after a whole row).
	Warnings []string
}

// Row is one table row, converted to SI: bytes, bytes per second,
// messages per second and seconds.
type Row struct {
	Line       int
	Bytes      int64
	Iterations int64
	// Bandwidth tests.
	BWPeak, BWAverage float64 // bytes/s
	MsgRate           float64 // messages/s
	// Latency tests, as reported (half or full round trip, see RTTFactor).
	TMin, TMax, TTypical, TAvg float64 // seconds; TTypical is the median
	TStdev, P99, P999          float64 // seconds; NaN when the header lacks them
}

// RoundTrip returns the median round-trip time of a latency row:
// TTypical times the tool's RTT factor.
func (r *Result) RoundTrip(row Row) float64 { return row.TTypical * float64(r.RTTFactor) }

// banners maps the test title perftest prints to (tool, verb, kind).
var banners = []struct{ title, tool, verb string }{
	{"RDMA_Write BW Test", "ib_write_bw", "write"},
	{"RDMA_Read BW Test", "ib_read_bw", "read"},
	{"Send BW Test", "ib_send_bw", "send"},
	{"RDMA_Write Latency Test", "ib_write_lat", "write"},
	{"RDMA_Read Latency Test", "ib_read_lat", "read"},
	{"Send Latency Test", "ib_send_lat", "send"},
}

// toolInfo returns the verb and kind of a tool name, and whether it is one
// this parser knows.
func toolInfo(tool string) (verb string, kind Kind, rtt int, ok bool) {
	for _, b := range banners {
		if b.tool == tool {
			verb = b.verb
			ok = true
		}
	}
	if !ok {
		return "", "", 0, false
	}
	if strings.HasSuffix(tool, "_bw") {
		return verb, Bandwidth, 0, true
	}
	if verb == "read" {
		return verb, Latency, 1, true
	}
	return verb, Latency, 2, true
}

// column is a header column this parser understands.
type column int

const (
	colSkip column = iota // known but unused (CPU_Util, per-port, #sl)
	colBytes
	colIters
	colBWPeak
	colBWAvg
	colMsgRate
	colTMin
	colTMax
	colTTyp
	colTAvg
	colTStdev
	colP99
	colP999
)

// Parse reads perftest text output. The tool is taken from the banner
// ("RDMA_Write Latency Test") and, when the banner is absent (a pasted
// table), from name, which must then contain the tool name
// ("ib_read_lat.txt"). Units come from the header only. Lines inside the
// table that do not start with a digit (CPU frequency warnings, CUDA
// messages) are skipped and listed in Result.Skipped; a row that starts
// with a digit but does not parse (a row cut short) or a table without
// rows is an error naming the line. A table without its closing dashes
// line is read as far as it goes, with a warning in Result.Warnings: a
// pasted table often ends at its last row.
func Parse(r io.Reader, name string) (*Result, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	res := &Result{}
	var cols []column
	headerLine := 0
	closed := false
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if res.Tool == "" {
			for _, b := range banners {
				if text == b.title {
					res.Tool = b.tool
				}
			}
		}
		if cols == nil {
			if strings.HasPrefix(text, "#bytes") {
				var err error
				if cols, err = res.header(text); err != nil {
					return nil, fmt.Errorf("%s:%d: %w", name, line, err)
				}
				headerLine = line
			}
			continue
		}
		if closed {
			continue // after the table: summary lines, ignored
		}
		if isSeparator(text) {
			closed = true
			continue
		}
		if text == "" || text[0] < '0' || text[0] > '9' {
			res.Skipped = append(res.Skipped, line)
			if text != "" { // said, so that a garbled row is not lost unseen
				res.Warnings = append(res.Warnings, fmt.Sprintf("%s:%d: left out: a line inside the table that is not a row (it does not start with a byte count): %q", name, line, clip(text, 60)))
			}
			continue
		}
		row, err := parseRow(strings.Fields(text), cols, res.BWUnit)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		row.Line = line
		res.Rows = append(res.Rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	if cols == nil {
		return nil, fmt.Errorf("%s: no perftest table header (a line starting with \"#bytes\") found", name)
	}
	if len(res.Rows) == 0 {
		return nil, fmt.Errorf("%s:%d: table has no rows", name, headerLine)
	}
	if !closed {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s:%d: the table from line %d has no closing dashes line: read %d rows to the end of the file; check that the output was not cut short", name, line, headerLine, len(res.Rows)))
	}
	if res.Tool == "" {
		for _, b := range banners {
			if strings.Contains(name, b.tool) {
				res.Tool = b.tool
			}
		}
	}
	if res.Tool == "" {
		return nil, fmt.Errorf("%s: cannot tell which perftest tool wrote this: no banner such as %q and no tool name (ib_write_lat, ...) in the file name", name, "RDMA_Write Latency Test")
	}
	verb, kind, rtt, _ := toolInfo(res.Tool)
	if kind != res.Kind {
		return nil, fmt.Errorf("%s:%d: %s header in %s output", name, headerLine, res.Kind, res.Tool)
	}
	res.Verb, res.RTTFactor = verb, rtt
	return res, nil
}

// clip shortens s to at most n bytes for a message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func isSeparator(s string) bool {
	return len(s) >= 10 && strings.Trim(s, "-") == ""
}

// header maps the header's columns and sets the kind and bandwidth unit.
func (res *Result) header(text string) ([]column, error) {
	// Column names contain spaces ("BW peak[MiB/sec]", "99% percentile[usec]"),
	// so split on the '#' and ']' that end them instead of on whitespace.
	names := splitHeader(text)
	var cols []column
	for _, n := range names {
		c, unit, err := classify(n)
		if err != nil {
			return nil, err
		}
		if unit != "" {
			if res.BWUnit != "" && res.BWUnit != unit {
				return nil, fmt.Errorf("header mixes bandwidth units %s and %s", res.BWUnit, unit)
			}
			res.BWUnit = unit
		}
		cols = append(cols, c)
	}
	has := func(c column) bool {
		for _, x := range cols {
			if x == c {
				return true
			}
		}
		return false
	}
	switch {
	case len(cols) < 2 || cols[0] != colBytes:
		return nil, fmt.Errorf("header %q: the first column must be #bytes", text)
	case has(colBWAvg):
		res.Kind = Bandwidth
	case has(colTTyp) || has(colTAvg):
		res.Kind = Latency
	default:
		return nil, fmt.Errorf("header %q has neither a bandwidth nor a latency column", text)
	}
	return cols, nil
}

// splitHeader splits a header into column names: "#bytes", "#iterations",
// and names ending in "]" ("t_min[usec]"), plus bare trailing words
// ("tps average").
func splitHeader(s string) []string {
	var out []string
	f := strings.Fields(s)
	var cur []string
	for _, w := range f {
		if strings.HasPrefix(w, "#") && len(cur) == 0 {
			out = append(out, w)
			continue
		}
		cur = append(cur, w)
		if strings.HasSuffix(w, "]") {
			out = append(out, strings.Join(cur, " "))
			cur = nil
		}
	}
	if len(cur) > 0 {
		out = append(out, strings.Join(cur, " "))
	}
	return out
}

func classify(n string) (column, string, error) {
	bwUnit := func(n string) (string, error) {
		switch {
		case strings.HasSuffix(n, "[MiB/sec]"), strings.HasSuffix(n, "[MB/sec]"):
			// perftest divided by 0x100000 under both labels.
			return "MiB/s", nil
		case strings.HasSuffix(n, "[Gb/sec]"):
			return "Gb/s", nil
		}
		return "", fmt.Errorf("bandwidth column %q has an unknown unit; want [MiB/sec], [MB/sec] or [Gb/sec]", n)
	}
	switch {
	case n == "#bytes":
		return colBytes, "", nil
	case n == "#iterations":
		return colIters, "", nil
	case n == "#sl", n == "tps average", strings.HasPrefix(n, "CPU_Util"), strings.Contains(n, "Port1"), strings.Contains(n, "Port2"):
		return colSkip, "", nil
	case strings.HasPrefix(n, "BW peak"):
		u, err := bwUnit(n)
		return colBWPeak, u, err
	case strings.HasPrefix(n, "BW average"):
		u, err := bwUnit(n)
		return colBWAvg, u, err
	case n == "MsgRate[Mpps]":
		return colMsgRate, "", nil
	case n == "t_min[usec]":
		return colTMin, "", nil
	case n == "t_max[usec]":
		return colTMax, "", nil
	case n == "t_typical[usec]":
		return colTTyp, "", nil
	case n == "t_avg[usec]":
		return colTAvg, "", nil
	case n == "t_stdev[usec]":
		return colTStdev, "", nil
	case n == "99% percentile[usec]":
		return colP99, "", nil
	case n == "99.9% percentile[usec]":
		return colP999, "", nil
	}
	return 0, "", fmt.Errorf("unknown perftest column %q", n)
}

func parseRow(f []string, cols []column, bwUnit string) (Row, error) {
	row := Row{TStdev: math.NaN(), P99: math.NaN(), P999: math.NaN(), TMin: math.NaN(), TMax: math.NaN(), TAvg: math.NaN(), TTypical: math.NaN()}
	if len(f) != len(cols) {
		return row, fmt.Errorf("row has %d fields, the header has %d columns (truncated or malformed row)", len(f), len(cols))
	}
	bw := 1.0
	switch bwUnit {
	case "MiB/s":
		bw = 1 << 20
	case "Gb/s":
		bw = 1e9 / 8
	}
	for i, c := range cols {
		if c == colSkip {
			continue
		}
		if c == colBytes || c == colIters {
			v, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil || v < 0 {
				return row, fmt.Errorf("field %d %q must be a non-negative integer", i+1, f[i])
			}
			if c == colBytes {
				row.Bytes = v
			} else {
				row.Iterations = v
			}
			continue
		}
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil || !(v >= 0 && v <= 1e12) {
			return row, fmt.Errorf("field %d %q must be a number in [0, 1e12]", i+1, f[i])
		}
		const us = 1e-6
		switch c {
		case colBWPeak:
			row.BWPeak = v * bw
		case colBWAvg:
			row.BWAverage = v * bw
		case colMsgRate:
			row.MsgRate = v * 1e6
		case colTMin:
			row.TMin = v * us
		case colTMax:
			row.TMax = v * us
		case colTTyp:
			row.TTypical = v * us
		case colTAvg:
			row.TAvg = v * us
		case colTStdev:
			row.TStdev = v * us
		case colP99:
			row.P99 = v * us
		case colP999:
			row.P999 = v * us
		}
	}
	return row, nil
}

// Samples turns the result into realhw samples under the stage
// "rdma-<verb>" (a latency test) or "rdma-<verb>-bw" (a bandwidth test).
// A latency sample is the median as reported: one way (half the round
// trip) for write and send, the full round trip for read, which is the
// time a READ takes. A bandwidth sample's latency is the steady-state
// time per message, bytes / average bandwidth. A duration-mode latency
// table (t_avg only) uses t_avg.
func (r *Result) Samples() []realhw.Sample {
	var out []realhw.Sample
	for _, row := range r.Rows {
		s := realhw.Sample{Bytes: row.Bytes, Source: fmt.Sprintf("%s:%d", r.Tool, row.Line)}
		var sec float64
		if r.Kind == Bandwidth {
			s.Stage = "rdma-" + r.Verb + "-bw"
			if row.BWAverage <= 0 {
				continue
			}
			sec = float64(row.Bytes) / row.BWAverage
		} else {
			s.Stage = "rdma-" + r.Verb
			sec = row.TTypical
			if math.IsNaN(sec) {
				sec = row.TAvg
			}
		}
		s.Latency = engine.Time(math.Round(sec * 1e9))
		out = append(out, s)
	}
	return out
}
