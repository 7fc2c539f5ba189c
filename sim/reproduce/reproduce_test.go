package reproduce

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	_ "github.com/conspirator-sim/conspirator/internal/golden" // registers -update
	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim"
)

func p(v float64) *float64 { return &v }

func TestFigureText(t *testing.T) {
	for _, c := range []struct {
		f    Figure
		want string
	}{
		{Figure{Value: 6.4512, CI95: p(0.2049), Unit: "%", Decimals: 1}, "6.5% ± 0.2"},
		{Figure{Value: -0.0004, Unit: "%", Decimals: 2}, "0.00%"}, // no "-0.00"
		{Figure{Value: 51769.6, Unit: " GPU-h", Decimals: 1}, "51,769.6 GPU-h"},
		{Figure{Value: 2531, Unit: " us", Decimals: 0}, "2531 us"}, // four digits: no separator
		{Figure{Value: 1.2551, CI95: p(math.NaN()), Unit: "x", Decimals: 3}, "1.255x"},
		{Figure{Value: -12345.678, Decimals: 1}, "-12,345.7"},
	} {
		if got := c.f.Text(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.f, got, c.want)
		}
	}
	if got := (Figure{Decimals: 2}).Tolerance(); math.Abs(got-0.01) > 1e-15 {
		t.Errorf("tolerance at 2 decimals: %g, want 0.01", got)
	}
}

func TestAgainst(t *testing.T) {
	for _, c := range []struct {
		f     Figure
		paper float64
		want  string
	}{
		{Figure{Value: 6.5, CI95: p(0.2), Decimals: 1}, 15, "not reproduced"},           // 0.43 of the published gap
		{Figure{Value: 9.0, CI95: p(0.2), Decimals: 1}, 15, "smaller"},                  // 0.6 of it
		{Figure{Value: 14.9, CI95: p(0.3), Decimals: 1}, 15, "reproduced"},              // 15 inside [14.6, 15.2]
		{Figure{Value: -6.3, CI95: p(3.9), Decimals: 1}, -33, "not reproduced"},         // 0.19 of it
		{Figure{Value: -46.3, Decimals: 1}, 17, "not reproduced"},                       // the other sign
		{Figure{Value: -40.3, CI95: p(3.2), Decimals: 1}, -33, "larger"},                // in magnitude
		{Figure{Value: 1.255, CI95: p(0.066), Unit: "x", Decimals: 3}, 1.35, "smaller"}, // 1.321 < 1.35; a gain of 0.255 is 0.73 of 0.35
		{Figure{Value: 1.18, Unit: "x", Decimals: 2}, 2.27, "not reproduced"},           // a gain of 0.18 is 0.14 of 1.27
		{Figure{Value: 1.30, CI95: p(0.06), Unit: "x", Decimals: 2}, 1.35, "reproduced"},
		{Figure{Value: 17.04, Decimals: 2}, 17, "larger"}, // no CI: half a unit of its last decimal
		{Figure{Value: 17.004, Decimals: 2}, 17, "reproduced"},
	} {
		if got := against(c.f, c.paper); got != c.want {
			t.Errorf("%v ± %v against %v: %q, want %q", c.f.Value, ciOf(c.f), c.paper, got, c.want)
		}
	}
}

func TestJudgeOrder(t *testing.T) {
	fig := func(vals map[string]float64) map[string]Figure {
		m := map[string]Figure{}
		for k, v := range vals {
			m[k] = Figure{Key: k, Value: v}
		}
		return m
	}
	// The README's seed-1 figures: in order on the median, gpudirect
	// behind conspirator on the mean.
	fs := fig(map[string]float64{"p50_gpudirect": 728, "p50_conspirator": 764, "p50_host-rdma": 835, "p50_tcp": 1039,
		"mean_gpudirect": 899, "mean_conspirator": 870, "mean_host-rdma": 926, "mean_tcp": 1106})
	ours, v, _ := judgeOrder(fs)
	if v != "holds on p50" || ours != "p50 gpudirect 728 < conspirator 764 < host-rdma 835 < tcp 1039 us; mean conspirator 870 < gpudirect 899 < host-rdma 926 < tcp 1106 us" {
		t.Errorf("judgeOrder: %q, %q", ours, v)
	}
	fs["mean_gpudirect"] = Figure{Value: 860}
	if _, v, _ := judgeOrder(fs); v != "holds" {
		t.Errorf("every order kept: %q, want holds", v)
	}
	fs["p50_host-rdma"] = Figure{Value: 700}
	if _, v, _ := judgeOrder(fs); v != "differs" {
		t.Errorf("host-rdma's median ahead: %q, want differs", v)
	}
}

