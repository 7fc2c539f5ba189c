package reports

import (
	"slices"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/sim/sweep"
)

// A sweep in which an exact policy ran gets the CDF of every other
// policy's gap over its parameter combinations; one without gets none.
// Hand-made aggregate: three windows, gaps +1%, 0% and -0.5%.
func TestSweepGapCDF(t *testing.T) {
	agg := SweepAggregate{Params: []sweep.Param{{Key: "cluster.window.skip", Values: []string{"0", "1000", "2000"}}},
		Policies: []string{"conspirator", "optimal"}}
	for i, gap := range []float64{0.01, 0, -0.005} {
		agg.Groups = append(agg.Groups, sweep.Group{Params: []sweep.KV{{Key: "cluster.window.skip", Value: agg.Params[0].Values[i]}},
			Metrics: map[string]sweep.Estimate{
				"policies/conspirator/optimality_gap": {Mean: gap, N: 1},
				"policies/optimal/optimality_gap":     {Mean: 0, N: 1},
				"policies/conspirator/gpu_hours":      {Mean: 100 * (1 + gap), N: 1},
				"policies/optimal/gpu_hours":          {Mean: 100, N: 1},
			}})
	}
	find := func(figs []*figure) *figure {
		for _, f := range figs {
			if f.name == "optimality_gap_cdf" {
				return f
			}
		}
		return nil
	}
	figs, err := sweepFigures(agg)
	if err != nil {
		t.Fatal(err)
	}
	f := find(figs)
	if f == nil || len(f.legend.names) != 1 || f.legend.names[0] != "conspirator (n=3)" {
		t.Fatalf("gap CDF %+v; want one line, conspirator over 3 combinations", f)
	}
	for i := range agg.Groups {
		delete(agg.Groups[i].Metrics, "policies/conspirator/optimality_gap")
	}
	if figs, _ := sweepFigures(agg); find(figs) != nil {
		t.Error("a gap CDF without gaps")
	}
}

// The horizon CDF draws each online policy's GPU-hours above the bound
// over the combinations the bound covers, a line per kind of bound (from
// arrival, or letting jobs wait), leaves the others out and says how
// many, and never draws the bound itself.
func TestSweepHorizonCDF(t *testing.T) {
	agg := SweepAggregate{Params: []sweep.Param{{Key: "cluster.window.skip", Values: []string{"0", "1000", "2000", "3000", "4000"}}},
		Policies: []string{"conspirator", "optimal-horizon"}}
	for i, c := range []struct{ pct, covered, fromArrival float64 }{{0.5, 1, 1}, {0, 1, 1}, {2, 0, 0}, {0.1, 1, 0}, {7, 1, 0}} {
		agg.Groups = append(agg.Groups, sweep.Group{Params: []sweep.KV{{Key: "cluster.window.skip", Value: agg.Params[0].Values[i]}},
			Metrics: map[string]sweep.Estimate{
				"policies/conspirator/vs_horizon.pct":           {Mean: c.pct, N: 1},
				"policies/conspirator/vs_horizon.covered":       {Mean: c.covered, N: 1},
				"policies/conspirator/gpu_hours":                {Mean: 100 + c.pct, N: 1},
				"policies/optimal-horizon/gpu_hours":            {Mean: 100, N: 1},
				"policies/optimal-horizon/horizon.from_arrival": {Mean: c.fromArrival, N: 1},
			}})
	}
	figs, err := sweepFigures(agg)
	if err != nil {
		t.Fatal(err)
	}
	var f *figure
	for _, g := range figs {
		if g.name == "horizon_gap_cdf" {
			f = g
		}
	}
	if f == nil || !slices.Equal(f.legend.names, []string{"conspirator, from arrival (n=2)", "conspirator, jobs may wait (n=2)"}) || !strings.Contains(f.caption, "Left out: 1") {
		t.Fatalf("horizon CDF %+v; want conspirator's 4 covered combinations, a line per kind of bound, 1 left out", f)
	}
}

