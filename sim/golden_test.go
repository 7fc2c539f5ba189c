package sim_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/internal/golden"
	"github.com/conspirator-sim/conspirator/internal/shareddata"
	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim"
)

// goldenFiles are the outputs pinned per scenario: the summary and the
// main CSVs. timing.json and decisions.csv hold wall-clock decision times
// and are left out; plots and report.md are derived from these files
// (and checked byte-stable by the reports tests).
var goldenFiles = []string{"summary.json", "requests.csv", "jobs.csv", "active_gpus.csv", "allocation.csv", "seeds.csv"}

// Every built-in scenario, run as `conspirator run NAME` runs it from the
// repository root, gives exactly the bytes under testdata/golden/NAME/. A
// change of any result therefore shows in review as a diff of those
// files; regenerate with `go test ./sim/ -update` and say why in the
// commit. Outputs over 256 KiB are pinned by their SHA-256 (a .digest file
// with the first lines, see internal/golden). Floating-point results are
// those of amd64 (CI's machine); another architecture may differ in the
// last bits (fused multiply-add on arm64).
func TestBuiltinScenariosGolden(t *testing.T) {
	root, err := shareddata.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root) // the built-in cluster scenarios name ../shared/... from there
	names := scenarios.List()
	if len(names) < 4 {
		t.Fatalf("built-in scenarios %v, want at least the paper's four", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			var sc scenarios.Scenario
			if err := scenarios.Load(name, nil, nil, &sc); err != nil {
				t.Fatal(err)
			}
			if sc.Cluster != nil {
				shareddata.Path(t, "traces", "alibaba-gpu-v2023") // skips, naming it, where absent
				if testing.Short() && sc.Cluster.Nodes != "" {
					t.Skip("replays the whole openb trace (-short)")
				}
			}
			if sc.Allocation != nil {
				shareddata.Path(t, "traces", "alibaba-gpu-v2023")
				if testing.Short() {
					t.Skip("places about 100,000 pods (-short)")
				}
			}
			out, err := sim.Run(&sc)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(root, "sim", "testdata", "golden", strings.ReplaceAll(name, "/", "-"))
			n := 0
			for _, f := range goldenFiles {
				if b, ok := out.Files[f]; ok {
					golden.Check(t, filepath.Join(dir, f), b)
					n++
				}
			}
			if n < 1 || out.Files["summary.json"] == nil {
				t.Fatalf("scenario wrote none of %v", goldenFiles)
			}
		})
	}
}
