package reports

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
	"github.com/conspirator-sim/conspirator/internal/filetree"
	"github.com/conspirator-sim/conspirator/sim/sweep"
)

func hashTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree, err := filetree.Hashes(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func diffTrees(t *testing.T, what string, a, b map[string]string) {
	t.Helper()
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if a[k] != b[k] {
			t.Errorf("%s: %s differs (%q vs %q)", what, k, a[k], b[k])
		}
	}
}

// Rendering twice changes no byte (idempotent), and rendering a copy in
// another directory gives the same PNG and SVG bytes: gonum's vgimg/PNG and
// vgsvg encoders are deterministic for the same figure in the same build.
func TestRenderIdempotentAndByteStable(t *testing.T) {
	for _, fx := range []string{"run-datapath", "run-cluster"} {
		a := copyDir(t, filepath.Join("testdata", fx))
		b := copyDir(t, filepath.Join("testdata", fx))
		if err := Render(a); err != nil {
			t.Fatal(err)
		}
		first := hashTree(t, a)
		if err := Render(a); err != nil {
			t.Fatal(err)
		}
		diffTrees(t, fx+" re-render", first, hashTree(t, a))
		if err := Render(b); err != nil {
			t.Fatal(err)
		}
		diffTrees(t, fx+" other directory", first, hashTree(t, b))
		if len(first) < 5 {
			t.Errorf("%s: only %d files after render", fx, len(first))
		}
	}
}

// fakeSummary is a closed-form "simulation" for a sweep: mean latency
// = base + slope*load + (seed-2)*d, so across seeds 1, 2, 3 the mean is
// base + slope*load exactly, the sample standard deviation is d, and the
// 95% half-width is t(0.975, 2) * d / sqrt(3) = 4.302653 * d / 1.732051.
func fakeSummary(_ context.Context, p sweep.Point) (map[string][]byte, error) {
	load := 0.0
	fmt.Sscanf(strings.TrimSuffix(p.Params[0].Value, "%"), "%g", &load)
	type lat struct {
		Mean float64 `json:"mean"`
		P99  float64 `json:"p99"`
	}
	type path struct {
		Name    string  `json:"name"`
		Latency lat     `json:"latency_us"`
		Thr     float64 `json:"throughput_rps"`
		CPU     float64 `json:"host_cpu_us_per_request"`
	}
	noise := float64(int(p.Seed) - 2)
	r := struct {
		Scenario string `json:"scenario"`
		Paths    []path `json:"paths"`
	}{"fake-sweep", []path{
		{"host-rdma", lat{340 + 1.5*load + 4*noise, 420 + 2*load}, 2000, 80 + 0.5*load},
		{"conspirator", lat{300 + 0.5*load + 4*noise, 360 + load}, 2000, 10},
	}}
	b, err := json.Marshal(r)
	return map[string][]byte{ResultFile: b}, err
}