// A runner whose runs are told: rows whose data is missing are skipped,
// rows that fail are marked so, and the others still run.
func TestRunSkipsAndFails(t *testing.T) {
	r := &Runner{
		Load: func(name string, sets []string) (*scenarios.Scenario, error) {
			sc := &scenarios.Scenario{Name: name}
			return sc, nil
		},
		Run: func(sc *scenarios.Scenario) (*sim.Output, error) {
			if sc.Name == "paper/cost" {
				return nil, errors.New("boom")
			}
			return &sim.Output{}, nil
		},
	}
	clock := time.Unix(0, 0)
	rep, err := Run(r, Options{Only: []string{"r4-cost", "r6-optimal"}, Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 2 || rep.Rows[0].Status != StatusFailed || !strings.Contains(rep.Rows[0].Message, "boom") {
		t.Fatalf("r4-cost: %+v", rep.Rows[0])
	}
	// paper/heuristic-vs-optimal ran but has no policies: a failure that
	// names what is missing, not a panic.
	if rep.Rows[1].Status != StatusFailed || !strings.Contains(rep.Rows[1].Message, `no policy "conspirator"`) {
		t.Errorf("r6-optimal: %+v", rep.Rows[1])
	}
	if rep.Failed() != 2 || rep.Rows[0].WallS != 1 {
		t.Errorf("failed %d, wall %v", rep.Failed(), rep.Rows[0].WallS)
	}
	if _, err := Run(r, Options{Only: []string{"r9"}}); err == nil || !strings.Contains(err.Error(), "r1-path-order") {
		t.Errorf("unknown row: %v, want the list of rows", err)
	}
}

func TestMissingDataIsSkipped(t *testing.T) {
	r := &Runner{Load: func(name string, sets []string) (*scenarios.Scenario, error) {
		var sc scenarios.Scenario
		if err := scenarios.LoadInput(name, scenarios.Input{Overrides: append(sets, "cluster.trace=/nonexistent/openb.csv")}, &sc); err != nil {
			return nil, err
		}
		return &sc, nil
	}}
	rep, err := Run(r, Options{Only: []string{"r5-gpu-hours"}, Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	row := rep.Rows[0]
	if row.Status != StatusSkipped || !strings.Contains(row.Message, "/nonexistent/openb.csv") || rep.Failed() != 0 {
		t.Errorf("a missing trace: %+v, want skipped naming the file", row)
	}
	if row.Reduced == "" {
		t.Error("a quick r5-gpu-hours says what it reduced")
	}
}

// Every row has its texts and a unique name; the commands name built-in
// scenarios.
func TestRowsComplete(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rows {
		if seen[r.Name] {
			t.Errorf("row %s twice", r.Name)
		}
		seen[r.Name] = true
		if r.Claim == "" || r.Source == "" || r.Paper == "" || r.Chapter == "" || r.run == nil || r.judge == nil {
			t.Errorf("row %s is incomplete", r.Name)
		}
		if len(r.Commands) == 0 {
			t.Errorf("row %s has no command", r.Name)
		}
		for _, c := range r.Commands {
			if !strings.HasPrefix(c, "conspirator run paper/") && !strings.HasPrefix(c, "conspirator sweep paper/") &&
				!strings.HasPrefix(c, "conspirator run llm/") && c != "conspirator llm capacity llm/capacity" {
				t.Errorf("row %s: command %q", r.Name, c)
			}
		}
	}
}

// The data-path rows run in full: same seeds, same figures, twice.
func TestDataPathRowsDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	a, err := Run(&Runner{}, Options{Only: []string{"r2-gap", "r3-gap-grows"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Run(&Runner{}, Options{Only: []string{"r3-gap-grows"}, Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	if a.Rows[1].SharedWith != "r2-gap" || b.Rows[0].SharedWith != "" {
		t.Errorf("shared runs: %q, %q", a.Rows[1].SharedWith, b.Rows[0].SharedWith)
	}
	ga, gb := a.Rows[1].Figure("gap_80"), b.Rows[0].Figure("gap_80")
	if ga == nil || gb == nil || ga.Value != gb.Value || *ga.CI95 != *gb.CI95 || ga.Seeds != DataPathSeeds {
		t.Fatalf("gap at 80%%: %+v and %+v", ga, gb)
	}
	if a.Rows[1].Verdict != "holds" {
		t.Errorf("r3 verdict %q", a.Rows[1].Verdict)
	}
}
