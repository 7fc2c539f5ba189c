package reports

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/sim/sweep"
)

// capacityAgg is a soc-capacity-like sweep of GPUs behind one SmartNIC:
// at 1 GPU both paths are GPU-bound and unstable; at 12 host-rdma is
// stable (17,641 req/s, GPUs 92%) and conspirator unstable at its DMA
// engine (97%); the gap is nowhere defined.
func capacityAgg() SweepAggregate {
	agg := SweepAggregate{
		Params:  []sweep.Param{{Key: "datapath.gpus[0].count", Values: []string{"1", "12"}}},
		Seeds:   []uint64{1},
		Paths:   []string{"host-rdma", "conspirator"},
		Derived: []string{"conspirator vs host-rdma"},
	}
	est := func(v float64) sweep.Estimate { return sweep.Estimate{Mean: v, HalfWidth: math.NaN(), N: 1} }
	for _, c := range []struct {
		n                string
		thr, gpuU, dmaU  float64
		hostU, conspiraU float64
	}{{"1", 1595, 1, 0.087, 1, 1}, {"12", 17641, 0.92, 0.966, 0, 1}} {
		agg.Groups = append(agg.Groups, sweep.Group{
			Params: []sweep.KV{{Key: "datapath.gpus[0].count", Value: c.n}},
			Metrics: map[string]sweep.Estimate{
				"derived/conspirator vs host-rdma/gap_pct": est(math.NaN()),
				"paths/host-rdma/throughput_rps":           est(c.thr),
				"paths/host-rdma/gpu_utilization":          est(c.gpuU),
				"paths/host-rdma/unstable":                 est(c.hostU),
				"paths/conspirator/throughput_rps":         est(c.thr),
				"paths/conspirator/gpu_utilization":        est(c.gpuU),
				"paths/conspirator/dma_utilization":        est(c.dmaU),
				"paths/conspirator/unstable":               est(c.conspiraU),
			},
		})
	}
	return agg
}

// Where no combination has a gap, the headline is the capacity answer
// and the console lists each combination's throughput, busiest resource
// and stability with the one rule, never a column of "not defined".
func TestSweepHeadlineCapacity(t *testing.T) {
	agg := capacityAgg()
	h := SweepHeadline(agg)
	for _, s := range []string{
		"Capacity: host-rdma delivers at most 17641 req/s while stable (datapath.gpus[0].count=12; busiest: gpu 92.0%), unstable at 1 of 2 combinations (busiest there: gpu at 1)",
		"conspirator is stable nowhere, unstable at 2 of 2 combinations (busiest there: gpu at 1, dma at 1)",
		"Conspirator's mean end-to-end time below host-rdma's: not defined at any of the 2 combinations",
	} {
		if !strings.Contains(h, s) {
			t.Errorf("headline lacks %q:\n%s", s, h)
		}
	}
	var b bytes.Buffer
	WriteSweepHeadline(&b, agg)
	out := b.String()
	if strings.Contains(out, "not defined (an unstable path)") || !strings.Contains(out, "host-rdma 17641, gpu 92.0%  ") ||
		!strings.Contains(out, "conspirator 17641, dma 96.6%, unstable") || !strings.Contains(out, "Unstable (one rule for every path)") {
		t.Errorf("console summary:\n%s", out)
	}
}

// A defined gap: its range, where, and how many reach the paper's 15%;
// with one combination its value; the combinations without one counted.
func TestSweepHeadlineGap(t *testing.T) {
	agg := SweepAggregate{Params: []sweep.Param{{Key: "load", Values: []string{"0%", "40%", "80%"}}}, Seeds: []uint64{1}}
	for i, v := range []float64{6, 16, math.NaN()} {
		agg.Groups = append(agg.Groups, sweep.Group{
			Params:  []sweep.KV{{Key: "load", Value: agg.Params[0].Values[i]}},
			Metrics: map[string]sweep.Estimate{"derived/conspirator vs host-rdma/gap_pct": {Mean: v, HalfWidth: math.NaN(), N: 1}},
		})
	}
	want := "conspirator's mean end-to-end time below host-rdma's: from 6% (load=0%) to 16% (load=40%) over 3 combinations; the paper's 15% reached at 1 of them; not defined at 1 (a path unstable)."
	if got := SweepHeadline(agg); got != want {
		t.Errorf("headline\n%s\nwant\n%s", got, want)
	}
	agg.Groups = agg.Groups[:1]
	if got := SweepHeadline(agg); got != "conspirator's mean end-to-end time below host-rdma's: 6% (the paper: 15%)." {
		t.Errorf("one combination: %s", got)
	}
}