func TestRenderSweep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	points := sweep.Expand([]sweep.Param{{Key: "host.background_load", Values: []string{"0%", "40%", "80%"}}}, []uint64{1, 2, 3})
	// The spec names the copy an emitted sweep keeps; the title is the
	// scenario's own name, from the points.
	if _, err := sweep.Run(context.Background(), points, sweep.Options{Dir: dir, Jobs: 2, Meta: map[string]string{"scenario": "scenario.yaml"}}, fakeSummary); err != nil {
		t.Fatal(err)
	}
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	var agg SweepAggregate
	b, err := os.ReadFile(filepath.Join(dir, AggregateJSON))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &agg); err != nil {
		t.Fatal(err)
	}
	if agg.Complete != 9 || len(agg.Groups) != 3 {
		t.Fatalf("aggregate: %d complete, %d groups; want 9 and 3", agg.Complete, len(agg.Groups))
	}
	wantHW := 4.302653 * 4 / math.Sqrt(3) // d = 4 us
	for gi, load := range []float64{0, 40, 80} {
		e := agg.Groups[gi].Metrics["paths/conspirator/latency_us.mean"]
		if want := 300 + 0.5*load; math.Abs(e.Mean-want) > 1e-9 || math.Abs(e.HalfWidth-wantHW) > 1e-4 || e.N != 3 {
			t.Errorf("load %v: conspirator mean latency %+v, want %v ± %.5f (n=3)", load, e, want, wantHW)
		}
		// No spread across seeds in p99: half-width 0, not NaN.
		if e := agg.Groups[gi].Metrics["paths/host-rdma/latency_us.p99"]; e.Mean != 420+2*load || e.HalfWidth != 0 {
			t.Errorf("load %v: host-rdma p99 %+v, want %v ± 0", load, e, 420+2*load)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	// The gap at 0%, 40%, 80%: 1 - 300/340, 1 - 320/400, 1 - 340/460 (about
	// 11.8%, 20%, 26.1%, each seed's noise moving both paths alike), so
	// the paper's 15% at two of three.
	html, _ := os.ReadFile(filepath.Join(dir, HTMLFile))
	for _, s := range []string{"# Sweep report: fake-sweep\n\n**conspirator's mean end-to-end time below host-rdma's: from 11.", "over 3 combinations; the paper's 15% reached at 2 of them.**",
		"Sweep: computed by conspirator unknown (commit unknown: built without VCS info", "scenario fake-sweep; seeds 1, 2, 3;", "9 of 9 points complete", "| 40% | conspirator | 320 ± 9.937 |"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("report.md lacks %q:\n%s", s, md)
		}
	}
	for _, s := range []string{"<title>fake-sweep</title>", "<p class=\"prov\">computed by conspirator unknown (commit unknown: built without VCS info"} {
		if !strings.Contains(string(html), s) {
			t.Errorf("report.html lacks %q", s)
		}
	}
	pngs, _ := filepath.Glob(filepath.Join(dir, PlotsDir, "*_vs_host.background_load.png"))
	if len(pngs) < 4 {
		t.Errorf("%d metric-vs-load figures, want one per plotted path metric (4): %v", len(pngs), pngs)
	}
	for _, p := range pngs {
		if !strings.Contains(string(md), "](plots/"+filepath.Base(p)+")") {
			t.Errorf("report.md does not show %s", filepath.Base(p))
		}
	}
	csv, _ := os.ReadFile(filepath.Join(dir, AggregateCSV))
	if !strings.HasPrefix(string(csv), "host.background_load,kind,name,metric,mean,ci95_half_width,n\n") ||
		!strings.Contains(string(csv), "\n80%,paths,conspirator,latency_us.mean,340,") {
		t.Errorf("aggregate.csv:\n%s", csv)
	}
	// Re-render is idempotent; rendering does not touch point directories.
	before := hashTree(t, dir)
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	diffTrees(t, "sweep re-render", before, hashTree(t, dir))
	if os.Getenv("REPORTS_KEEP") != "" {
		t.Logf("kept %s", dir)
	}

	// An incomplete sweep renders what is there and says so.
	os.RemoveAll(filepath.Join(dir, "points", points[4].ID))
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	md, _ = os.ReadFile(filepath.Join(dir, ReportFile))
	if !strings.Contains(string(md), "8 of 9 points complete (**incomplete**") {
		t.Errorf("incomplete sweep report:\n%s", md)
	}
}

func TestRenderErrors(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "afile")
	os.WriteFile(file, []byte("x"), 0o644)
	blocked := copyDir(t, filepath.Join("testdata", "run-datapath"))
	os.WriteFile(filepath.Join(blocked, PlotsDir), []byte("not a dir"), 0o644)
	badJSON := t.TempDir()
	os.WriteFile(filepath.Join(badJSON, ResultFile), []byte("{\n  \"paths\": [\n    {\"name\": \"tcp\",}\n  ]\n}\n"), 0o644)
	badCSV := copyDir(t, filepath.Join("testdata", "run-datapath"))
	os.WriteFile(filepath.Join(badCSV, RequestsFile), []byte("path,id,latency_us\ntcp,0,12.5\ntcp,1,fast\n"), 0o644)
	cases := []struct {
		dir  string
		want string
	}{
		{filepath.Join(tmp, "missing"), "no such file"},
		{file, file + " is a file"},
		{filepath.Join(file, "run"), filepath.Join(file, "run")},
		{tmp, "holds neither sweep.json (a sweep) nor " + ResultFile},
		{blocked, "cannot create plot directory " + filepath.Join(blocked, PlotsDir)},
		{badJSON, filepath.Join(badJSON, ResultFile) + ":3: invalid character '}'"},
		{badCSV, filepath.Join(badCSV, RequestsFile) + `:3: column latency_us: "fast" is not a number`},
	}
	for _, c := range cases {
		err := Render(c.dir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Render(%s) = %v, want an error containing %q", c.dir, err, c.want)
		}
	}
}

