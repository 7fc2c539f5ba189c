package reports

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
	"github.com/conspirator-sim/conspirator/sim/sweep"
)

// A run against itself: every difference 0, every CI test "no", inputs
// identical. Against a copy whose conspirator mean latency is moved by 10
// CI half-widths and one input changed: +diff, "yes", and the input listed.
// Against a run of another kind: its metrics are reported missing.
func TestCompare(t *testing.T) {
	src := filepath.Join("testdata", "run-datapath")
	base, err := ReadRun(src)
	if err != nil {
		t.Skipf("fixture: %v", err)
	}
	self := Compare([]Run{base, base})
	for _, r := range self.Rows {
		if !math.IsNaN(r.Diff[1]) && r.Diff[1] != 0 || r.Beyond[1] == "yes" {
			t.Errorf("%s: a run against itself differs: %v %q", r.Metric, r.Diff[1], r.Beyond[1])
		}
	}
	if len(self.Inputs) != 0 || len(self.Missing) != 0 {
		t.Errorf("a run against itself: inputs %v, missing %v", self.Inputs, self.Missing)
	}

	// The changed copy, by editing its summary.json.
	b, err := os.ReadFile(filepath.Join(src, ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var mean, ci float64
	for _, p := range doc["paths"].([]any) {
		pm := p.(map[string]any)
		if pm["name"] == "conspirator" {
			lat := pm["latency_us"].(map[string]any)
			mean, ci = lat["mean"].(float64), lat["ci95_mean"].(float64)
			lat["mean"] = mean + 10*ci
		}
	}
	doc["inputs"].(map[string]any)["seed"] = 99
	dir := t.TempDir()
	nb, _ := json.Marshal(doc)
	if err := os.WriteFile(filepath.Join(dir, ResultFile), nb, 0o644); err != nil {
		t.Fatal(err)
	}
	changed, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := Compare([]Run{base, changed})
	found := false
	for _, r := range c.Rows {
		if r.Metric == "path/conspirator/mean_latency_us" {
			found = true
			want := 100 * 10 * ci / mean
			if math.Abs(r.Diff[1]-want) > 1e-9 || r.Beyond[1] != "yes" {
				t.Errorf("moved mean: diff %v (want %v), beyond %q", r.Diff[1], want, r.Beyond[1])
			}
		}
	}
	if !found || len(c.Inputs) != 1 || c.Inputs[0].Key != "seed" || c.Inputs[0].Values[1] != "99" {
		t.Errorf("row found %v, inputs %+v", found, c.Inputs)
	}
	var out bytes.Buffer
	if err := c.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "inputs that differ:") || !strings.Contains(out.String(), "yes") {
		t.Errorf("text:\n%s", out.String())
	}

	// A run from another commit: compare says so and names both; the
	// report's provenance names the commit.
	other := changed
	other.Result.Commit = "0123456789ab+modified"
	out.Reset()
	if err := Compare([]Run{base, other}).WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "different versions or commits") || !strings.Contains(s, dir+": 0.1.0-dev 0123456789ab+modified") {
		t.Errorf("commit difference not reported:\n%s", s)
	}
	if p := provenance(other.Result); !strings.HasPrefix(p, "conspirator 0.1.0-dev (commit 0123456789ab+modified), ") {
		t.Errorf("provenance %q does not name the commit", p)
	}

	if alloc, err := ReadRun(filepath.Join("testdata", "run-allocation")); err == nil {
		mixed := Compare([]Run{base, alloc})
		if len(mixed.Missing) == 0 || !strings.Contains(strings.Join(mixed.Missing, "\n"), "allocation/fgd/alloc_pct_at_100: not in testdata/run-datapath") {
			t.Errorf("missing metrics not reported: %v", mixed.Missing)
		}
	}
}

