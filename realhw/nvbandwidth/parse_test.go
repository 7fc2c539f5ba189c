package nvbandwidth

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseFixture(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "h100.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ts, err := Parse(f, "h100.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 3 {
		t.Fatalf("%d testcases, want 3", len(ts))
	}
	h2d, d2d, lat := ts[0], ts[1], ts[2]
	if h2d.Name != "host_to_device_memcpy_ce" || h2d.Unit != "GB/s" || h2d.Values[0][1] != 55.41 || h2d.Sum != 111.04 {
		t.Errorf("h2d = %+v", h2d)
	}
	if !math.IsNaN(d2d.Values[0][0]) || d2d.Values[1][0] != 390.02 || len(d2d.Rows) != 2 {
		t.Errorf("d2d = %+v (diagonal must be N/A = NaN)", d2d)
	}
	if lat.Unit != "ns" || lat.Values[0][0] != 812.40 {
		t.Errorf("latency testcase = %+v", lat)
	}
	// Samples: 512 MiB = 536870912 B at 55.63 GB/s = 9.650744e-3 s;
	// the two N/A cells and the latency matrix give none: 2 + 2 samples.
	ss, err := Samples(ts, 512<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 4 {
		t.Fatalf("%d samples, want 4", len(ss))
	}
	if ss[0].Stage != "nvbandwidth/host_to_device_memcpy_ce" || int64(ss[0].Latency) != 9650744 {
		t.Errorf("first sample %+v, want 9650744 ns", ss[0])
	}
	if _, err := Samples(ts, 0); err == nil {
		t.Error("buffer size 0 accepted")
	}
}

func TestErrors(t *testing.T) {
	b, _ := os.ReadFile(filepath.Join("testdata", "truncated.txt"))
	cases := []struct{ in, want string }{
		{string(b), "x.txt:4: matrix row has 1 values"},
		{"Running a.\nmemcpy (GB/s)\n 0\n 0 1.0\n", "x.txt:4: truncated: testcase a (line 1) has no SUM line"},
		{"Running a.\nmemcpy (GB/s)\n 0\n 0 abc\n", "x.txt:4: value 1 \"abc\""},
		{"Running a.\nRunning b.\n", "x.txt:1: testcase a has no result matrix"},
		{"Running a.\nmemcpy (GB/s)\n 0\n 0 1.0\nSUM a\n", "x.txt:5: SUM line"},
		{"hello\n", "no nvbandwidth testcase"},
	}
	for _, c := range cases {
		_, err := Parse(strings.NewReader(c.in), "x.txt")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, n := range []string{"h100.txt", "truncated.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, in string) {
		ts, err := Parse(strings.NewReader(in), "fuzz")
		if err != nil {
			return
		}
		for _, tc := range ts {
			for _, row := range tc.Values {
				if len(row) != len(tc.Columns) {
					t.Fatalf("ragged matrix accepted: %+v", tc)
				}
			}
		}
		ss, _ := Samples(ts, 1<<20)
		for _, s := range ss {
			if err := s.Validate(); err != nil {
				t.Fatalf("invalid sample: %v", err)
			}
		}
	})
}

// The buffer size comes from a pasted command line's -b (MiB) in each of
// its spellings; a command line without it, or no command line, gives
// nothing (nvbandwidth prints no size of its own).
func TestBufferFromCommand(t *testing.T) {
	for _, c := range []struct {
		text string
		want int64
		line int
	}{
		{"$ ./nvbandwidth -t host_to_device_memcpy_ce -b 256\nRunning x.\n", 256 << 20, 1},
		{"note\nuser@h:~$ /opt/nvbandwidth --bufferSize 1024 -t 0\n", 1024 << 20, 2},
		{"nvbandwidth --bufferSize=64\n", 64 << 20, 1},
		{"nvbandwidth -b128\n", 128 << 20, 1},
		{"$ ./nvbandwidth -t host_to_device_memcpy_ce\n", 0, 0},
		{"nvbandwidth Version: v0.8\nRunning host_to_device_memcpy_ce.\n", 0, 0},
		{"$ ./nvbandwidth -b lots\n", 0, 0},
	} {
		got, line, ok := BufferFromCommand([]byte(c.text))
		if got != c.want || line != c.line || ok != (c.want > 0) {
			t.Errorf("%q: %d at line %d (%v), want %d at line %d", c.text, got, line, ok, c.want, c.line)
		}
	}
}