// A build without VCS info says so; one with names its commit.
func TestBuild(t *testing.T) {
	if got := Build("0.1.0-dev", ""); !strings.Contains(got, "commit unknown: built without VCS info") {
		t.Error(got)
	}
	if got := Build("0.1.0-dev", "0123456789ab"); got != "conspirator 0.1.0-dev (commit 0123456789ab)" {
		t.Error(got)
	}
}

// Two seeds: the figures draw the CI as bars and the report says it is
// not meaningful; the gap's figure marks no difference and the paper's
// 15%.
func TestSweepFiguresTwoSeeds(t *testing.T) {
	agg := SweepAggregate{Params: []sweep.Param{{Key: "load", Values: []string{"0%", "40%", "80%"}}}, Seeds: []uint64{1, 2}, Derived: []string{"conspirator vs host-rdma"}}
	for i, v := range []float64{6, 11, 16} {
		agg.Groups = append(agg.Groups, sweep.Group{
			Params:  []sweep.KV{{Key: "load", Value: agg.Params[0].Values[i]}},
			Metrics: map[string]sweep.Estimate{"derived/conspirator vs host-rdma/gap_pct": {Mean: v, HalfWidth: 20, N: 2}},
		})
	}
	figs, notes, err := sweepLineFigures(agg, 0)
	if err != nil || len(figs) != 1 {
		t.Fatalf("%d figures, %v", len(figs), err)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "not meaningful") {
		t.Errorf("notes %q", notes)
	}
	c := figs[0].caption
	if !strings.Contains(c, "error bars: 95% CI") || !strings.Contains(c, "not meaningful") || !strings.Contains(c, "dashed: the paper's 15%") {
		t.Errorf("caption %q", c)
	}
	if got := strings.Join(figs[0].legend.names, "|"); got != "conspirator vs host-rdma|no difference|the paper's 15%" {
		t.Errorf("legend %q", got)
	}
	agg.Seeds = []uint64{1, 2, 3}
	figs, notes, _ = sweepLineFigures(agg, 0)
	if len(notes) != 0 || !strings.Contains(figs[0].caption, "shaded bands") {
		t.Errorf("three seeds: notes %q, caption %q", notes, figs[0].caption)
	}
}

// The capacity figure: a panel per path, a line per resource it has (no
// DMA engine line for host-rdma, whose utilisation is absent), unstable
// points ringed, in the resources' order in the legend.
func TestCapacityFigures(t *testing.T) {
	figs := capacityFigures(capacityAgg())
	if len(figs) != 1 || figs[0].name != "utilisation_vs_datapath.gpus_0_.count" || len(figs[0].panels) != 2 {
		t.Fatalf("%d figures", len(figs))
	}
	if got := strings.Join(figs[0].legend.names, "|"); got != "gpu|dma|unstable" {
		t.Errorf("legend %q", got)
	}
	calm := capacityAgg()
	for _, g := range calm.Groups {
		for k := range g.Metrics {
			if strings.HasSuffix(k, "unstable") || strings.HasSuffix(k, "utilization") {
				g.Metrics[k] = sweep.Estimate{Mean: 0.5, N: 1}
			}
		}
		g.Metrics["paths/host-rdma/unstable"] = sweep.Estimate{}
		g.Metrics["paths/conspirator/unstable"] = sweep.Estimate{}
	}
	if figs := capacityFigures(calm); len(figs) != 0 {
		t.Errorf("no path near capacity: %d figures, want none", len(figs))
	}
}

