package reports

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// copyDir copies a fixture run into a temp dir so rendering does not write
// into testdata.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// Each fixture run (real simulator output, see fixtures_test.go) renders
// its figures and a report whose tables carry the summary's numbers. The
// expected rows are built from summary.json parsed here on its own and
// formatted with strconv at 4 significant digits, whole numbers from
// 10,000 (the report's documented format), not by the report code under
// test.
func TestRenderRunFixtures(t *testing.T) {
	cases := []struct {
		fixture string
		figures []string
	}{
		{"run-datapath", []string{"latency_cdf", "stage_breakdown", "cost_power"}},
		{"run-cluster", []string{"gpu_hours", "active_gpus", "jct_cdf", "decision_time"}},
		{"run-allocation", []string{"allocation"}},
		{"run-training", []string{"training_jct_cdf", "iteration_split", "occupancy"}},
	}
	g4 := func(v float64) string {
		if v >= 1e4 {
			return strconv.FormatFloat(v, 'f', 0, 64)
		}
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	for _, c := range cases {
		src := filepath.Join("testdata", c.fixture)
		if _, err := os.Stat(filepath.Join(src, ResultFile)); err != nil {
			t.Skipf("fixture %s not generated: %v", c.fixture, err)
		}
		var sum struct {
			Paths []struct {
				Name    string `json:"name"`
				Latency struct {
					Mean float64 `json:"mean"`
					P50  float64 `json:"p50"`
				} `json:"latency_us"`
			} `json:"paths"`
			Cost []struct {
				Name  string  `json:"name"`
				Price float64 `json:"price_usd"`
				Power float64 `json:"power_w"`
			} `json:"cost"`
			Allocation []struct {
				Name string `json:"name"`
				At   []struct {
					Mean float64 `json:"mean"`
				} `json:"alloc_pct"`
			} `json:"allocation"`
			Training *struct {
				Policies []struct {
					Name string `json:"name"`
					JCT  struct {
						Mean float64 `json:"mean"`
					} `json:"jct_s"`
				} `json:"policies"`
			} `json:"training"`
			Policies []struct {
				Name   string  `json:"name"`
				Hours  float64 `json:"gpu_hours"`
				Frac   float64 `json:"gpu_hours_fractional"`
				Solves *struct {
					Total, Unproven int
				} `json:"solves"`
			} `json:"policies"`
		}
		b, err := os.ReadFile(filepath.Join(src, ResultFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Fatal(err)
		}
		var tableHas []string
		for _, p := range sum.Paths {
			tableHas = append(tableHas, "| "+p.Name+" | "+g4(p.Latency.Mean)+" |")
		}
		for _, q := range sum.Cost {
			tableHas = append(tableHas, "| "+q.Name+" | "+g4(q.Price)+" | "+g4(q.Power)+" |")
		}
		for _, q := range sum.Allocation {
			tableHas = append(tableHas, fmt.Sprintf("| %s | %.2f%% ± ", q.Name, q.At[0].Mean))
		}
		for _, q := range sum.Policies {
			tableHas = append(tableHas, "| "+q.Name+" | "+g4(q.Hours)+" | "+g4(q.Frac)+" |")
			if q.Solves != nil && q.Solves.Unproven == 0 {
				tableHas = append(tableHas, q.Name+": all "+strconv.Itoa(q.Solves.Total)+" solves proven optimal.")
			}
		}
		if sum.Training != nil {
			for _, q := range sum.Training.Policies {
				tableHas = append(tableHas, "| "+q.Name+" | "+g4(q.JCT.Mean)+" |")
			}
		}
		if len(tableHas) < 2 {
			t.Fatalf("%s: summary.json has too few rows to check: %s", c.fixture, b)
		}
		dir := copyDir(t, src)
		if err := Render(dir); err != nil {
			t.Fatalf("%s: %v", c.fixture, err)
		}
		md, err := os.ReadFile(filepath.Join(dir, ReportFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range c.figures {
			for _, ext := range []string{".png", ".svg"} {
				st, err := os.Stat(filepath.Join(dir, PlotsDir, f+ext))
				if err != nil || st.Size() < 1000 {
					t.Errorf("%s: figure %s%s missing or tiny: %v", c.fixture, f, ext, err)
				}
			}
			if !strings.Contains(string(md), "](plots/"+f+".png)") {
				t.Errorf("%s: report.md does not show %s", c.fixture, f)
			}
		}
		for _, s := range tableHas {
			if !strings.Contains(string(md), s) {
				t.Errorf("%s: report.md lacks %q:\n%s", c.fixture, s, md)
			}
		}
	}
}