func TestParseResultErrors(t *testing.T) {
	cases := []struct {
		in   string
		want string // "" means it parses
	}{
		{`{"paths":[{"name":"tcp","latency_us":{"mean":null}}]}`, ""},
		{`{"policies":[{"name":"fgd","optimality_gap":null}]}`, ""},
		{`{}`, "not a conspirator result"},
		{`{"paths":[{"name":""}]}`, "paths[0] has no name"},
		{`{"policies":[{"name":"a"},{"name":"a"}]}`, `policies[1]: name "a" appears twice`},
		{`{"paths":[{"name":"tcp","throughput_rps":"fast"}]}`, "want a number or null"},
		{"{\n\"paths\": [\n  x\n]}", "r.json:3: invalid character 'x'"},
		{"{\n\"paths\": [\n", "unexpected EOF"},
	}
	for _, c := range cases {
		r, err := ParseResult("r.json", []byte(c.in))
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.in, err)
			}
			if len(r.Paths) == 1 && !math.IsNaN(float64(r.Paths[0].LatencyUS.Mean)) {
				t.Errorf("%s: null mean read as %v, want NaN", c.in, r.Paths[0].LatencyUS.Mean)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.in, err, c.want)
		}
	}
	// NaN writes as null and reads back as NaN.
	b, _ := json.Marshal(Latency{Mean: Num(math.NaN()), P50: 3})
	if !strings.Contains(string(b), `"mean":null`) || !strings.Contains(string(b), `"p50":3`) {
		t.Errorf("Latency JSON %s", b)
	}
}

