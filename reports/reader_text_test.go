package reports

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
	"github.com/conspirator-sim/conspirator/sim/sweep"
)

// A run of many seeds names them all, not its first: the report's Run
// line and report.html's banner say "seeds 1-10 (means over 10 seeds)"
// for a cluster run of cluster.seeds 10, "seed 7" for a data-path run.
func TestProvenanceNamesTheSeeds(t *testing.T) {
	if got, want := SeedsText(1, 10), "seeds 1-10 (means over 10 seeds)"; got != want {
		t.Errorf("SeedsText(1, 10) = %q, want %q", got, want)
	}
	if got := SeedsText(7, 1); got != "seed 7" {
		t.Errorf("SeedsText(7, 1) = %q, want seed 7", got)
	}
	seed := int64(1)
	var r Result
	r.Seed = &seed
	r.Scenario = "paper/gpu-hours"
	r.Policies = []PolicyResult{{Name: "conspirator", Seeds: 10}}
	if p := provenance(r); !strings.Contains(p, ", seeds 1-10 (means over 10 seeds), ") || strings.Contains(p, "seed 1,") {
		t.Errorf("cluster run of 10 seeds: %q", p)
	}
	r.Policies = nil
	r.Training = &TrainingResult{Policies: []TrainingPolicy{{Name: "esa", Seeds: 3}}}
	if p := provenance(r); !strings.Contains(p, "seeds 1-3 (means over 3 seeds)") {
		t.Errorf("training run of 3 seeds: %q", p)
	}
	r.Training = nil
	r.Paths = []PathResult{{Name: "tcp"}}
	if p := provenance(r); !strings.Contains(p, ", seed 1, ") {
		t.Errorf("data-path run: %q", p)
	}
}