// A multi-seed cluster run brings its CIs: GPU-hours ± gpu_hours_ci95 and
// the saving against the baseline as its own metric; one seed has none.
func TestCompareClusterSeeds(t *testing.T) {
	read := func(seeds int) Result {
		doc := `{"policies": [{"name": "naive-share", "gpu_hours": 100, "seeds": SEEDS, "gpu_hours_ci95": 5},
			{"name": "conspirator", "gpu_hours": 60, "seeds": SEEDS, "gpu_hours_ci95": 2,
			 "vs_baseline": {"baseline": "naive-share", "pct": -40, "ci95": 3, "min_pct": -45, "max_pct": -35}}]}`
		var r Result
		if err := json.Unmarshal([]byte(strings.ReplaceAll(doc, "SEEDS", string(rune('0'+seeds)))), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	m := metrics(read(9))
	if g := m["policy/conspirator/gpu_hours"]; g.Value != 60 || g.CI != 2 {
		t.Errorf("gpu_hours %+v, want 60 ± 2", g)
	}
	if v, ok := m["policy/conspirator/vs_naive-share_pct"]; !ok || v.Value != -40 || v.CI != 3 {
		t.Errorf("vs_naive-share_pct %+v (present %v), want -40 ± 3", v, ok)
	}
	if _, ok := m["policy/naive-share/vs_naive-share_pct"]; ok {
		t.Error("the baseline compared with itself")
	}
	if g := metrics(read(1))["policy/conspirator/gpu_hours"]; !math.IsNaN(g.CI) {
		t.Errorf("one seed: gpu_hours CI %v, want none", g.CI)
	}
}

// The GPU-hours figure of a multi-seed run draws each mean's CI as an
// error bar on its bar (and none for one seed).
func TestGPUHoursFigureCI(t *testing.T) {
	pols := []PolicyResult{{Name: "naive-share", GPUHours: 100, GPUHoursCI95: 5, Seeds: 10}, {Name: "conspirator", GPUHours: 60, GPUHoursCI95: 2, Seeds: 10}}
	e := gpuHoursCI(pols)
	if len(e.XYs) != 2 || e.XYs[1] != (plotter.XY{X: 1, Y: 60}) || e.YErrors[1].Low != 2 || e.YErrors[1].High != 2 {
		t.Errorf("error bars %+v %+v; want 2, the second at (1, 60) ± 2", e.XYs, e.YErrors)
	}
	if _, err := gpuHoursBars(pols); err != nil {
		t.Fatal(err)
	}
	pols[0].GPUHoursCI95, pols[1].GPUHoursCI95 = 0, 0
	if e := gpuHoursCI(pols); len(e.XYs) != 0 {
		t.Errorf("%d error bars without CIs", len(e.XYs))
	}
}

// compare -o writes the table and the overlaid figures of what at least two
// runs share: latency CDFs and stage bars for data-path runs, GPU-hours
// for cluster runs, nothing overlaid between a data-path and an
// allocation run; every figure is in report.md and inlined in report.html.
func TestWriteComparison(t *testing.T) {
	dp := filepath.Join("testdata", "run-datapath")
	cl := filepath.Join("testdata", "run-cluster")
	al := filepath.Join("testdata", "run-allocation")
	read := func(d string) Run {
		r, err := ReadRun(d)
		if err != nil {
			t.Skipf("fixture: %v", err)
		}
		return r
	}
	for _, c := range []struct {
		name string
		runs []string
		want []string
	}{
		{"datapath", []string{dp, dp}, []string{"compare_latency_cdf", "compare_stage_breakdown"}},
		{"cluster", []string{cl, cl, cl}, []string{"compare_gpu_hours"}},
		{"mixed", []string{dp, al}, nil},
	} {
		var runs []Run
		for _, d := range c.runs {
			runs = append(runs, read(d))
		}
		out := filepath.Join(t.TempDir(), "cmp")
		if err := WriteComparison(atomicfs.OS, out, Compare(runs)); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		pngs, _ := filepath.Glob(filepath.Join(out, PlotsDir, "*.png"))
		var got []string
		for _, p := range pngs {
			got = append(got, strings.TrimSuffix(filepath.Base(p), ".png"))
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: figures %v, want %v", c.name, got, c.want)
		}
		md, err := os.ReadFile(filepath.Join(out, ReportFile))
		if err != nil {
			t.Fatal(err)
		}
		page, err := os.ReadFile(filepath.Join(out, HTMLFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range c.want {
			if !strings.Contains(string(md), "](plots/"+f+".png)") || !strings.Contains(string(md), "plots/"+f+".pdf") {
				t.Errorf("%s: report.md does not show %s with its PDF", c.name, f)
			}
			for _, ext := range []string{".svg", ".pdf"} {
				if _, err := os.Stat(filepath.Join(out, PlotsDir, f+ext)); err != nil {
					t.Errorf("%s: %v", c.name, err)
				}
			}
		}
		if n := strings.Count(string(page), `src="data:image/png;base64,`); n != len(c.want) {
			t.Errorf("%s: %d figures inlined in report.html, want %d", c.name, n, len(c.want))
		}
		if !strings.Contains(string(md), "beyond CI") || !strings.Contains(string(md), "[1] `"+c.runs[1]+"`") {
			t.Errorf("%s: report.md lacks the table or the run list:\n%.800s", c.name, md)
		}
	}
}

// Two sweeps compare group by group: a sweep whose conspirator latency is
// 10 us higher at every load shows +10 us in each group, beyond the CIs
// (4.3 * 4 / sqrt(3) = 9.94 us each, so 10 us is not beyond their sum: the
// test moves it by 30 us), and the swept values and seeds are inputs.
func TestCompareSweeps(t *testing.T) {
	mk := func(name string, shift float64) string {
		dir := filepath.Join(t.TempDir(), name)
		points := sweep.Expand([]sweep.Param{{Key: "host.background_load", Values: []string{"0%", "40%"}}}, []uint64{1, 2, 3})
		run := func(ctx context.Context, p sweep.Point) (map[string][]byte, error) {
			files, err := fakeSummary(ctx, p)
			if err != nil {
				return nil, err
			}
			var doc map[string]any
			if err := json.Unmarshal(files[ResultFile], &doc); err != nil {
				return nil, err
			}
			for _, pa := range doc["paths"].([]any) {
				pm := pa.(map[string]any)
				if pm["name"] == "conspirator" {
					lat := pm["latency_us"].(map[string]any)
					lat["mean"] = lat["mean"].(float64) + shift
				}
			}
			b, err := json.Marshal(doc)
			return map[string][]byte{ResultFile: b}, err
		}
		if _, err := sweep.Run(context.Background(), points, sweep.Options{Dir: dir, Jobs: 1, Meta: map[string]string{"scenario": "fake-sweep"}}, run); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	a, b := mk("a", 0), mk("b", 30)
	ra, err := ReadRun(a)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := ReadRun(b)
	if err != nil {
		t.Fatal(err)
	}
	c := Compare([]Run{ra, rb})
	hw := 4.302653 * 4 / math.Sqrt(3)
	n := 0
	for _, r := range c.Rows {
		if !strings.HasSuffix(r.Metric, "paths/conspirator/latency_us.mean") {
			continue
		}
		n++
		if d := r.Values[1].Value - r.Values[0].Value; math.Abs(d-30) > 1e-9 || r.Beyond[1] != "yes" || math.Abs(r.Values[0].CI-hw) > 1e-4 {
			t.Errorf("%s: %v -> %v (CI %v), beyond %q; want +30 beyond CI %.4f", r.Metric, r.Values[0], r.Values[1], r.Values[0].CI, r.Beyond[1], hw)
		}
	}
	if n != 2 {
		t.Errorf("%d groups compared, want 2 (loads 0%% and 40%%)", n)
	}
	if len(c.Inputs) != 0 {
		t.Errorf("identical sweep definitions differ in %+v", c.Inputs)
	}
	if len(c.Missing) != 0 {
		t.Errorf("missing %v", c.Missing)
	}
	// Overlaid: a line per sweep against the load, in x order, the
	// second 30 µs above the first at each load, with the CI by hand;
	// written as figures that report.md shows.
	m := metricNamed(pathMetrics, "latency_us.mean")
	xAt := map[string]float64{"0%": 0, "40%": 40}
	la := sweepLine(*ra.Sweep, "paths", "conspirator", m, "host.background_load", xAt)
	lb := sweepLine(*rb.Sweep, "paths", "conspirator", m, "host.background_load", xAt)
	if !slices.Equal(la.X, []float64{0, 40}) || !slices.Equal(lb.X, la.X) {
		t.Fatalf("line x %v and %v, want [0 40] each", la.X, lb.X)
	}
	for k := range la.Y {
		if math.Abs(lb.Y[k]-la.Y[k]-30) > 1e-9 || math.Abs(la.HalfWidth[k]-hw) > 1e-4 {
			t.Errorf("at x=%g: %g vs %g (CI %g); want +30, CI %.4f", la.X[k], la.Y[k], lb.Y[k], la.HalfWidth[k], hw)
		}
	}
	out := filepath.Join(t.TempDir(), "cmp")
	if err := WriteComparison(atomicfs.OS, out, c); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(out, ReportFile))
	for _, name := range []string{"compare_latency.mean_vs_host.background_load", "compare_gap_pct_vs_host.background_load"} {
		if _, err := os.Stat(filepath.Join(out, PlotsDir, name+".png")); err != nil || !strings.Contains(string(md), name) {
			t.Errorf("figure %s: %v; in report.md: %v", name, err, strings.Contains(string(md), name))
		}
	}
	// A sweep of other values: the swept values differ, and the groups
	// only one side has cannot be compared.
	other := filepath.Join(t.TempDir(), "c")
	pts := sweep.Expand([]sweep.Param{{Key: "host.background_load", Values: []string{"0%", "80%"}}}, []uint64{1, 2, 3})
	if _, err := sweep.Run(context.Background(), pts, sweep.Options{Dir: other, Jobs: 1, Meta: map[string]string{"scenario": "fake-sweep"}}, fakeSummary); err != nil {
		t.Fatal(err)
	}
	rc, err := ReadRun(other)
	if err != nil {
		t.Fatal(err)
	}
	c = Compare([]Run{ra, rc})
	if len(c.Inputs) != 1 || c.Inputs[0].Key != "sweep.param.host.background_load" || len(c.Missing) == 0 {
		t.Errorf("inputs %+v, missing %d", c.Inputs, len(c.Missing))
	}
	// A sweep of two parameters beside one of one: no overlay, and the
	// report says what each varies.
	two := filepath.Join(t.TempDir(), "d")
	pts = sweep.Expand([]sweep.Param{{Key: "host.background_load", Values: []string{"0%", "80%"}}, {Key: "clients.rate", Values: []string{"100", "200"}}}, []uint64{1})
	if _, err := sweep.Run(context.Background(), pts, sweep.Options{Dir: two, Jobs: 1, Meta: map[string]string{"scenario": "fake-sweep"}}, fakeSummary); err != nil {
		t.Fatal(err)
	}
	rd, err := ReadRun(two)
	if err != nil {
		t.Fatal(err)
	}
	figs, note, err := compareSweepLines([]Run{ra, rd})
	if err != nil || len(figs) != 0 || !strings.Contains(note, "[0] varies `host.background_load`, [1] varies `host.background_load` and `clients.rate`") {
		t.Errorf("a one- and a two-parameter sweep: %d figures, note %q, %v", len(figs), note, err)
	}
	// Neither a run nor a sweep: the error names both files.
	if _, err := ReadRun(t.TempDir()); err == nil || !strings.Contains(err.Error(), "summary.json") || !strings.Contains(err.Error(), "sweep.json") {
		t.Errorf("empty directory: %v", err)
	}
}

// A change of a percentage is a difference in percentage points, not a
// relative change: the headline gap from 6.03% to 15.56% is +9.53 pp (not
// +158.13%), a saving from -40% to -35% +5.00 pp; a latency keeps its
// relative change (100 to 110 us: +10.00%). Sweep metrics in % too.
func TestComparePercentagePoints(t *testing.T) {
	run := func(gap, pct, lat float64) Run {
		doc := fmt.Sprintf(`{"conspirator_vs_host_rdma_gap_pct": %v,
			"paths": [{"name": "host-rdma", "latency_us": {"mean": 100}}, {"name": "conspirator", "latency_us": {"mean": %v}}],
			"policies": [{"name": "naive-share", "gpu_hours": 100, "seeds": 1},
				{"name": "conspirator", "gpu_hours": 60, "seeds": 1, "vs_baseline": {"baseline": "naive-share", "pct": %v}}]}`, gap, lat, pct)
		r, err := ParseResult("summary.json", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		return Run{Dir: fmt.Sprint(gap), Result: r}
	}
	c := Compare([]Run{run(6.03, -40, 100), run(15.56, -35, 110)})
	var out bytes.Buffer
	if err := c.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"derived/conspirator vs host-rdma/gap_pct": "+9.53 pp",
		"policy/conspirator/vs_naive-share_pct":    "+5.00 pp",
		"path/conspirator/mean_latency_us":         "+10.00%",
	}
	for _, line := range strings.Split(out.String(), "\n") {
		for k, w := range want {
			if strings.HasPrefix(line, k+" ") {
				if !strings.Contains(line, " "+w+" ") {
					t.Errorf("%s: %q, want the difference %s", k, line, w)
				}
				delete(want, k)
			}
		}
	}
	if len(want) > 0 || strings.Contains(out.String(), "158.") {
		t.Errorf("rows %v not found, or a relative change of the gap printed:\n%s", want, out.String())
	}
	for k, w := range map[string]bool{
		"[datapath.host.background_load=80%] derived/conspirator vs host-rdma/gap_pct": true,
		"[a=1] policies/conspirator/mig/vs_baseline.pct":                               true,
		"allocation/fgd/alloc_pct_at_100":                                              true,
		"[a=1] policies/conspirator/gpu_hours":                                         false,
		"[a=1] paths/tcp/soc_utilization":                                              false,
		"path/tcp/mean_latency_us":                                                     false,
	} {
		if isPercent(k) != w {
			t.Errorf("isPercent(%q) = %v, want %v", k, !w, w)
		}
	}
}
