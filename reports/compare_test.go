package reports

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"
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
	if _, err := gpuHours(pols); err != nil {
		t.Fatal(err)
	}
	pols[0].GPUHoursCI95, pols[1].GPUHoursCI95 = 0, 0
	if e := gpuHoursCI(pols); len(e.XYs) != 0 {
		t.Errorf("%d error bars without CIs", len(e.XYs))
	}
}