func TestParseRequests(t *testing.T) {
	in := "path,id,start_us,network_us,copy_us,latency_us,dropped\n" +
		"tcp,0,0,40,60,100,false\n" +
		"tcp,1,5,40,60,0,true\n" + // dropped: no latency
		"conspirator,2,9,40,20,60,false\n"
	q, err := parseRequests("requests.csv", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(q.Stages, ",") != "network,copy" || strings.Join(q.Paths, ",") != "tcp,conspirator" ||
		len(q.LatencyUS["tcp"]) != 1 || q.LatencyUS["conspirator"][0] != 60 {
		t.Errorf("parsed %+v", q)
	}
	for _, c := range []struct{ in, want string }{
		{"", "empty file"},
		{"id,latency_us\n1,2\n", `no "path" column`},
		{"path,latency_us,path\n", `column "path" appears twice`},
		{"path,latency_us\n,3\n", "requests.csv:2: empty path"},
		{"path,latency_us\ntcp,-1\n", "requests.csv:2: latency_us -1"},
		{"path,latency_us\ntcp,1,2\n", "wrong number of fields"},
	} {
		if _, err := parseRequests("requests.csv", strings.NewReader(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: err = %v, want %q", c.in, err, c.want)
		}
	}
}

// cdfPoints against the definition F(x) = #{samples <= x} / n.
func TestCDFPoints(t *testing.T) {
	// Samples 1, 2, 2, 3, 10: F(1) = 0.2, F(2) = 0.6, F(3) = 0.8, F(10) = 1,
	// after the starting point (min, 0) from which the first step rises.
	pts := cdfPoints([]float64{10, 2, 1, 3, 2}, 500)
	want := [][2]float64{{1, 0}, {1, 0.2}, {2, 0.6}, {2, 0.6}, {3, 0.8}, {10, 1}}
	if len(pts) != len(want) {
		t.Fatalf("%d points, want %d", len(pts), len(want))
	}
	for i, w := range want {
		if pts[i].X != w[0] || math.Abs(pts[i].Y-w[1]) > 1e-12 {
			t.Errorf("point %d = %v, want %v", i, pts[i], w)
		}
	}
	// Thinned to 5 points from 1..1001: min and max kept, monotone.
	var many []float64
	for i := 1001; i >= 1; i-- {
		many = append(many, float64(i))
	}
	th := cdfPoints(many, 5)
	if len(th) != 6 || th[0] != (plotter.XY{X: 1, Y: 0}) || th[5].X != 1001 || th[5].Y != 1 || th[3].X != 501 || th[3].Y != 501.0/1001 {
		t.Errorf("thinned CDF %v, want (1,0) then x = 1, 251, 501, 751, 1001", th)
	}
}

func TestLogTicks(t *testing.T) {
	cases := []struct {
		min, max float64
		labels   string // labelled ticks, comma-separated
		n        int    // all ticks
	}{
		// [16.8, 1.4e6]: 20..90 (8 ticks), then 100..900, 1000..9000,
		// 1e4..9e4, 1e5..9e5 (4 x 9), then 1e6 (2e6 is out): 45 ticks,
		// the powers 100..1e6 labelled, in one scheme (SI from 1000).
		{16.8, 1.4e6, "100,1k,10k,100k,1M", 8 + 4*9 + 1},
		// [2e-4, 3e-3]: 2e-4..9e-4 (8), 1e-3..3e-3 (3); one power, so
		// the 2x and 5x are labelled too.
		{2e-4, 3e-3, "2e-4,5e-4,1e-3,2e-3", 8 + 3},
		// [30, 400]: 30..90 (7) and 100..400 (4); one power in range
		// (100), so 50 and 200 are labelled too.
		{30, 400, "50,100,200", 7 + 4},
		{5, 5, "5", 1},
		{0, 10, "", 0}, // not a log range
	}
	for _, c := range cases {
		ts := logTicks{}.Ticks(c.min, c.max)
		var labels []string
		for _, tk := range ts {
			if tk.Value < c.min || tk.Value > c.max {
				t.Errorf("[%v, %v]: tick %v outside the range", c.min, c.max, tk.Value)
			}
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if strings.Join(labels, ",") != c.labels || len(ts) != c.n {
			t.Errorf("[%v, %v]: %d ticks labelled %v, want %d labelled %s", c.min, c.max, len(ts), labels, c.n, c.labels)
		}
	}
}

func TestNumericAxis(t *testing.T) {
	cases := []struct {
		in   []string
		xs   []float64
		unit string
		ok   bool
	}{
		{[]string{"0", "0.4", "0.8"}, []float64{0, 0.4, 0.8}, "", true},
		{[]string{"0%", "40%", "80%"}, []float64{0, 40, 80}, "%", true},
		{[]string{"25GB/s", "50GB/s"}, []float64{25, 50}, "GB/s", true},
		{[]string{"1us", "1ms"}, []float64{1e-06, 0.001}, "s", true}, // units differ: read in seconds (issue 32)
		{[]string{"tcp", "rdma"}, nil, "", false},
	}
	for _, c := range cases {
		xs, unit, ok := numericAxis(c.in)
		if ok != c.ok || unit != c.unit || fmt.Sprint(xs) != fmt.Sprint(c.xs) {
			t.Errorf("%v: %v %q %v, want %v %q %v", c.in, xs, unit, ok, c.xs, c.unit, c.ok)
		}
	}
}

func TestWriteJSONAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.json")
	v := map[string]any{"b": 1, "a": []int{2}}
	if err := WriteJSONAtomic(atomicfs.OS, p, v); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if string(b) != "{\n  \"a\": [\n    2\n  ],\n  \"b\": 1\n}\n" {
		t.Errorf("got %q: want sorted keys, indented, trailing newline", b)
	}
	if err := WriteJSONAtomic(atomicfs.OS, filepath.Join(p, "y.json"), v); err == nil || !strings.Contains(err.Error(), filepath.Join(p, "y.json")) {
		t.Errorf("under a file: %v, want an error naming the path", err)
	}
	if err := WriteJSONAtomic(atomicfs.OS, filepath.Join(dir, "nan.json"), math.NaN()); err == nil {
		t.Error("NaN accepted: JSON cannot hold it")
	}
	if _, err := EncodeCSV([]string{"a", "b"}, [][]string{{"1"}}); err == nil || !strings.Contains(err.Error(), "row 1 has 1 fields, header has 2") {
		t.Errorf("short row: %v", err)
	}
}

func FuzzParseResult(f *testing.F) {
	for _, fx := range []string{"run-datapath", "run-cluster"} {
		b, err := os.ReadFile(filepath.Join("testdata", fx, ResultFile))
		if err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"paths":[{"name":"tcp","latency_us":{"mean":null}}]}`))
	f.Add([]byte(`{"policies":[{"name":""}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseResult("f.json", b)
		if err == nil {
			Metrics(r) // must not panic on anything that parses
		}
	})
}

func FuzzParseRequests(f *testing.F) {
	f.Add("path,id,start_us,network_us,latency_us\ntcp,0,0,1,2\n")
	f.Add("path,latency_us,dropped\ntcp,1,true\nx,\"2\",false\n")
	f.Add("path,latency_us\n\"unterminated,1\n")
	f.Fuzz(func(t *testing.T, s string) {
		q, err := parseRequests("f.csv", strings.NewReader(s))
		if err != nil {
			return
		}
		for _, p := range q.Paths {
			if len(q.LatencyUS[p]) == 0 {
				t.Fatalf("path %q listed without samples", p)
			}
			cdfPoints(q.LatencyUS[p], 50)
		}
	})
}

// Every step of rendering a run and a sweep is failed in turn (short write
// on a full disk, failed fsync, rename, directory sync, mkdir): the error
// is reported, every output file that is visible is whole (equal to a clean
// render's), no temporary is left, and a render after the fault gives the
// clean render's tree byte for byte. A temporary left by a render killed
// midway (simulated by hand) is removed by the next render.
func TestRenderUnderFaults(t *testing.T) {
	sweepDir := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "sweep")
		points := sweep.Expand([]sweep.Param{{Key: "host.background_load", Values: []string{"0%", "80%"}}}, []uint64{1, 2})
		if _, err := sweep.Run(context.Background(), points, sweep.Options{Dir: dir, Jobs: 1, Meta: map[string]string{"scenario": "fake-sweep"}}, fakeSummary); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	for _, fx := range []string{"run-datapath", "run-cluster", "sweep"} {
		fresh := func() string {
			if fx == "sweep" {
				return sweepDir(t)
			}
			return copyDir(t, filepath.Join("testdata", fx))
		}
		ref := fresh()
		if err := Render(ref); err != nil {
			t.Fatal(err)
		}
		want := hashTree(t, ref)
		for _, f := range atomicfs.Faults {
			count := &atomicfs.Faulty{Fault: f}
			if err := RenderFS(count, fresh()); err != nil {
				t.Fatal(err)
			}
			// The first, middle and last call of each step: every
			// call is the same atomicfs code (tested call by call there);
			// here what matters is that Render stops, reports, and leaves
			// nothing half-written wherever in its sequence it fails.
			c := count.Calls()
			for _, n := range dedup(1, c/2, c) {
				if n < 1 || n > c {
					continue
				}
				dir := fresh()
				err := RenderFS(&atomicfs.Faulty{Fault: f, N: n}, dir)
				if !errors.Is(err, atomicfs.ErrInjected) {
					t.Fatalf("%s %s #%d: err = %v, want the injected fault", fx, f, n, err)
				}
				for p, h := range hashTree(t, dir) {
					if want[p] != h {
						t.Errorf("%s %s #%d: %s is visible but not the clean render's", fx, f, n, p)
					}
				}
				if tmp, _ := atomicfs.Temps(dir); len(tmp) > 0 {
					t.Errorf("%s %s #%d: temporaries left: %v", fx, f, n, tmp)
				}
				if err := Render(dir); err != nil {
					t.Fatal(err)
				}
				diffTrees(t, fmt.Sprintf("%s after %s #%d", fx, f, n), want, hashTree(t, dir))
			}
		}
		dir := fresh()
		os.WriteFile(filepath.Join(dir, "."+ReportFile+atomicfs.TmpInfix+killed+"1"), []byte("half"), 0o644)
		os.MkdirAll(filepath.Join(dir, PlotsDir), 0o755)
		os.WriteFile(filepath.Join(dir, PlotsDir, ".x.png"+atomicfs.TmpInfix+killed+"2"), []byte("half"), 0o644)
		if err := Render(dir); err != nil {
			t.Fatal(err)
		}
		diffTrees(t, fx+" over a killed render's leftovers", want, hashTree(t, dir))
	}
}

// A point whose summary.json was edited after the sweep wrote it is not
// aggregated: the report names the point and the manifest.
func TestRenderRefusesEditedPoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sweep")
	points := sweep.Expand([]sweep.Param{{Key: "host.background_load", Values: []string{"0%", "80%"}}}, []uint64{1})
	if _, err := sweep.Run(context.Background(), points, sweep.Options{Dir: dir, Jobs: 1}, fakeSummary); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(sweep.PointDir(dir, points[1]), ResultFile)
	b, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(b), "fake-sweep", "forged", 1)), 0o644)
	if err := Render(dir); err == nil || !strings.Contains(err.Error(), points[1].ID) || !strings.Contains(err.Error(), "manifest") {
		t.Errorf("render over an edited point: %v, want a refusal naming %s", err, points[1].ID)
	}
}