// A training sweep's ratio figures name their line at 1 for what it is
// (the baseline policy; none for the speedup over none) and draw it in
// that policy's style, keep each policy's style whichever policy a
// figure lacks, and put a label on the y axis that fits it. Hand-made aggregate: two pool sizes, atp the baseline.
func TestTrainingRatioFiguresKeepStylesAndNameTheirReference(t *testing.T) {
	agg := SweepAggregate{Params: []sweep.Param{{Key: "training.ina.slots", Values: []string{"700", "2800"}}},
		Training: []string{"static", "atp", "esa", "none"}}
	agg.prov.baseline = "atp"
	for _, v := range agg.Params[0].Values {
		m := map[string]sweep.Estimate{}
		for _, p := range agg.Training {
			m["training/"+p+"/jct_s.mean"] = sweep.Estimate{Mean: 100, N: 1}
			if p != "atp" {
				m["training/"+p+"/vs_baseline.x"] = sweep.Estimate{Mean: 1.1, N: 1}
			}
			if p != "none" {
				m["training/"+p+"/vs_none.x"] = sweep.Estimate{Mean: 0.9, N: 1}
			}
		}
		agg.Groups = append(agg.Groups, sweep.Group{Params: []sweep.KV{{Key: "training.ina.slots", Value: v}}, Metrics: m})
	}
	figs, err := sweepFigures(agg)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"training_vs_baseline.x_vs_training.ina.slots": "static|esa|none|atp (the baseline)",
		"training_vs_none.x_vs_training.ina.slots":     "static|atp|esa|none (no aggregation)",
	}
	for _, f := range figs {
		w, ok := want[f.name]
		if !ok {
			continue
		}
		delete(want, f.name)
		if got := strings.Join(f.legend.names, "|"); got != w {
			t.Errorf("%s: legend %q, want %q", f.name, got, w)
		}
		if y := f.panels[0].Y.Label.Text; len(y) > 44 {
			t.Errorf("%s: y label %q runs past the axis", f.name, y)
		}
	}
	if len(want) > 0 {
		t.Errorf("figures missing: %v", want)
	}
	for _, c := range []struct {
		field, name string
		style       int
	}{{"vs_baseline.x", "atp (the baseline)", 1}, {"vs_none.x", "none (no aggregation)", 3}} {
		name, style := agg.ratioReference(metricKind{kind: "training", names: agg.Training}, metricNamed(trainingMetrics, c.field))
		if name != c.name || style != c.style {
			t.Errorf("%s: line at 1 %q in style %d, want %q in %d (the entity's own)", c.field, name, style, c.name, c.style)
		}
	}
	lines := []Line{{Name: "static"}, {Name: "esa"}, {Name: "none"}}
	if got := entityStyles(lines, agg.Training); !slices.Equal(got, []int{0, 2, 3}) {
		t.Errorf("styles %v, want each policy's place among the policies (esa 2 whichever line is missing)", got)
	}
}

// A training sweep's headline says, beside esa's best gain over the
// baseline, where esa stands against no aggregation at that point; and
// its report names the training settings, each swept one by point.
func TestTrainingSweepHeadlineAndSettings(t *testing.T) {
	agg := SweepAggregate{Params: []sweep.Param{{Key: "training.ina.slots", Values: []string{"700", "2800"}}},
		Training: []string{"atp", "esa", "none"}}
	for i, v := range agg.Params[0].Values {
		agg.Groups = append(agg.Groups, sweep.Group{Params: []sweep.KV{{Key: "training.ina.slots", Value: v}}, Metrics: map[string]sweep.Estimate{
			"training/esa/vs_baseline.x": {Mean: []float64{1.2, 1.05}[i], HalfWidth: 0.01, N: 3},
			"training/esa/vs_none.x":     {Mean: []float64{0.8, 0.95}[i], HalfWidth: 0.02, N: 3},
		}})
	}
	h := SweepHeadline(agg)
	if !strings.Contains(h, "to 1.20 ± 0.01x (training.ina.slots=700)") || !strings.Contains(h, "at the latter esa is 0.80 ± 0.02x of no in-network aggregation") {
		t.Errorf("headline %q: want esa's best over the baseline (700 slots) and esa against none there", h)
	}
	for _, fb := range []string{"ps-sharded", "ps-dedicated"} {
		agg.prov.add(Result{Training: &TrainingResult{Device: "tofino-atp", Slots: 700, Window: 2800, InFlight: 189, Fallback: fb, Hash: "crc", Use: "always", Baseline: "atp"}})
	}
	want := "device tofino-atp; pool 700 slots; window 2800; held in flight 189; fallback ps-sharded, ps-dedicated (by point); hash crc; ina.use always"
	if got := agg.prov.trainingLine(); got != want {
		t.Errorf("settings %q, want %q", got, want)
	}
}
