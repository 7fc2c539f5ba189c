package nvbandwidth

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

// Testcase is one nvbandwidth testcase's result matrix.
type Testcase struct {
	Name        string // e.g. "host_to_device_memcpy_ce"
	Line        int    // of the "Running ..." line
	Description string // e.g. "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)"
	Unit        string // "GB/s" (10^9 B/s) or "ns" (latency testcases)
	Columns     []string
	Rows        []string
	// Values[i][j] is row i, column j in the Unit; NaN where nvbandwidth
	// printed N/A (the diagonal of device-to-device matrices).
	Values [][]float64
	Sum    float64 // the SUM line (NaN when absent)
	Status string  // "" or the text of a "Waived:"/"ERROR:" line
}

// Parse reads nvbandwidth text output (as printed by Output::addTestcase
// and addTestcaseResults: "Running <name>.", a description line ending in
// "(GB/s)" or "(ns)", a header of column labels, one line per row label
// with %.2f values or N/A, then "SUM <name> <value>"). Version, device and
// NOTE lines are ignored. A testcase announced but not finished, a matrix
// row with the wrong number of values or a value that is not a number is
// an error naming the line.
func Parse(r io.Reader, name string) ([]Testcase, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var out []Testcase
	var cur *Testcase
	state := 0 // 0 outside, 1 after Running, 2 after description, 3 in matrix
	line := 0
	finish := func() error {
		if cur == nil {
			return nil
		}
		if cur.Status == "" && len(cur.Values) == 0 {
			return fmt.Errorf("%s:%d: testcase %s has no result matrix (truncated output?)", name, cur.Line, cur.Name)
		}
		out = append(out, *cur)
		cur = nil
		return nil
	}
	for sc.Scan() {
		line++
		raw := sc.Text()
		text := strings.TrimSpace(raw)
		switch {
		case strings.HasPrefix(text, "Running ") && strings.HasSuffix(text, "."):
			if err := finish(); err != nil {
				return nil, err
			}
			n := strings.TrimSuffix(strings.TrimPrefix(text, "Running "), ".")
			n = strings.TrimPrefix(n, "benchmark ") // older releases
			if n == "" || strings.ContainsAny(n, " \t") {
				return nil, fmt.Errorf("%s:%d: cannot read a testcase name from %q", name, line, text)
			}
			cur = &Testcase{Name: n, Line: line, Sum: math.NaN()}
			state = 1
			continue
		case cur == nil:
			continue
		case strings.HasPrefix(text, "Waived:"), strings.HasPrefix(text, "ERROR:"), strings.HasPrefix(text, "Error:"):
			cur.Status = text
			continue
		case strings.HasPrefix(text, "SUM "), strings.HasPrefix(text, "&&&& PERF "):
			f := strings.Fields(strings.TrimPrefix(strings.TrimPrefix(text, "&&&& PERF"), "SUM"))
			if len(f) < 2 {
				return nil, fmt.Errorf("%s:%d: SUM line %q needs a name and a value", name, line, text)
			}
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s:%d: SUM value %q is not a number", name, line, f[1])
			}
			cur.Sum = v
			if err := finish(); err != nil {
				return nil, err
			}
			state = 0
			continue
		}
		switch state {
		case 1:
			if text == "" {
				continue
			}
			switch {
			case strings.HasSuffix(text, "(GB/s)"):
				cur.Unit = "GB/s"
			case strings.HasSuffix(text, "(ns)"):
				cur.Unit = "ns"
			default:
				continue // verbose lines between Running and the matrix
			}
			cur.Description = text
			state = 2
		case 2:
			if text == "" {
				continue
			}
			cur.Columns = strings.Fields(text)
			state = 3
		case 3:
			if text == "" {
				continue // the blank line before SUM
			}
			f := strings.Fields(text)
			if len(f) != len(cur.Columns)+1 {
				return nil, fmt.Errorf("%s:%d: matrix row has %d values, the header has %d columns", name, line, len(f)-1, len(cur.Columns))
			}
			vals := make([]float64, len(cur.Columns))
			for j, s := range f[1:] {
				if s == "N/A" {
					vals[j] = math.NaN()
					continue
				}
				v, err := strconv.ParseFloat(s, 64)
				if err != nil || !(v >= 0) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("%s:%d: value %d %q must be a non-negative number or N/A", name, line, j+1, s)
				}
				vals[j] = v
			}
			cur.Rows = append(cur.Rows, f[0])
			cur.Values = append(cur.Values, vals)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	if cur != nil && cur.Status == "" && math.IsNaN(cur.Sum) {
		return nil, fmt.Errorf("%s:%d: truncated: testcase %s (line %d) has no SUM line", name, line, cur.Name, cur.Line)
	}
	if err := finish(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no nvbandwidth testcase (a \"Running <name>.\" line) found", name)
	}
	return out, nil
}

