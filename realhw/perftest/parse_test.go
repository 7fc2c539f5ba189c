package perftest

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func parseFile(t *testing.T, name string) (*Result, error) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Parse(f, name)
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// Units come from the header: MiB/sec is 2^20 B/s, Gb/sec is 10^9 bit/s =
// 1.25e8 B/s. Expected values are the fixture's numbers times those factors.
func TestBandwidthUnitsFromHeader(t *testing.T) {
	cases := []struct {
		file      string
		unit      string
		rows      int
		skipped   int
		bytes     int64
		avg, peak float64 // bytes/s of the row with that size
		msgRate   float64
		stage     string
		latencyNs int64 // bytes / avg
	}{
		// 65536 B at 10240.00 MiB/s = 10240*1048576 = 10737418240 B/s;
		// 65536 / 10737418240 s = 6.103515625 us.
		{"ib_write_bw.txt", "MiB/s", 3, 1, 65536, 10240 * 1048576, 11000 * 1048576, 0.163840e6, "rdma-write-bw", 6104},
		// 1048576 B at 97.50 Gb/s = 97.5e9/8 = 1.21875e10 B/s;
		// 1048576 / 1.21875e10 s = 86.0370 us.
		{"ib_write_bw_gbits.txt", "Gb/s", 2, 1, 1048576, 97.5e9 / 8, 98e9 / 8, 0.011623e6, "rdma-write-bw", 86037},
	}
	for _, c := range cases {
		r, err := parseFile(t, c.file)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if r.Kind != Bandwidth || r.BWUnit != c.unit || len(r.Rows) != c.rows || len(r.Skipped) != c.skipped || r.Tool != "ib_write_bw" {
			t.Fatalf("%s: kind %s unit %s rows %d skipped %v tool %s", c.file, r.Kind, r.BWUnit, len(r.Rows), r.Skipped, r.Tool)
		}
		// Every skipped line is named in the warnings, with its text.
		for _, ln := range r.Skipped {
			tag := fmt.Sprintf("%s:%d: left out:", c.file, ln)
			if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.HasPrefix(w, tag) }) {
				t.Errorf("%s: skipped line %d is not in the warnings %q", c.file, ln, r.Warnings)
			}
		}
		found := false
		for i, row := range r.Rows {
			if row.Bytes != c.bytes {
				continue
			}
			found = true
			if !near(row.BWAverage, c.avg) || !near(row.BWPeak, c.peak) || !near(row.MsgRate, c.msgRate) {
				t.Errorf("%s: row %d avg %v peak %v rate %v, want %v %v %v", c.file, i, row.BWAverage, row.BWPeak, row.MsgRate, c.avg, c.peak, c.msgRate)
			}
			s := r.Samples()[i]
			if s.Stage != c.stage || int64(s.Latency) != c.latencyNs {
				t.Errorf("%s: sample %+v, want stage %s latency %d ns", c.file, s, c.stage, c.latencyNs)
			}
		}
		if !found {
			t.Errorf("%s: no row of %d bytes", c.file, c.bytes)
		}
	}
}