func dedup(xs ...int) []int {
	var out []int
	seen := map[int]bool{}
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// Table numbers as a reader wants them (values from the paper/gpu-hours
// and paper/e2e tables): no exponent for GPU-hours in the hundreds of
// thousands.
func TestFmtSig(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{233493.3, "233493"}, {54793.7, "54794"}, {1149.7, "1150"}, {14.1, "14.1"}, {0.0005, "5.000e-04"},
		{2e9, "2.000e+09"}, {-12345.6, "-12346"}, {0, "0"}, {math.NaN(), "-"}, {math.Inf(1), "inf"},
	} {
		if got := fmtSig(c.v); got != c.want {
			t.Errorf("fmtSig(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestAxisName(t *testing.T) {
	for in, want := range map[string]string{
		"datapath.host.background_load": "background load [datapath.host]",
		"seed":                          "seed",
		"cluster.window.skip":           "skip [cluster.window]",
	} {
		if got := axisName(in); got != want {
			t.Errorf("axisName(%q) = %q, want %q", in, got, want)
		}
	}
}

// The cluster report says what the CPU-only pods did, per policy, from
// summary.json's cpu_pods (the run-cluster fixture replays 5 pods, none of
// which waits); a pod that never found a server is a bold warning.
func TestReportCPUPods(t *testing.T) {
	dir := copyDir(t, filepath.Join("testdata", "run-cluster"))
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "CPU-only pods: 5 per run, placed by the simulator on the least allocated server that fits (`cluster.cpu_pods`); waited: conspirator 0.0% (mean 0 s), optimal 0.0% (mean 0 s)."; !strings.Contains(string(md), want) {
		t.Errorf("report.md lacks %q", want)
	}
	p := filepath.Join(dir, "summary.json")
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	raw = []byte(strings.Replace(string(raw), `"unplaced": 0`, `"unplaced": 2`, 1))
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	if md, _ = os.ReadFile(filepath.Join(dir, "report.md")); !strings.Contains(string(md), "**conspirator: 2 CPU-only pods never found a server.**") {
		t.Errorf("report.md does not warn of unplaced pods:\n%s", md)
	}
}

// report.html is self-contained: every figure of report.md is inlined as
// a data: URI (no src= names a file), its tables are HTML tables, and the
// provenance line names the version, scenario, seed and calibration
// profile from summary.json. Byte stability is TestRenderIdempotentAndByteStable's.
func TestReportHTML(t *testing.T) {
	for _, c := range []struct{ fx, prov string }{
		{"run-cluster", "conspirator 0.1.0-dev (commit unknown: built without VCS info), scenario paper/heuristic-vs-optimal, seed 1, no calibration profile (catalog values)"},
		{"run-datapath", "seed 1"},
	} {
		dir := copyDir(t, filepath.Join("testdata", c.fx))
		if err := Render(dir); err != nil {
			t.Fatal(err)
		}
		page, err := os.ReadFile(filepath.Join(dir, HTMLFile))
		if err != nil {
			t.Fatal(err)
		}
		md, _ := os.ReadFile(filepath.Join(dir, ReportFile))
		s := string(page)
		figs := strings.Count(string(md), "![")
		if n := strings.Count(s, `src="data:image/png;base64,`); figs == 0 || n != figs {
			t.Errorf("%s: %d inlined figures, report.md has %d", c.fx, n, figs)
		}
		if strings.Contains(s, `src="plots/`) {
			t.Errorf("%s: report.html still points at a file", c.fx)
		}
		if !strings.Contains(s, "<table>") || !strings.Contains(s, c.prov) || !strings.HasPrefix(s, "<!DOCTYPE html>") {
			t.Errorf("%s: report.html lacks a table, the provenance %q or the doctype:\n%.600s", c.fx, c.prov, s)
		}
	}
}

// Sweep captions and tables name one entry of a group: "one line per
// policy", not "policie" (seen in a cluster sweep's report).
func TestSingular(t *testing.T) {
	for in, want := range map[string]string{"paths": "path", "policies": "policy"} {
		if got := singular(in); got != want {
			t.Errorf("singular(%q) = %q, want %q", in, got, want)
		}
	}
}

// killed is the token of a killed writer's temporaries: nothing holds
// their lock, so CleanTemps removes them (see internal/atomicfs).
const killed = "killed"
