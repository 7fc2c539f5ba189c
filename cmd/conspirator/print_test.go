package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/reports"
	"github.com/conspirator-sim/conspirator/sim/datapath"
)

// printTable drops a column only when every row below the header leaves
// it empty, and aligns the rest under their headers.
func TestPrintTable(t *testing.T) {
	var b bytes.Buffer
	printTable(&b, [][]string{
		{"policy", "GPU-hours", "gap to optimal", "queued"},
		{"conspirator", "75.1", "", "50.0%"},
		{"first-fit", "80.2", "", "12.5%"},
	})
	want := "       policy  GPU-hours  queued\n" +
		"  conspirator       75.1   50.0%\n" +
		"    first-fit       80.2   12.5%\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	printTable(&b, [][]string{{"policy", "gap to optimal"}, {"optimal", "+0.00%"}, {"conspirator", ""}})
	if !strings.Contains(b.String(), "gap to optimal") || !strings.Contains(b.String(), "+0.00%") {
		t.Errorf("a column with one value was dropped:\n%s", b.String())
	}
}

// The single-run progress bar draws on a terminal only, counting replays.
func TestRunProgress(t *testing.T) {
	if runProgress(&bytes.Buffer{}, false) != nil {
		t.Errorf("a progress function for a non-terminal")
	}
	var b bytes.Buffer
	p := runProgress(&b, true)
	for _, d := range []float64{0.5, 1, 2.5, 4} {
		p(d, 4)
	}
	if s := b.String(); !strings.Contains(s, "run 4/4 replays") || !strings.Contains(s, "100%") || strings.Count(s, "\n") != 1 {
		t.Errorf("bar output %q; want one bar reaching 4/4 replays", s)
	}
	// A second section (training after cluster) starts a bar of its own.
	for _, d := range []float64{0.5, 2} {
		p(d, 2)
	}
	if s := b.String(); !strings.Contains(s, "run 2/2 replays") || strings.Count(s, "\n") != 2 {
		t.Errorf("bar output %q; want a second bar reaching 2/2", s)
	}
}

// sensitivity's default parameters are every numeric data-path key whose
// default is graded estimate or anecdotal: a new unsourced key either
// joins datapath's scalable list or is named, with a reason, in
// NotScaled. Where the catalog states a plausible range for the default
// parts, datapath.Range returns it as factors around 1.
func TestSensitivityCoversUnsourced(t *testing.T) {
	have := map[string]bool{}
	for _, p := range datapath.SensitivityParams() {
		have[p] = true
	}
	skip := datapath.NotScaled()
	n := 0
	for key, grade := range keyGrades() {
		p, ok := strings.CutPrefix(key, "datapath.")
		if !ok || (grade != "estimate" && grade != "anecdotal") {
			continue
		}
		n++
		if !have[p] && skip[p] == "" {
			t.Errorf("%s is graded %s but sensitivity neither varies it nor says why not", key, grade)
		}
	}
	if n < 15 {
		t.Errorf("only %d unsourced data-path keys found: the grades were not read", n)
	}
	cfg := datapath.Defaults()
	ranged := 0
	for _, p := range datapath.SensitivityParams() {
		lo, hi, key, ok := datapath.Range(cfg, p)
		if !ok {
			continue
		}
		ranged++
		if !(lo >= 0 && lo <= 1 && hi >= 1 && hi > lo) || key == "" {
			t.Errorf("%s: range x%v..x%v (%s) does not contain the default", p, lo, hi, key)
		}
	}
	if ranged < 12 {
		t.Errorf("%d parameters with a catalog range, want at least 12", ranged)
	}
	bf2 := cfg
	bf2.SmartNIC.Model = "bluefield2"
	if _, _, key, ok := datapath.Range(bf2, "smartnic.dma_bandwidth"); ok || key != "smartnic.bluefield2.dma_bandwidth" {
		t.Errorf("bluefield2's DMA rate is derived from a measurement (no range), got ok=%v from %s", ok, key)
	}
}

// A data-path run carries its sensitivity (sensitivity.csv, the printed
// top three, the report's list); --no-sensitivity skips it; a run too long
// to rerun forty times says why instead.
func TestRunSensitivity(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r")
	code, out, stderr := cli(t, nil, "run", "paper/e2e", "--set", "datapath.clients.requests=200", "-o", dir)
	if code != 0 || !strings.Contains(out, "mean latency gain moves most with: datapath.") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	rows, _, _, err := reports.ReadSensitivity(filepath.Join(dir, reports.SensitivityFile))
	if err != nil || len(rows) != len(datapath.SensitivityParams()) {
		t.Errorf("sensitivity.csv: %v, %d rows for %d parameters", err, len(rows), len(datapath.SensitivityParams()))
	}
	if md, _ := os.ReadFile(filepath.Join(dir, "report.md")); !strings.Contains(string(md), "## What the headline rests on") {
		t.Errorf("report.md has no sensitivity section")
	}
	skip := filepath.Join(t.TempDir(), "s")
	if code, out, _ := cli(t, nil, "run", "paper/e2e", "--set", "datapath.clients.requests=200", "--no-sensitivity", "-o", skip); code != 0 || strings.Contains(out, "moves most with") {
		t.Errorf("--no-sensitivity: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(skip, reports.SensitivityFile)); err == nil {
		t.Errorf("--no-sensitivity wrote sensitivity.csv")
	}
	long := filepath.Join(t.TempDir(), "l")
	if code, _, stderr := cli(t, nil, "run", "paper/e2e", "--set", "datapath.clients.requests=6000", "--set", "datapath.record_requests=false", "--no-report", "-o", long); code != 0 {
		t.Fatalf("long run: exit %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(long, reports.SensitivityNoteFile)); err != nil || !strings.Contains(string(b), "24000 requests, above the 20000") {
		t.Errorf("long run's note: %v %q", err, b)
	}
}
