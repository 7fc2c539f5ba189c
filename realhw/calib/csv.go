package calib

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

// ParseCSV reads the generic measurement CSV:
//
//	# comment lines and blank lines are ignored
//	stage,bytes,latency_us[,background_load]
//	rdma-write,4096,2.31
//	tcp-e2e,65536,18.4,0.4
//
// The header is required and names the columns in this order; the
// optional fourth column is the background CPU load as a fraction in
// [0, 1). bytes is a non-negative integer, latency_us a non-negative
// number of microseconds. Any other shape is an error naming the line.
func ParseCSV(r io.Reader, name string) ([]realhw.Sample, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var out []realhw.Sample
	cols := 0
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		f := strings.Split(text, ",")
		for i := range f {
			f[i] = strings.TrimSpace(f[i])
		}
		if cols == 0 {
			want := []string{"stage", "bytes", "latency_us", "background_load"}
			if len(f) < 3 || len(f) > 4 {
				return nil, fmt.Errorf("%s:%d: header has %d columns; want %q", name, line, len(f), "stage,bytes,latency_us[,background_load]")
			}
			for i := range f {
				if f[i] != want[i] {
					return nil, fmt.Errorf("%s:%d: header column %d is %q, want %q (header: stage,bytes,latency_us[,background_load])", name, line, i+1, f[i], want[i])
				}
			}
			cols = len(f)
			continue
		}
		if len(f) != cols {
			return nil, fmt.Errorf("%s:%d: %d fields, the header has %d", name, line, len(f), cols)
		}
		s := realhw.Sample{Stage: f[0], Source: fmt.Sprintf("%s:%d", name, line)}
		if s.Stage == "" {
			return nil, fmt.Errorf("%s:%d: empty stage name", name, line)
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s:%d: bytes %q must be an integer >= 0", name, line, f[1])
		}
		s.Bytes = n
		us, err := strconv.ParseFloat(f[2], 64)
		if err != nil || !(us >= 0) || us > 1e12 {
			return nil, fmt.Errorf("%s:%d: latency_us %q must be a number of microseconds in [0, 1e12]", name, line, f[2])
		}
		s.Latency = engine.Time(math.Round(us * 1e3))
		if cols == 4 {
			u, err := strconv.ParseFloat(f[3], 64)
			if err != nil || !(u >= 0 && u < 1) {
				return nil, fmt.Errorf("%s:%d: background_load %q must be a fraction in [0, 1)", name, line, f[3])
			}
			s.BackgroundLoad = u
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	if cols == 0 {
		return nil, fmt.Errorf("%s: no header line %q found", name, "stage,bytes,latency_us[,background_load]")
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s:%d: no measurement under the header; want one line stage,bytes,latency_us per measurement", name, line)
	}
	return out, nil
}