// Samples turns bandwidth testcases into realhw samples, one per matrix
// cell, under the stage "nvbandwidth/<testcase>": bufferBytes (the run's
// --bufferSize, which the text output does not print; nvbandwidth's
// default is 512 MiB in current releases, 64 MiB in early ones) over the
// cell's bandwidth. Latency testcases and N/A cells are left out.
func Samples(ts []Testcase, bufferBytes int64) ([]realhw.Sample, error) {
	if bufferBytes <= 0 {
		return nil, fmt.Errorf("nvbandwidth: buffer size %d must be > 0 (pass the run's --bufferSize in bytes)", bufferBytes)
	}
	var out []realhw.Sample
	for _, t := range ts {
		if t.Unit != "GB/s" {
			continue
		}
		for i, row := range t.Values {
			for j, v := range row {
				if math.IsNaN(v) || v <= 0 {
					continue
				}
				sec := float64(bufferBytes) / (v * 1e9)
				if sec > 1e6 {
					continue // below a byte per second: not a measurement
				}
				out = append(out, realhw.Sample{
					Stage: "nvbandwidth/" + t.Name, Bytes: bufferBytes,
					Latency: engine.Time(math.Round(sec * 1e9)),
					Source:  fmt.Sprintf("%s:%d row %s column %s", t.Name, t.Line, t.Rows[i], t.Columns[j]),
				})
			}
		}
	}
	return out, nil
}

// BufferFromCommand returns the buffer size in bytes from an nvbandwidth
// command line pasted into the output (a line running nvbandwidth with
// -b N or --bufferSize N, N in MiB), the line it was found on, and
// whether one was. nvbandwidth itself prints no buffer size: its text
// output has none, and its JSON declares a "bufferSize" key that v0.8
// never sets (json_output.cpp); the default is 512 MiB. A command line
// without -b ran with the default, but a file without a command line says
// nothing, so only an explicit size is taken from it.
func BufferFromCommand(data []byte) (bytes int64, line int, ok bool) {
	for i, l := range strings.Split(string(data), "\n") {
		f := strings.Fields(l)
		at := -1
		for k, w := range f {
			if strings.HasSuffix(w, "nvbandwidth") {
				at = k
				break
			}
		}
		if at < 0 {
			continue
		}
		for k := at + 1; k < len(f); k++ {
			var v string
			switch w := f[k]; {
			case w == "-b" || w == "--bufferSize":
				if k+1 < len(f) {
					v = f[k+1]
				}
			case strings.HasPrefix(w, "--bufferSize="):
				v = strings.TrimPrefix(w, "--bufferSize=")
			case strings.HasPrefix(w, "-b") && len(w) > 2:
				v = w[2:]
			default:
				continue
			}
			mib, err := strconv.ParseUint(v, 10, 64)
			if err != nil || mib == 0 || mib > 1<<20 {
				continue
			}
			return int64(mib) << 20, i + 1, true
		}
	}
	return 0, 0, false
}
