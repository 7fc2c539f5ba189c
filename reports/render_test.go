package reports

import (
	"os"
	"path/filepath"
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

func TestRenderRunFixtures(t *testing.T) {
	cases := []struct {
		fixture  string
		figures  []string
		tableHas []string
	}{
		{"run-datapath", []string{"latency_cdf", "stage_breakdown", "cost_power"},
			[]string{"| conspirator |", "| SmartNIC SoC | 231 | 150 | 270 | 1.17 | 1.8 |"}},
		{"run-cluster", []string{"gpu_hours", "active_gpus", "jct_cdf", "decision_time"},
			[]string{"| naive-sharing | 1206 |", "| optimal | 804 |"}},
	}
	for _, c := range cases {
		dir := copyDir(t, filepath.Join("testdata", c.fixture))
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
		for _, s := range c.tableHas {
			if !strings.Contains(string(md), s) {
				t.Errorf("%s: report.md lacks %q:\n%s", c.fixture, s, md)
			}
		}
		if os.Getenv("REPORTS_KEEP") != "" {
			t.Logf("kept %s", dir)
		}
	}
}
