//go:build heavy

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/conspirator-sim/conspirator/internal/golden"
	"github.com/conspirator-sim/conspirator/reports"
	"github.com/conspirator-sim/conspirator/sim/reproduce"
)

// TestDocsFullResults runs the full reproduction (under a minute on
// two cores) and holds docs/results.json, whose figures the docs quote,
// to it; -update rewrites docs/results.json, docs/results.md and the main
// job's figure the README shows (docs/figures/).
func TestDocsFullResults(t *testing.T) {
	root := repoRoot(t)
	t.Chdir(root)
	got, err := reproduce.Run(&reproduce.Runner{}, reproduce.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if *golden.Update {
		if got.Failed() > 0 {
			t.Fatalf("%d rows failed: not writing docs/results.json", got.Failed())
		}
		for _, r := range got.Rows {
			if r.Status != reproduce.StatusRan {
				t.Fatalf("%s %s (%s): docs/results.json is written only from a run of every row", r.Name, r.Status, r.Message)
			}
		}
		js, err := reports.ReproduceJSONBytes(got)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "docs", "results.json"), js, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "docs", "results.md"), reports.ReproduceMarkdown(got), 0o644); err != nil {
			t.Fatal(err)
		}
		figs, err := mainJobFigure()
		if err != nil {
			t.Fatal(err)
		}
		for name, b := range figs {
			p := filepath.Join(root, "docs", filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	full := byName(readReport(t, filepath.Join(root, "docs", "results.json")))
	n := compareReports(t, got, func(name string) (*reproduce.Result, string) { return full[name], "docs/results.json" })
	t.Logf("%d rows compared with docs/results.json", n)
}
