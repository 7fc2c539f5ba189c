package reports

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/conspirator-sim/conspirator/internal/golden"
	"github.com/conspirator-sim/conspirator/internal/shareddata"
	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim"
)

// The runs under testdata/ that the report tests render are real outputs
// of the simulator, not made-up files: this test runs the same scenarios
// and checks the stored files byte for byte (regenerate with
// `go test ./reports/ -update`). Wall-clock files (decisions.csv,
// timing.json) cannot be compared; they are rewritten only by -update.
var fixtureRuns = []struct {
	dir, scenario string
	sets          []string
}{
	// 50 requests per client keep requests.csv small (800 rows).
	{"run-datapath", "paper/e2e", []string{"datapath.clients.requests=50", "datapath.warmup_requests=20"}},
	// Needs the openb trace in ../shared (skipped without it).
	{"run-cluster", "paper/heuristic-vs-optimal", nil},
	// The FGD allocation experiment on a small generated pod and node list.
	{"run-allocation", "paper/fgd-allocation", []string{"allocation.trace=reports/testdata/alloc-input/pods.csv",
		"allocation.nodes=reports/testdata/alloc-input/nodes.csv", "allocation.seeds=3"}},
	// Training jobs on a small rack under memory pressure: 12 jobs, 2 seeds.
	{"run-training", "paper/ina", []string{"training.jobs.synthetic.jobs=12", "training.cluster.servers=8", "training.seeds=2",
		"training.jobs.synthetic.gpus=[2, 4]", "training.jobs.synthetic.max_iterations=300"}},
}

var wallClockFiles = map[string]bool{"decisions.csv": true, "timing.json": true}

func TestFixturesAreRealOutputs(t *testing.T) {
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := shareddata.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root) // the built-in cluster scenario names ../shared from there
	for _, fx := range fixtureRuns {
		t.Run(fx.dir, func(t *testing.T) {
			var sc scenarios.Scenario
			if err := scenarios.Load(fx.scenario, fx.sets, nil, &sc); err != nil {
				t.Fatal(err)
			}
			if sc.Cluster != nil {
				shareddata.Path(t, "traces", "alibaba-gpu-v2023")
			}
			out, err := sim.Run(&sc)
			if err != nil {
				t.Fatal(err)
			}
			for name, b := range out.Files {
				p := filepath.Join(here, "testdata", fx.dir, name)
				if wallClockFiles[name] {
					if *golden.Update {
						if err := os.WriteFile(p, b, 0o644); err != nil {
							t.Fatal(err)
						}
					}
					continue
				}
				if len(b) > golden.MaxInline {
					t.Fatalf("%s is %d bytes: keep fixtures small (fewer requests)", name, len(b))
				}
				golden.Check(t, p, b)
			}
		})
	}
}