// report.html puts every table in a box that scrolls sideways, so that a
// wide one (a cluster run's 14 columns) never runs past the page.
func TestHTMLTablesScroll(t *testing.T) {
	dir := t.TempDir()
	md := "# R\n\n| a | b |\n|---|---:|\n| x | 1 |\n\ntext\n\n| c |\n|---|\n| y |\n"
	if err := writeHTMLWith(atomicfs.OS, dir, md, "t", "p"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if n := strings.Count(page, `<div class="table"><table>`); n != 2 || strings.Count(page, "</table></div>") != 2 {
		t.Errorf("%d tables in a scrolling box, want 2:\n%s", n, page)
	}
	if !strings.Contains(page, ".table{overflow-x:auto") {
		t.Errorf("no overflow-x:auto for the tables' box:\n%s", page)
	}
}

// The training headline names the best policy and the baseline, and
// esa beside it (hand-derived from paper/ina's sweep at 700 slots:
// static 1.42x, none 1.37x, esa 1.20x over atp); the baseline is the
// best where no policy beats it; ESA's 1.35x is named only against atp.
func TestTrainingHeadlineNamesTheBest(t *testing.T) {
	ps := []Speedup{{"static", 1.418, 0.208}, {"esa", 1.198, 0.107}, {"none", 1.374, 0.191}}
	want := "best mean JCT: static, 1.42x ± 0.21 faster than atp (the baseline); esa 1.20x ± 0.11 (ESA: up to 1.35x over ATP-style sharing)"
	if got := TrainingHeadline("atp", ps); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	slow := []Speedup{{"static", 0.99, math.NaN()}, {"esa", 0.98, 0}}
	if got, want := TrainingHeadline("atp", slow), "best mean JCT: atp (the baseline), no policy faster; esa 0.98x (ESA: up to 1.35x over ATP-style sharing)"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got, want := TrainingHeadline("none", []Speedup{{"esa", 1.5, 0.1}}), "best mean JCT: esa, 1.50x ± 0.10 faster than none (the baseline)"; got != want {
		t.Errorf("against none: got\n%s\nwant\n%s", got, want)
	}
	// The run's report opens with it.
	doc := `{"training": {"baseline": "atp", "jobs": 48, "policies": [`
	for i, p := range ps {
		if i > 0 {
			doc += ","
		}
		doc += fmt.Sprintf(`{"name": %q, "seeds": 10, "vs_baseline": {"baseline": "atp", "x": %v, "ci95": %v}}`, p.Name, p.X, p.CI)
	}
	r, err := ParseResult("summary.json", []byte(doc+"]}}"))
	if err != nil {
		t.Fatal(err)
	}
	if h := headline(r); h != "B"+want[1:]+"." {
		t.Errorf("run headline %q", h)
	}
}

// trainingAgg is a training sweep over slots against atp: static best at
// 700 (1.42x, esa 1.20x), atp itself (every other slower) at 20000.
func trainingAgg(seeds []uint64) SweepAggregate {
	agg := SweepAggregate{Params: []sweep.Param{{Key: "training.ina.slots", Values: []string{"700", "20000"}}}, Seeds: seeds,
		Training: []string{"static", "atp", "esa", "none"}}
	agg.prov.baseline = "atp"
	for i, x := range [][3]float64{{1.418, 1.198, 1.374}, {0.995, 0.999, 0.95}} {
		m := map[string]sweep.Estimate{}
		for j, n := range []string{"static", "esa", "none"} {
			m["training/"+n+"/vs_baseline.x"] = sweep.Estimate{Mean: x[j], HalfWidth: 0.1, N: len(seeds)}
		}
		agg.Groups = append(agg.Groups, sweep.Group{Params: []sweep.KV{{Key: "training.ina.slots", Value: agg.Params[0].Values[i]}}, Metrics: m})
	}
	return agg
}

// A training sweep's headline names the best policy at each combination
// and the largest speedup with esa's there, before esa's range; the
// console table gives each combination's best.
func TestSweepHeadlineNamesTheBest(t *testing.T) {
	agg := trainingAgg([]uint64{1, 2, 3})
	h := SweepHeadline(agg)
	want := "best mean JCT against atp (the baseline): static at 1, atp (the baseline) at 1 of 2 combinations; the largest speedup: static 1.4 ± 0.1x (training.ina.slots=700), where esa is 1.2 ± 0.1x; esa's mean JCT speedup over the baseline: from "
	if !strings.HasPrefix(h, want) {
		t.Errorf("headline\n%s\nwant it to begin\n%s", h, want)
	}
	var b bytes.Buffer
	WriteSweepHeadline(&b, agg)
	if !strings.Contains(b.String(), "training.ina.slots=700    1.2 ± 0.1  best: static 1.4 ± 0.1x") ||
		!strings.Contains(b.String(), "best: atp 1x (the baseline)") {
		t.Errorf("console table:\n%s", b.String())
	}
}

// Where a CI rests on 2 seeds, the console says it is not meaningful: the
// sweep's headline and its table, whether the 2 are the sweep's seeds or
// each point's run's; 3 seeds say nothing.
func TestTwoSeedsCaveat(t *testing.T) {
	const caveat = "(2 seeds: CI not meaningful"
	agg := trainingAgg([]uint64{1, 2})
	var b bytes.Buffer
	WriteSweepHeadline(&b, agg)
	if n := strings.Count(b.String(), caveat); n != 2 {
		t.Errorf("2 sweep seeds: the caveat %d times, want 2 (headline and table):\n%s", n, b.String())
	}
	agg = trainingAgg([]uint64{1})
	agg.prov.runSeeds = 2
	if h := SweepHeadline(agg); !strings.Contains(h, caveat) {
		t.Errorf("each point a run of 2 seeds: %s", h)
	}
	agg = trainingAgg([]uint64{1, 2, 3})
	if h := SweepHeadline(agg); strings.Contains(h, "not meaningful") {
		t.Errorf("3 seeds: %s", h)
	}
	// A run's report says it too.
	r, err := ParseResult("summary.json", []byte(`{"policies": [{"name": "conspirator", "seeds": 2, "gpu_hours": 1,
		"vs_baseline": {"baseline": "naive-share", "pct": -6, "ci95": 20}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if h := headline(r); !strings.Contains(h, "-6.0% ± 20.0 GPU-hours against naive-share (the paper: -33% against naive sharing) "+caveat) {
		t.Errorf("run headline with 2 seeds: %s", h)
	}
}

// Zero up to rounding prints as 0, never -2.220e-14; a small real value
// keeps its digits.
func TestFmtSigZero(t *testing.T) {
	for v, want := range map[float64]string{-2.220446049250313e-14: "0", 4.4e-14: "0", 0: "0", 2.5e-5: "2.500e-05", -15.29: "-15.29"} {
		if got := fmtSig(v); got != want {
			t.Errorf("fmtSig(%v) = %q, want %q", v, got, want)
		}
	}
	if got := fmtFixed(-0.004, 2); got != "0.00" {
		t.Errorf("fmtFixed(-0.004, 2) = %q, want 0.00", got)
	}
}

// A sweep of more than 50 combinations does not list every one in
// report.md: it says where the table is and gives the headline by
// parameter; a small sweep keeps its tables.
func TestLargeSweepSummarised(t *testing.T) {
	agg := SweepAggregate{Params: []sweep.Param{{Key: "a", Values: nil}, {Key: "b", Values: []string{"x", "y"}}}, Seeds: []uint64{1},
		Derived: []string{"conspirator vs host-rdma"}}
	for i := range 30 {
		agg.Params[0].Values = append(agg.Params[0].Values, fmt.Sprint(i))
	}
	for _, a := range agg.Params[0].Values {
		for j, bv := range agg.Params[1].Values {
			// b=x: 0 up to rounding (-2.2e-14) everywhere; b=y: 10 + a.
			v := -2.220446049250313e-14
			if j == 1 {
				fmt.Sscan(a, &v)
				v += 10
			}
			agg.Groups = append(agg.Groups, sweep.Group{Params: []sweep.KV{{Key: "a", Value: a}, {Key: "b", Value: bv}},
				Metrics: map[string]sweep.Estimate{"derived/conspirator vs host-rdma/gap_pct": {Mean: v, HalfWidth: math.NaN(), N: 1}}})
		}
	}
	var md strings.Builder
	sweepSummary(&md, agg)
	s := md.String()
	for _, w := range []string{"60 parameter combinations", "`aggregate.csv` has every metric", "60 rows",
		"| b | combinations | lowest | median | highest | the paper's 15% reached |",
		"| x | 30 | 0.00 | 0.00 | 0.00 | 0 |", "| y | 30 | 10.00 | 24.50 | 39.00 | 25 |"} {
		if !strings.Contains(s, w) {
			t.Errorf("summary lacks %q:\n%s", w, s)
		}
	}
	if strings.Contains(s, "e-14") || strings.Contains(s, "-0.00") || strings.Count(s, "\n") > 80 {
		t.Errorf("summary of %d lines prints a rounding error:\n%s", strings.Count(s, "\n"), s)
	}
}

// The cost table and its figure normalise power efficiency differently
// (the table: throughput per watt, as the paper gives it; the figure:
// the host CPU at 1), and each says so: the table's header and note, the
// figure's caption.
func TestCostNormalisationsLabelled(t *testing.T) {
	src := filepath.Join("testdata", "run-datapath")
	if _, err := os.Stat(filepath.Join(src, ResultFile)); err != nil {
		t.Skipf("fixture: %v", err)
	}
	dir := copyDir(t, src)
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"| cost-effectiveness (per $, host CPU = 1) | power efficiency (throughput per W) |",
		"power efficiency is throughput per watt, not normalised",
		"both normalised to the host CPU (host = 1; the table's power efficiency is throughput per watt, not normalised"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("report.md lacks %q", w)
		}
	}
}
