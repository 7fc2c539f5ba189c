package sim_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/internal/golden"
	"github.com/conspirator-sim/conspirator/internal/shareddata"
	"github.com/conspirator-sim/conspirator/scenarios"
	// The LLM services of cluster scenarios are resolved by llmcap's
	// search, which registers itself with sim (llm/cluster-services).
	"github.com/conspirator-sim/conspirator/sim"
	_ "github.com/conspirator-sim/conspirator/sim/llmcap"
	"github.com/conspirator-sim/conspirator/sim/llmserve"
)

// goldenFiles are the outputs pinned per scenario: the summary and the
// main CSVs. timing.json and decisions.csv hold wall-clock decision times
// and are left out; plots and report.md are derived from these files
// (and checked byte-stable by the reports tests).
var goldenFiles = []string{"summary.json", "requests.csv", "jobs.csv", "active_gpus.csv", "allocation.csv", "seeds.csv", "training_jobs.csv", "occupancy.csv", "llm_requests.csv", "llm_samples.csv"}

// Every built-in scenario, run as `conspirator run NAME` runs it from the
// repository root, gives exactly the bytes under testdata/golden/NAME/. A
// change of any result therefore shows in review as a diff of those
// files; regenerate with `go test ./sim/ -update` and say why in the
// commit. Outputs over 256 KiB are pinned by their SHA-256 (a .digest file
// with the first lines, see internal/golden). Floating-point results are
// those of amd64 (CI's machine); another architecture may differ in the
// last bits (fused multiply-add on arm64).
//
// A cluster scenario of more than lightSeeds seeds (paper/gpu-hours: 10)
// runs its first lightSeeds seeds only, unless built with -tags heavy or
// run with -update: seeds are independent simulations (cluster's
// TestSeedsMerge), so their rows of seeds.csv, and jobs.csv and
// active_gpus.csv (the first seed's), must equal the pinned 10-seed
// files; the means of summary.json are checked with -tags heavy (.ci/run
// does), which keeps go test ./... within its 10-minute package limit on
// a busy 2-core machine.
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
				if n := sc.Cluster.Synthetic.Jobs; n > heavyJobs && !heavyGolden && !*golden.Update {
					t.Skipf("replays %d jobs (about 10 s alone): checked with -tags heavy, as .ci/run does", n)
				}
			}
			if sc.Allocation != nil {
				shareddata.Path(t, "traces", "alibaba-gpu-v2023")
				if testing.Short() {
					t.Skip("places about 100,000 pods (-short)")
				}
			}
			if l := sc.LLM; l != nil && l.Workload.Source == llmserve.SourceTrace {
				shareddata.Path(t, "traces", filepath.Base(filepath.Dir(l.Workload.Trace)))
				if heavyLLM[name] != "" && !heavyGolden && !*golden.Update {
					t.Skipf("%s: checked with -tags heavy, as .ci/run does", heavyLLM[name])
				}
			}
			dir := filepath.Join(root, "sim", "testdata", "golden", strings.ReplaceAll(name, "/", "-"))
			if c := sc.Cluster; c != nil && c.Seeds > lightSeeds && !heavyGolden && !*golden.Update {
				all := c.Seeds
				c.Seeds = lightSeeds
				out, err := sim.Run(&sc)
				if err != nil {
					t.Fatal(err)
				}
				checkFirstSeeds(t, dir, out.Files["seeds.csv"], sc.Seed, lightSeeds)
				for _, f := range []string{"jobs.csv", "active_gpus.csv"} {
					if b, ok := out.Files[f]; ok {
						golden.Check(t, filepath.Join(dir, f), b)
					}
				}
				t.Logf("ran seeds %d..%d of %d; summary.json's means are checked with -tags heavy", sc.Seed, sc.Seed+lightSeeds-1, all)
				return
			}
			out, err := sim.Run(&sc)
			if err != nil {
				t.Fatal(err)
			}
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

// heavyLLM are the llm scenarios that take too long for go test ./...
// on a busy 2-core machine, with why.
var heavyLLM = map[string]string{
	"llm/mooncake": "replays 12,031 prompts of 12,035 tokens on average on 8 replicas (5 to 15 s alone)",
}

// lightSeeds is how many seeds of a many-seed cluster scenario run without
// -tags heavy.
const lightSeeds = 3

// heavyJobs: a cluster scenario of more synthetic jobs (scale/1m-jobs)
// runs only with -tags heavy.
const heavyJobs = 200000

// checkFirstSeeds requires got, the seeds.csv of a run of seeds first ..
// first+n-1, to equal the header and those seeds' rows of the golden
// seeds.csv.
func checkFirstSeeds(t *testing.T, dir string, got []byte, first uint64, n int) {
	t.Helper()
	all, err := os.ReadFile(filepath.Join(dir, "seeds.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(all), "\n")
	var want bytes.Buffer
	want.WriteString(lines[0])
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		for s := range n {
			if len(f) > 1 && f[1] == fmt.Sprint(first+uint64(s)) {
				want.WriteString(l)
			}
		}
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("seeds.csv of seeds %d..%d differs from their rows of the golden file:\ngot\n%s\nwant\n%s", first, first+uint64(n)-1, got, want.Bytes())
	}
}