// A sweep without data paths (a training sweep) has no headline gap: its
// report says nothing of a gap figure left out, while a data-path sweep
// whose gap is undefined everywhere says so.
func TestSweepWithoutPathsHasNoGapNote(t *testing.T) {
	agg := SweepAggregate{Params: []sweep.Param{{Key: "slots", Values: []string{"2800", "5600"}}}, Seeds: []uint64{1, 2, 3}, Training: []string{"atp"}}
	for i, v := range []float64{300, 280} {
		agg.Groups = append(agg.Groups, sweep.Group{
			Params:  []sweep.KV{{Key: "slots", Value: agg.Params[0].Values[i]}},
			Metrics: map[string]sweep.Estimate{"training/atp/jct_s.mean": {Mean: v, HalfWidth: 5, N: 3}},
		})
	}
	_, notes, err := sweepLineFigures(agg, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		if strings.Contains(n, "headline") {
			t.Errorf("training sweep notes a headline gap: %q", n)
		}
	}
	agg.Derived = []string{"conspirator vs host-rdma"} // a data-path sweep, its gap undefined everywhere
	_, notes, _ = sweepLineFigures(agg, 0)
	if !slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, "No figure of the headline") }) {
		t.Errorf("a gap undefined at every point is not said: notes %q", notes)
	}
}

// A pool policy that held no slot at some combinations is said to have
// aggregated no job there; none, and a policy that held slots, are not.
func TestNoPoolNotes(t *testing.T) {
	agg := SweepAggregate{Training: []string{"none", "atp", "esa"}}
	for i, slots := range []float64{0, 12} {
		agg.Groups = append(agg.Groups, sweep.Group{
			Params: []sweep.KV{{Key: "fallback", Value: []string{"ps-single", "ps-sharded"}[i]}},
			Metrics: map[string]sweep.Estimate{
				"training/none/mean_slots_held": {Mean: 0},
				"training/atp/mean_slots_held":  {Mean: slots},
				"training/esa/mean_slots_held":  {Mean: 30},
			},
		})
	}
	notes := noPoolNotes(agg)
	if len(notes) != 1 || !strings.Contains(notes[0], "atp aggregated no job at 1 of 2") || !strings.Contains(notes[0], "fallback=ps-single") {
		t.Errorf("notes %q, want one for atp at fallback=ps-single", notes)
	}
}

// A swept weight is labelled with the entry it weighs, from the sweep's
// inputs; other keys keep axisName.
func TestAxisLabelNamesTheWeightedEntry(t *testing.T) {
	var agg SweepAggregate
	agg.prov.inputs = map[string]string{"training.jobs.synthetic.models[2]": `"bert-large"`}
	if got, want := agg.axisLabel("training.jobs.synthetic.model_weights[2]"), "bert-large's weight (model weights[2])"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, k := range []string{"training.jobs.synthetic.model_weights[1]", "training.ina.slots", "training.jobs.synthetic.gpus[0]"} {
		if got := agg.axisLabel(k); got != axisName(k) {
			t.Errorf("%s: got %q, want axisName's %q", k, got, axisName(k))
		}
	}
}

// A training sweep against none names its baseline and marks no 1.35x;
// against atp it keeps the paper's mark.
func TestHeadlineWhatByBaseline(t *testing.T) {
	for _, c := range []struct {
		baseline string
		marked   bool
		has      string
	}{
		{"atp", true, "ESA: up to 1.35"},
		{"none", false, "speedup over none (ESA's up to 1.35x is over ATP-style sharing and not over none)"},
	} {
		what, marked := sweepProv{baseline: c.baseline}.headlineWhat("training", sweepHeadlines[2].what)
		if marked != c.marked || !strings.Contains(what, c.has) {
			t.Errorf("baseline %s: %q marked %v; want %q, marked %v", c.baseline, what, marked, c.has, c.marked)
		}
	}
}