// ib_write_lat and ib_send_lat report half a round trip, ib_read_lat a
// full one (perftest rtt_factor 2 and 1).
func TestLatencySemantics(t *testing.T) {
	cases := []struct {
		file      string
		tool      string
		rtt       int
		bytes     int64
		typical   float64 // seconds as reported
		roundTrip float64
		p99       float64 // NaN when the header has no such column
		stage     string
	}{
		{"ib_write_lat.txt", "ib_write_lat", 2, 1024, 2.02e-6, 4.04e-6, 2.31e-6, "rdma-write"},
		{"ib_read_lat.txt", "ib_read_lat", 1, 4096, 2.96e-6, 2.96e-6, 3.40e-6, "rdma-read"},
		// Pasted table: no banner, old header (to t_typical), tool from the name.
		{"ib_send_lat_pasted.txt", "ib_send_lat", 2, 32, 0.83e-6, 1.66e-6, math.NaN(), "rdma-send"},
	}
	for _, c := range cases {
		r, err := parseFile(t, c.file)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if r.Tool != c.tool || r.RTTFactor != c.rtt || r.Kind != Latency {
			t.Fatalf("%s: tool %s rtt %d kind %s", c.file, r.Tool, r.RTTFactor, r.Kind)
		}
		for i, row := range r.Rows {
			if row.Bytes != c.bytes {
				continue
			}
			if !near(row.TTypical, c.typical) || !near(r.RoundTrip(row), c.roundTrip) {
				t.Errorf("%s: typical %v rtt %v, want %v %v", c.file, row.TTypical, r.RoundTrip(row), c.typical, c.roundTrip)
			}
			if math.IsNaN(c.p99) != math.IsNaN(row.P99) || (!math.IsNaN(c.p99) && !near(row.P99, c.p99)) {
				t.Errorf("%s: p99 %v, want %v", c.file, row.P99, c.p99)
			}
			s := r.Samples()[i]
			if s.Stage != c.stage || s.Latency.Seconds() != math.Round(c.typical*1e9)/1e9 {
				t.Errorf("%s: sample %+v, want %s at %v s", c.file, s, c.stage, c.typical)
			}
		}
	}
}

// A table pasted without its closing dashes line is read, with a warning
// naming the file and the line where it ends.
func TestMissingClosingLineWarns(t *testing.T) {
	hdr := " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]"
	r, err := Parse(strings.NewReader(hdr+"\n 2 1000 1.0 2.0 1.1\n 4 1000 1.0 2.0 1.2\n"), "ib_write_lat.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rows) != 2 || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "ib_write_lat.txt:3: the table from line 1 has no closing dashes line: read 2 rows") {
		t.Errorf("rows %d, warnings %q", len(r.Rows), r.Warnings)
	}
}

func TestErrorsNameTheLine(t *testing.T) {
	d := strings.Repeat("-", 87)
	hdr := " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]"
	cases := []struct {
		name, in, want string
	}{
		{"ib_write_lat_truncated.txt", "", "ib_write_lat_truncated.txt:6:"}, // the short row
		{"ib_write_lat.txt", hdr + "\n 2 1000 1.0 2.0\n", ":2: row has 4 fields"},
		{"ib_write_lat.txt", hdr + "\n" + d + "\n", ":1: table has no rows"},
		{"ib_write_lat.txt", hdr + "\n 2 1000 1.0 x 1.1\n" + d + "\n", ":2: field 4 \"x\""},
		{"ib_write_lat.txt", " #bytes #iterations  BW peak[KB/sec]  BW average[KB/sec]\n", ":1: bandwidth column"},
		{"ib_write_lat.txt", " #bytes #iterations  weird[usec]\n", "unknown perftest column"},
		{"results.txt", hdr + "\n 2 1000 1.0 2.0 1.1\n" + d + "\n", "cannot tell which perftest tool"},
		{"ib_write_bw.txt", hdr + "\n 2 1000 1.0 2.0 1.1\n" + d + "\n", "lat header in ib_write_bw output"},
		{"empty.txt", "", "no perftest table header"},
	}
	for _, c := range cases {
		var err error
		if c.in == "" && strings.Contains(c.name, "truncated") {
			_, err = parseFile(t, c.name)
		} else {
			_, err = Parse(strings.NewReader(c.in), c.name)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: error %v, want it to contain %q", c.name, c.in, err, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, n := range []string{"ib_write_bw.txt", "ib_write_bw_gbits.txt", "ib_read_lat.txt", "ib_write_lat.txt", "ib_send_lat_pasted.txt", "ib_write_lat_truncated.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b), n)
	}
	f.Fuzz(func(t *testing.T, in, name string) {
		r, err := Parse(strings.NewReader(in), name)
		if err != nil {
			return
		}
		if len(r.Rows) == 0 || r.Tool == "" {
			t.Fatalf("accepted a result without rows or tool: %+v", r)
		}
		for _, s := range r.Samples() {
			if err := s.Validate(); err != nil {
				t.Fatalf("invalid sample from accepted input: %v", err)
			}
		}
	})
}
