package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/conspirator-sim/conspirator/workloads/trace"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/internal/shareddata"
	"github.com/conspirator-sim/conspirator/workloads"
	"github.com/conspirator-sim/conspirator/workloads/train"
)

// job builds a one-GPU trace job.
func job(id string, arrivalS, durS float64, milli int) workloads.Job {
	return workloads.Job{ID: id, Arrival: engine.Seconds(arrivalS), Duration: engine.Seconds(durS), NumGPU: 1, GPUMilli: milli}
}

// small returns a config on in-memory jobs and a homogeneous cluster.
func small(jobs []workloads.Job, model string, n int, policies ...string) Config {
	c := Defaults()
	c.Trace, c.Nodes = "", ""
	c.Jobs = jobs
	c.GPUs = []GPUGroup{{Model: model, Count: n}}
	c.Policies = policies
	c.VerifyDecisions = true
	// Hand-derived expectations are for these very jobs: no bootstrap.
	c.SeedVaries = SeedVariesCluster
	return c
}

func mustRun(t *testing.T, c Config) *Result {
	t.Helper()
	r, err := Run(c, 1, testEnv)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Closed form: with one GPU per job available and the exclusive policy,
// nobody waits, every job runs at reference speed (one GPU type), so
// GPU-hours are exactly the sum of NumGPU x duration and queueing is 0.
func TestExclusiveInfiniteGPUsSumOfDurations(t *testing.T) {
	r := engine.NewStream(7, "test/exclusive")
	var jobs []workloads.Job
	want := 0.0
	for k := range 300 {
		j := job(fmt.Sprint("j", k), 5000*r.Float64(), math.Round(r.Exp(600)+1), 1+r.IntN(1000))
		if k%10 == 0 {
			j.NumGPU, j.GPUMilli = 1+r.IntN(4), 1000
		}
		jobs = append(jobs, j)
		want += float64(j.NumGPU) * j.Duration.Seconds() / 3600
	}
	c := small(jobs, "v100", 1200, "exclusive")
	c.VerifyDecisions = false
	got := mustRun(t, c).Policies[0]
	if math.Abs(got.GPUHours-want) > 1e-9*want {
		t.Errorf("gpu_hours = %.12f, want sum of durations %.12f", got.GPUHours, want)
	}
	if got.Queue.Mean != 0 || got.Queue.P99 != 0 || got.Unscheduled != 0 || got.Migrations != 0 {
		t.Errorf("queue %+v unscheduled %v migrations %v; want all 0", got.Queue, got.Unscheduled, got.Migrations)
	}
}

// M/M/1: one non-MIG GPU, whole-GPU jobs, Poisson arrivals at rate lambda
// and exponential run times of mean 1/mu, served FIFO by exclusive. Theory:
// mean wait in queue Wq = rho/(mu - lambda); with lambda = 0.5/h, mu = 1/h,
// Wq = 1 h = 3600 s. GPU-hours = busy time, whose share of the span is rho.
func TestSingleGPUFIFOMatchesMM1(t *testing.T) {
	if testing.Short() {
		t.Skip("20k jobs")
	}
	r := engine.NewStream(11, "test/mm1")
	var jobs []workloads.Job
	at := 0.0
	for k := range 20000 {
		at += r.Exp(7200)
		jobs = append(jobs, job(fmt.Sprint("j", k), at, r.Exp(3600), 1000))
	}
	c := small(jobs, "v100", 1, "exclusive")
	c.VerifyDecisions = false
	got := mustRun(t, c).Policies[0]
	t.Logf("M/M/1: mean wait %.0f s (theory 3600 s), busy share %.4f (theory 0.5)", got.Queue.Mean, got.GPUHours*3600/at)
	if math.Abs(got.Queue.Mean-3600)/3600 > 0.10 {
		t.Errorf("mean queueing delay %.0f s; M/M/1 theory 3600 s (10%% tolerance for 20k jobs)", got.Queue.Mean)
	}
	if u := got.GPUHours * 3600 / at; math.Abs(u-0.5) > 0.03 {
		t.Errorf("busy share %.3f; want rho = 0.5", u)
	}
}

// Hand-derived MIG trace on two A100-40GB (reconfiguration 2 s, migration
// 30 s), conspirator:
//
//	t=0  A (share 0.5, 100 s): options 4g, 7g; GPU0 4g@0, created by t=2, ends 102.
//	t=1  C (0.4, 1000 s): 3g on busy GPU0 costs 3/7 < 1 for a new GPU;
//	     3g@4, created by 3, would end 1003.
//	t=2  B (0.5, 1000 s): GPU0 is full (7 slices); GPU1 4g@0, runs 4..1004.
//	t=102 A ends. GPU0 (C, 4/7 free) is emptier than GPU1: C moves to
//	     GPU1 3g@4 (e1=1 > e2 x 1 = 0.1). C ran 99 s, 901 s left; pause
//	     30 s + 2 s create: resumes 134, ends 1035.
//
// GPU-hours: GPU0 0..102 plus GPU1 2..1035 = 1135 s; 1 migration; JCTs
// 102, 1034, 1002 s.
func TestHandDerivedMIGConsolidation(t *testing.T) {
	jobs := []workloads.Job{job("A", 0, 100, 500), job("C", 1, 1000, 400), job("B", 2, 1000, 500)}
	c := small(jobs, "a100-40gb", 2, "conspirator")
	got := mustRun(t, c).Policies[0]
	if want := 1135.0 / 3600; math.Abs(got.GPUHours-want) > 1e-12 {
		t.Errorf("gpu_hours = %v (%v s), want %v (1135 s)", got.GPUHours, got.GPUHours*3600, want)
	}
	if got.Migrations != 1 {
		t.Errorf("migrations = %v, want 1", got.Migrations)
	}
	wantJCT := map[string]float64{"A": 102, "C": 1034, "B": 1002}
	for _, j := range got.Jobs {
		if math.Abs(j.JCTS-wantJCT[j.ID]) > 1e-9 {
			t.Errorf("job %s JCT %v, want %v", j.ID, j.JCTS, wantJCT[j.ID])
		}
	}
	// Fractional: GPU0 4/7 over 0..102 (A's 4g from placement), plus 3/7
	// over 1..102 (C); GPU1 4/7 over 2..1004 (B) and 3/7 over 102..1035
	// (C, held during its pause).
	frac := (4.0/7*102 + 3.0/7*101 + 4.0/7*1002 + 3.0/7*933) / 3600
	if math.Abs(got.GPUHoursFractional-frac) > 1e-12 {
		t.Errorf("gpu_hours_fractional = %v, want %v", got.GPUHoursFractional, frac)
	}
}

// The same jobs under naive-share: per-job tenants forbid co-location on
// a GPU without MIG, so each job holds a whole GPU: A on GPU0 0..100, C on
// GPU1 1..1001, B waits for GPU0 from 2 to 100 and runs 100..1100.
// GPU-hours 100 + 1000 + 1000 = 2100 s; B queues 98 s.
func TestHandDerivedNaiveSharePerJobTenants(t *testing.T) {
	jobs := []workloads.Job{job("A", 0, 100, 500), job("C", 1, 1000, 400), job("B", 2, 1000, 500)}
	c := small(jobs, "a100-40gb", 2, "naive-share")
	c.Tenants = TenantsPerJob
	got := mustRun(t, c).Policies[0]
	if want := 2100.0 / 3600; math.Abs(got.GPUHours-want) > 1e-12 {
		t.Errorf("gpu_hours = %v s, want 2100 s", got.GPUHours*3600)
	}
	if want := 98.0 / 3; math.Abs(got.Queue.Mean-want) > 1e-9 {
		t.Errorf("mean queue = %v s, want %v (0, 0, 98)", got.Queue.Mean, want)
	}
	// One tenant: naive-share packs A and C (0.5 + 0.4) on GPU0, B on GPU1.
	// Without interference: GPU0 0..1001 (C ends last), GPU1 2..1002:
	// 2001 s.
	c.Tenants = TenantsSingle
	c.TimeshareSlowdown = 0
	got = mustRun(t, c).Policies[0]
	if want := 2001.0 / 3600; math.Abs(got.GPUHours-want) > 1e-12 {
		t.Errorf("single tenant, no interference: gpu_hours = %v s, want 2001 s", got.GPUHours*3600)
	}
	// With timeshare_slowdown s: from t=1 A runs at 1 - 0.4s beside C, C
	// at 1 - 0.5s beside A. A's last 99 s of work end at 1 + 99/(1-0.4s);
	// C has then done (that - 1)(1-0.5s) and runs the rest alone at 1.
	const sl = 0.343
	c.TimeshareSlowdown = sl
	aEnd := 1 + 99/(1-0.4*sl)
	cEnd := aEnd + 1000 - (aEnd-1)*(1-0.5*sl)
	got = mustRun(t, c).Policies[0]
	if want := cEnd + 1000; math.Abs(got.GPUHours*3600-want) > 1e-6 {
		t.Errorf("single tenant, slowdown %v: gpu_hours = %v s, want %v s (GPU0 0..%.3f, GPU1 2..1002)", sl, got.GPUHours*3600, want, cEnd)
	}
	if want := ((aEnd - 0) + (cEnd - 1) + 1000) / 3; math.Abs(got.JCT.Mean-want) > 1e-6 {
		t.Errorf("single tenant, slowdown %v: mean JCT %v s, want %v", sl, got.JCT.Mean, want)
	}
}

// MIG instances are isolated: two jobs on 3g.20gb instances of one A100
// run at their own speed whatever the other does, so the interference
// setting changes nothing under conspirator (MIG) and slows naive-share.
func TestMIGIsolatedFromInterference(t *testing.T) {
	jobs := []workloads.Job{job("A", 0, 100, 400), job("B", 1, 100, 400)}
	run := func(policy string, sl float64) float64 {
		c := small(jobs, "a100-40gb", 1, policy)
		c.Tenants = TenantsSingle
		c.TimeshareSlowdown = sl
		return mustRun(t, c).Policies[0].JCT.Mean
	}
	if a, b := run("conspirator", 0), run("conspirator", 0.5); a != b {
		t.Errorf("conspirator (MIG): mean JCT %v without interference, %v with", a, b)
	}
	if a, b := run("naive-share", 0), run("naive-share", 0.5); !(b > a) {
		t.Errorf("naive-share (time-shared): mean JCT %v without interference, %v with; want slower", a, b)
	}
}

// Heterogeneity: a whole-GPU job of 100 s measured on the reference
// A100-40GB (RelSpeed 0.941 for resnet50) runs on a T4 (0.1515) at speed
// 0.1515/0.941 = 0.161, i.e. 621.0 s; first-fit takes the T4 listed
// first, conspirator the A100 (cost 1/1 against 1/0.161).
func TestHeterogeneousSpeed(t *testing.T) {
	c := small([]workloads.Job{job("x", 0, 100, 1000)}, "t4", 1, "first-fit", "conspirator")
	c.GPUs = append(c.GPUs, GPUGroup{Model: "a100-40gb", Count: 1})
	c.ReferenceGPU = "a100-40gb"
	r := mustRun(t, c)
	ff, _ := r.Policy("first-fit")
	cs, _ := r.Policy("conspirator")
	wantT4 := 100 * 0.9409843309456918 / 0.1515328859330004
	if math.Abs(ff.JCT.Mean-wantT4) > 1e-6 || ff.Jobs[0].GPUType != "t4" {
		t.Errorf("first-fit: JCT %v on %s, want %v on t4", ff.JCT.Mean, ff.Jobs[0].GPUType, wantT4)
	}
	// A100 in MIG mode: 7g.40gb created first (2 s).
	if math.Abs(cs.JCT.Mean-102) > 1e-9 || cs.Jobs[0].GPUType != "a100-40gb" {
		t.Errorf("conspirator: JCT %v on %s, want 102 on a100-40gb", cs.JCT.Mean, cs.Jobs[0].GPUType)
	}
}

// A 2-GPU gang on a cluster with one GPU never runs; a later 1-GPU job
// does.
func TestGangNeedsAllTasks(t *testing.T) {
	g := job("gang", 0, 10, 1000)
	g.NumGPU = 2
	c := small([]workloads.Job{g, job("one", 1, 10, 1000)}, "v100", 1, "first-fit", "conspirator")
	for _, p := range mustRun(t, c).Policies {
		if p.Unscheduled != 1 || math.Abs(p.GPUHours-10.0/3600) > 1e-12 {
			t.Errorf("%s: unscheduled %v gpu_hours %v s; want 1 and 10 s", p.Name, p.Unscheduled, p.GPUHours*3600)
		}
	}
}

func TestDeterministicJSON(t *testing.T) {
	r := engine.NewStream(3, "test/det")
	var jobs []workloads.Job
	for k := range 400 {
		jobs = append(jobs, job(fmt.Sprint("j", k), 20000*r.Float64(), r.Exp(900)+1, 1+r.IntN(1000)))
	}
	c := small(jobs, "a100-40gb", 30, "exclusive", "naive-share", "first-fit", "best-fit", "fgd", "conspirator")
	c.GPUs = append(c.GPUs, GPUGroup{Model: "t4", Count: 20})
	c.Synthetic.Jobs = 600
	c.VerifyDecisions = false
	var out [2][]byte
	for k := range out {
		res, err := Run(c, 42, testEnv)
		if err != nil {
			t.Fatal(err)
		}
		if out[k], err = res.JSON(); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(out[0], out[1]) {
		t.Errorf("two runs with the same seed differ:\n%s\n%s", out[0], out[1])
	}
	for _, key := range []string{`"policies"`, `"gpu_hours"`, `"gpu_hours_fractional"`, `"jct_s"`, `"queue_s"`, `"utilization"`, `"migrations"`, `"unscheduled"`, `"decision_us"`, `"optimality_gap": null`} {
		if !bytes.Contains(out[0], []byte(key)) {
			t.Errorf("JSON lacks %s", key)
		}
	}
	if bytes.Contains(out[0], []byte(`"decision_us": {
        "mean": 0,`)) == false {
		t.Errorf("decision_us must be zero in the deterministic JSON")
	}
}

func TestValidateNamesEveryKey(t *testing.T) {
	c := Defaults()
	c.Trace, c.Nodes = "", ""
	c.Window.Skip = -1
	c.GPUs = []GPUGroup{{Model: "nope", Count: 0}}
	c.Tenants = "some"
	c.MIGOptions = "all"
	c.SpeedModel = "gpt"
	c.Policies = []string{"fgd", "fgd", "nosuch"}
	c.PolicyArgs = map[string]map[string]string{"conspirator": {"e1": "2"}}
	c.MigrationTime = units.Duration(-1)
	c.MigrationCost = math.NaN()
	c.NodeFraction = 1.5
	c.Seeds = 0
	c.TimeshareSlowdown = 1
	c.Baseline = "best-fit"
	err := c.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, key := range []string{"trace:", "window.skip:", "gpus[0].count:", "gpus[0].model:", "tenants:", "mig_options:", "speed_model:", "policies[1]:", "policies[2]:", "policy_args.conspirator:", "migration_time:", "migration_cost:", "node_fraction:", "seeds:", "timeshare_slowdown:", "baseline:"} {
		if !strings.Contains(err.Error(), key) {
			t.Errorf("error lacks %q:\n%v", key, err)
		}
	}
	if err := Defaults().Validate(); err != nil {
		t.Errorf("defaults invalid: %v", err)
	}
}

func TestMissingTraceNamesFileAndSource(t *testing.T) {
	c := Defaults()
	c.Trace = filepath.Join(t.TempDir(), "openb_pod_list_default.csv")
	c.Nodes = ""
	c.GPUs = []GPUGroup{{Model: "a100-40gb", Count: 1}}
	_, err := Run(c, 1, testEnv)
	if err == nil || !strings.Contains(err.Error(), c.Trace) || !strings.Contains(err.Error(), "github.com/alibaba/clusterdata") {
		t.Errorf("error %v; want the missing path and the download location", err)
	}
}

// repoShared returns ../shared beside the repository root, or skips.
func repoShared(t testing.TB) string {
	t.Helper()
	shareddata.Path(t, "traces", "alibaba-gpu-v2023")
	return shareddata.Path(t)
}

// openb returns the paper/gpu-hours config with paths from this directory.
func openb(t testing.TB) Config {
	s := repoShared(t)
	c := Defaults()
	c.Trace = filepath.Join(s, "traces/alibaba-gpu-v2023/openb_pod_list_default.csv")
	c.Nodes = filepath.Join(s, "traces/alibaba-gpu-v2023/openb_node_list_gpu_node.csv")
	return c
}

// Rows the importer leaves out are reported (counts by reason and the
// first rows) in the result, and a trace with no usable job is an input
// error saying why, not an all-zero table. The fixture is written here:
// two GPU pods (one never scheduled) and two CPU-only pods, by hand.
func TestTraceRowsReported(t *testing.T) {
	dir := t.TempDir()
	header := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
	write := func(name, rows string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(header+rows), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	c := Defaults()
	c.Nodes = ""
	c.GPUs = []GPUGroup{{Model: "a100-40gb", Count: 2}}
	c.Trace = write("mixed.csv", "p0,1000,1024,1,1000,,LS,Running,0,100,0\n"+
		"p1,1000,1024,0,0,,LS,Running,10,100,10\n"+
		"p2,1000,1024,1,500,,LS,Pending,20,100,\n"+
		"p3,1000,1024,0,0,,LS,Running,30,100,30\n")
	// With cpu_pods (the default) the CPU-only pods are used.
	r := mustRun(t, c)
	if in := r.Inputs[0]; in.Read != 4 || in.Used != 3 || in.Rejected != 1 || in.ByKind["never scheduled"] != 1 {
		t.Errorf("cpu_pods: report %+v, want 4 read, 3 used, 1 left out (never scheduled)", in)
	}
	if p := r.Policies[0].CPUPods; p == nil || p.Pods != 2 || p.QueuedPct != 0 || p.Unplaced != 0 {
		t.Errorf("cpu_pods: %+v, want 2 pods placed at once", p)
	}
	c.CPUPods = false
	r = mustRun(t, c)
	if len(r.Inputs) != 1 {
		t.Fatalf("inputs %+v, want one report (the trace)", r.Inputs)
	}
	in := r.Inputs[0]
	if in.Read != 4 || in.Used != 1 || in.Rejected != 3 || in.ByKind["cpu-only"] != 2 || in.ByKind["never scheduled"] != 1 {
		t.Errorf("report %+v, want 4 read, 1 used, 3 left out (2 cpu-only, 1 never scheduled)", in)
	}
	if len(in.First) != 3 || in.First[0].Row != 3 || in.First[1].Row != 4 || in.First[2].Row != 5 {
		t.Errorf("first rejected rows %+v, want CSV lines 3, 4, 5", in.First)
	}
	if s := in.Summary(); !strings.Contains(s, "4 rows read, 1 used, 3 left out (cpu-only 2, never scheduled 1); first: row 3") {
		t.Errorf("summary line %q", s)
	}

	c.Trace = write("cpu.csv", "p1,1000,1024,0,0,,LS,Running,10,100,10\n")
	_, err := Run(c, 1, testEnv)
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "no usable GPU job") || !strings.Contains(err.Error(), "cpu-only 1") || !strings.Contains(err.Error(), c.Trace) {
		t.Errorf("trace without a GPU job: %v, want an InputError naming the file and the reason", err)
	}
	c.Trace = write("mixed2.csv", "p0,1000,1024,1,1000,,LS,Running,0,100,0\n")
	c.Window.Skip = 1
	if _, err := Run(c, 1, testEnv); !errors.As(err, &ie) || !strings.Contains(err.Error(), "cluster.window.skip") {
		t.Errorf("window skipping every job: %v, want an InputError naming cluster.window.skip", err)
	}
}

// testEnv is what the assembly gives the model (sim.Run): the trace
// importer and the wall clock.
var testEnv = Env{Import: trace.ImportFile, Now: time.Now}

// The model takes files and the clock only from its Env: without an
// importer a trace cannot be read (the error says who must give one);
// without a clock the decisions are not timed (0), and the result is the
// same as with one, byte for byte.
func TestEnvIsTheOnlyWayOut(t *testing.T) {
	c := Defaults()
	c.Nodes = ""
	c.GPUs = []GPUGroup{{Model: "a100-40gb", Count: 2}}
	c.Trace = "pods.csv"
	if _, err := Run(c, 1, Env{}); err == nil || !strings.Contains(err.Error(), "no importer given") {
		t.Errorf("trace without an importer: %v", err)
	}
	r := engine.NewStream(3, "test/env")
	var jobs []workloads.Job
	for k := range 40 {
		jobs = append(jobs, job(fmt.Sprint("j", k), 3000*r.Float64(), math.Round(r.Exp(600)+1), 1+r.IntN(1000)))
	}
	cfg := small(jobs, "a100-40gb", 4, "conspirator")
	untimed, err := Run(cfg, 1, Env{})
	if err != nil {
		t.Fatal(err)
	}
	timed := mustRun(t, cfg)
	if untimed.Timing[0].DecisionUS.Mean != 0 || untimed.Timing[0].Decisions == 0 {
		t.Errorf("without a clock: %+v, want decisions counted and timed 0", untimed.Timing[0])
	}
	a, _ := json.Marshal(untimed.Policies)
	b, _ := json.Marshal(timed.Policies)
	if string(a) != string(b) {
		t.Error("the clock changed the simulated result")
	}
}

// The node list's row order does not change a result: with node_order
// seeded the servers are sorted by name before the seed's order is drawn,
// so a reversed copy of a node list gives byte-identical results; with
// listed, the file's order is the GPU order, and reversing it moves
// naive-share (it takes the lowest-numbered GPU), which is what seeded
// exists to prevent.
func TestNodeRowOrder(t *testing.T) {
	dir := t.TempDir()
	rows := []string{"n0,64000,262144,2,P100", "n1,64000,262144,2,T4", "n2,96000,786432,8,G2", "n3,64000,262144,4,V100M16"}
	write := func(name string, rs []string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("sn,cpu_milli,memory_mib,gpu,model\n"+strings.Join(rs, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fwd := write("fwd.csv", rows)
	rev := slices.Clone(rows)
	slices.Reverse(rev)
	bwd := write("bwd.csv", rev)
	var jobs []workloads.Job
	r := engine.NewStream(3, "jobs")
	for k := range 40 {
		jobs = append(jobs, job(fmt.Sprint("j", k), 3000*r.Float64(), math.Round(r.Exp(600)+1), 1+r.IntN(1000)))
	}
	run := func(nodes, order string) string {
		c := small(jobs, "v100", 1, "naive-share", "conspirator")
		c.Nodes, c.GPUs, c.NodeOrder = nodes, nil, order
		res, err := Run(c, 5, testEnv)
		if err != nil {
			t.Fatal(err)
		}
		res.Inputs = nil // names the node file, which differs on purpose
		b, _ := res.JSON()
		return string(b)
	}
	if run(fwd, NodeOrderSeeded) != run(bwd, NodeOrderSeeded) {
		t.Error("seeded: reversing the node list changed the results")
	}
	if run(fwd, NodeOrderListed) == run(bwd, NodeOrderListed) {
		t.Error("listed: reversing the node list changed nothing; the test cluster does not exercise the order")
	}
}

// TestServersInReplay: servers hold gangs and share CPU and memory.
// Hand-derived, every heuristic policy, V100s at reference speed:
//   - a 5-GPU gang on servers of 4 GPUs never runs (unscheduled, no GPU
//     ever held); with gang_span it runs at once on 5 GPUs for its 100 s;
//   - one server of 4 GPUs with 2 cores (or 2 GiB) for jobs, three 1-GPU
//     jobs of 1 core (1 GiB) each arriving at 0, 1, 2 s for 100 s: the
//     third waits for the first to end at 100 s (queue 98 s, JCT 198 s);
//     GPU-hours stay 300 GPU-seconds.
func TestServersInReplay(t *testing.T) {
	policies := []string{"exclusive", "naive-share", "first-fit", "best-fit", "conspirator"}
	gang := job("gang", 0, 100, 1000)
	gang.NumGPU = 5
	// Spread as 4 + 1 over two servers, BERT-large's 1.36 GB gradient
	// (340 M values of 4 B) crosses the NICs: on one server an iteration
	// is C + T_1, T_1 = 8 alpha_nv + 8/5 S/B_nv (a ring of 5 GPUs on
	// NVLink 3, 300 GB/s, alpha_nv 2 us); spread, C + T_2, T_2 = 6 alpha_nv
	// + 6/4 S/B_nv (the server of 4's ring) + 2 alpha + S/B (a ring of two
	// servers on 12.5 GB/s NICs). The job's 100 s of work take
	// 100 (C + T_2)/(C + T_1); gang_comm.model none keeps it at 100 s.
	bert, _ := train.Lookup("bert-large")
	C, _ := bert.ComputeSeconds("v100")
	S := 340e6 * 4.0
	alpha := DefaultGangComm().NetLatency.Time().Seconds()
	T1 := 8*2e-6 + 8.0/5*S/300e9
	T2 := 6*2e-6 + 6.0/4*S/300e9 + 2*alpha + S/12.5e9
	for _, tc := range []struct {
		span  bool
		model string
		secs  float64
	}{{false, "bert-large", 0}, {true, "none", 100}, {true, "bert-large", 100 * (C + T2) / (C + T1)}} {
		c := small([]workloads.Job{gang}, "v100", 8, policies...)
		c.GPUs[0].PerServer = 4
		c.GangSpan = tc.span
		c.GangComm.Model = tc.model
		r := mustRun(t, c)
		for _, p := range r.Policies {
			wantUnsched, wantH := 1.0, 0.0
			if tc.span {
				wantUnsched, wantH = 0, 5*tc.secs/3600
			}
			if p.Unscheduled != wantUnsched || math.Abs(p.GPUHours-wantH) > 1e-9 {
				t.Errorf("gang_span %v, model %s, %s: unscheduled %v, %v GPU-hours; want %v and %v", tc.span, tc.model, p.Name, p.Unscheduled, p.GPUHours, wantUnsched, wantH)
			}
			if tc.span && tc.model != "none" && (p.Spanned == nil || p.Spanned.Jobs != 1 || math.Abs(p.Spanned.MeanSpeed-(C+T1)/(C+T2)) > 1e-12) {
				t.Errorf("%s: spanned %+v, want 1 job at speed %v", p.Name, p.Spanned, (C+T1)/(C+T2))
			}
		}
	}
	for _, res := range []string{"cpu", "memory"} {
		var jobs []workloads.Job
		for k := range 3 {
			j := job(fmt.Sprint("j", k), float64(k), 100, 1000)
			j.CPUMilli, j.MemoryMiB = 1000, 1024
			jobs = append(jobs, j)
		}
		c := small(jobs, "v100", 4, policies...)
		if res == "cpu" {
			c.GPUs[0].CPUMilli = 2000
		} else {
			c.GPUs[0].MemoryMiB = 2048
		}
		r := mustRun(t, c)
		for _, p := range r.Policies {
			last := p.Jobs[2]
			if last.QueueS != 98 || last.JCTS != 198 || math.Abs(p.GPUHours-300.0/3600) > 1e-9 {
				t.Errorf("%s-bound server, %s: third job queued %v s, JCT %v s, %v GPU-hours; want 98, 198, %v", res, p.Name, last.QueueS, last.JCTS, p.GPUHours, 300.0/3600)
			}
		}
	}
}

// TestCPUPods: CPU-only pods hold CPU and memory, placed on the least
// allocated server that fits. Hand-derived, every heuristic policy:
//   - one server of 4 V100s with 2 cores; a pod of 1.5 cores runs 0-100 s;
//     a 1-GPU job of 1 core arriving at 1 s waits for it: queue 99 s, JCT
//     99 + 50 s;
//   - two servers of 2 V100s with 4 cores each; pods of 1 core arrive at 0
//     and 1 s (100 s each): the first goes to server 0 (a tie, lowest), the
//     second to server 1 (more left); a job of 3.5 cores at 2 s fits
//     neither until the first pod ends: queue 98 s. (Packing both pods on
//     one server would have let it start at once.)
//
// Pods are not jobs: jobs.csv, JCT and GPU-hours count the GPU job only.
func TestCPUPods(t *testing.T) {
	policies := []string{"exclusive", "naive-share", "first-fit", "best-fit", "conspirator"}
	pod := func(id string, at float64, milli int) workloads.Job {
		return workloads.Job{ID: id, Arrival: engine.Seconds(at), Duration: engine.Seconds(100), CPUMilli: milli}
	}
	gj := job("g", 1, 50, 1000)
	gj.CPUMilli = 1000
	c := small([]workloads.Job{pod("p", 0, 1500), gj}, "v100", 4, policies...)
	c.GPUs[0].CPUMilli = 2000
	r := mustRun(t, c)
	for _, p := range r.Policies {
		if len(p.Jobs) != 1 || p.Jobs[0].QueueS != 99 || p.Jobs[0].JCTS != 149 || math.Abs(p.GPUHours-50.0/3600) > 1e-9 {
			t.Errorf("one server, %s: jobs %+v, %v GPU-hours; want job g queued 99 s, JCT 149 s, 50 GPU-seconds", p.Name, p.Jobs, p.GPUHours)
		}
		if p.CPUPods == nil || p.CPUPods.Pods != 1 || p.CPUPods.QueuedPct != 0 {
			t.Errorf("one server, %s: pods %+v, want 1 placed at once", p.Name, p.CPUPods)
		}
	}
	gj = job("g", 2, 50, 1000)
	gj.CPUMilli = 3500
	c = small([]workloads.Job{pod("a", 0, 1000), pod("b", 1, 1000), gj}, "v100", 4, policies...)
	c.GPUs[0].PerServer, c.GPUs[0].CPUMilli = 2, 4000
	r = mustRun(t, c)
	for _, p := range r.Policies {
		if p.Jobs[0].QueueS != 98 {
			t.Errorf("two servers, %s: job g queued %v s, want 98 (pods spread over both servers)", p.Name, p.Jobs[0].QueueS)
		}
	}
	c.Jobs = c.Jobs[2:] // without the pods
	r = mustRun(t, c)
	for _, p := range r.Policies {
		if p.Jobs[0].QueueS != 0 || p.CPUPods != nil {
			t.Errorf("without pods, %s: job g queued %v s, pods %+v; want 0 and none", p.Name, p.Jobs[0].QueueS, p.CPUPods)
		}
	}
}

// TestBadRows: a bad row of the node list or the trace is an InputError
// (exit 2) naming the file, row and column, and what would be right;
// with bad_rows: skip it is left out and reported, and the run goes on.
func TestBadRows(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	nodeHead := "sn,cpu_milli,memory_mib,gpu,model\n"
	podHead := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
	goodNodes := write("good.csv", nodeHead+"n0,96000,786432,8,G2\n")
	goodPods := write("pods.csv", podHead+"p0,1000,1024,1,1000,,LS,Running,0,100,0\n")
	for _, c := range []struct {
		name, nodes, pods string
		want              []string
	}{
		{"9 GPUs on a server", nodeHead + "n1,96000,786432,9,G2\n", "", []string{"row 2, column gpu", "9 GPUs on one server; at most 8"}},
		{"negative CPU", nodeHead + "n0,96000,786432,8,G2\nn1,-5,786432,8,G2\n", "", []string{":3:2: cpu_milli", "outside 1..", "bad_rows: skip"}},
		{"missing column", "sn,cpu_milli,memory_mib,gpu\nn1,96000,786432,8\n", "", []string{"header lacks column(s) model", "want sn,cpu_milli,memory_mib,gpu,model"}},
		{"unknown GPU model", nodeHead + "n1,96000,786432,8,H999\n", "", []string{":2:5: model", `"H999" is not one of`}},
		{"fraction above 1", "", podHead + "p0,1000,1024,1,1000,,LS,Running,0,100,0\np1,1000,1024,1,1200,,LS,Running,0,100,0\n", []string{":3:5: gpu_milli", "outside 0..1000"}},
	} {
		cfg := Defaults()
		cfg.Nodes, cfg.Trace, cfg.Policies = goodNodes, goodPods, []string{"first-fit"}
		if c.nodes != "" {
			cfg.Nodes = write("n.csv", c.nodes)
		}
		if c.pods != "" {
			cfg.Trace = write("p.csv", c.pods)
		}
		_, err := Run(cfg, 1, testEnv)
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("%s: err %v, want an InputError", c.name, err)
			continue
		}
		for _, w := range append(c.want, dir) {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", c.name, err, w)
			}
		}
		if c.name == "negative CPU" || c.name == "fraction above 1" {
			cfg.BadRows = BadRowsSkip
			r, err := Run(cfg, 1, testEnv)
			if err != nil {
				t.Errorf("%s, bad_rows skip: %v", c.name, err)
				continue
			}
			if n := r.Inputs[len(r.Inputs)-1]; c.pods == "" && (n.Used != 1 || n.Rejected != 1) {
				t.Errorf("%s, bad_rows skip: node report %+v, want 1 used, 1 left out", c.name, n)
			}
			if tr := r.Inputs[0]; c.pods != "" && (tr.Used != 1 || tr.Rejected != 1) {
				t.Errorf("%s, bad_rows skip: trace report %+v, want 1 used, 1 left out", c.name, tr)
			}
		}
	}
}

// Shared MIG instances (the optimal policy's instance_sharing, the paper's
// (c) read literally). Eight jobs of one tenant asking 6% of an A100-40GB
// arrive at 0, 1, ..., 7 s and run 100 s. Their least option, 1g.5gb,
// takes max(0.06 x 7/1, 0.06 x 8/1) = 0.48 of the instance, so two fit in
// one. An A100 holds seven 1g instances. With no reconfiguration time and
// no interference:
//
//   - one job per instance: jobs 0-6 on GPU0 (0..106 s), job 7 on GPU1
//     (7..107 s): 206 GPU-seconds;
//   - shared: job 7 joins an instance on GPU0, which is busy 0..107 s: 107.
//
// With one GPU and timeshare_slowdown s, job 7 shares with some job k
// (arrived at k) and both run at v = 1 - 0.48 s (each slowed by the
// other's share): k has 100 - (7 - k) s of work left at 7 s and ends at
// e = 7 + (93 + k)/v; job 7 has then done 93 + k and ends 7 - k s later,
// alone. Every other job takes 100 s.
func TestHandDerivedSharedInstances(t *testing.T) {
	var jobs []workloads.Job
	for k := range 8 {
		jobs = append(jobs, job(fmt.Sprint(k), float64(k), 100, 60))
	}
	run := func(gpus int, share bool, sl float64) PolicyResult {
		c := small(jobs, "a100-40gb", gpus, "optimal")
		c.Tenants = TenantsSingle
		c.MIGReconfigTime = 0
		c.TimeshareSlowdown = sl
		c.PolicyArgs = map[string]map[string]string{"optimal": {"instance_sharing": fmt.Sprint(share), "e2": "1"}}
		return mustRun(t, c).Policies[0]
	}
	if got := run(2, false, 0).GPUHours * 3600; math.Abs(got-206) > 1e-9 {
		t.Errorf("one job per instance: %v GPU-seconds, want 206", got)
	}
	if got := run(2, true, 0).GPUHours * 3600; math.Abs(got-107) > 1e-9 {
		t.Errorf("shared instances: %v GPU-seconds, want 107", got)
	}
	const sl = 0.343
	got := run(1, true, sl)
	v := 1 - 0.48*sl
	byID := map[string]float64{}
	for _, j := range got.Jobs {
		byID[j.ID] = j.JCTS
	}
	if len(byID) != 8 {
		t.Fatalf("got %d job records, want 8", len(byID))
	}
	k := -1
	for i := range 7 {
		if math.Abs(byID[fmt.Sprint(i)]-100) > 1e-9 {
			if k >= 0 {
				t.Fatalf("jobs %d and %d both slowed; only job 7's partner should be: %v", k, i, byID)
			}
			k = i
		}
	}
	if k < 0 {
		t.Fatalf("no job slowed by sharing with job 7: %v", byID)
	}
	e := 7 + (93+float64(k))/v
	if want := e - float64(k); math.Abs(byID[fmt.Sprint(k)]-want) > 1e-6 {
		t.Errorf("job %d shares with job 7: JCT %v, want %v", k, byID[fmt.Sprint(k)], want)
	}
	if want := e + 7 - float64(k) - 7; math.Abs(byID["7"]-want) > 1e-6 {
		t.Errorf("job 7: JCT %v, want %v", byID["7"], want)
	}
	if want := max(106, e+7-float64(k)); math.Abs(got.GPUHours*3600-want) > 1e-6 {
		t.Errorf("one GPU shared: %v GPU-seconds, want %v", got.GPUHours*3600, want)
	}
}

// A replay with shared instances under every rule at once: small and
// whole jobs, two-task gangs, per-job and single tenants, MIG
// reconfiguration and migrations, every decision checked
// (verify_decisions: one tenant and shares within 1 in each instance), on
// A100s beside a non-MIG V100. Every job must run, every solve be proven
// and the same seed give the same JSON twice.
func TestSharedInstancesReplay(t *testing.T) {
	r := engine.NewStream(5, "test/shared-replay")
	var jobs []workloads.Job
	for k := range 8 {
		j := job(fmt.Sprint("j", k), 30*r.Float64(), 60+r.Exp(300), []int{50, 50, 100, 250}[r.IntN(4)])
		if k%5 == 4 {
			j.NumGPU = 2
		}
		jobs = append(jobs, j)
	}
	for _, tenants := range []string{TenantsSingle, TenantsPerJob} {
		c := small(jobs, "a100-40gb", 1, "optimal")
		c.GPUs = append(c.GPUs, GPUGroup{Model: "v100", Count: 1})
		c.Tenants = tenants
		c.PolicyArgs = map[string]map[string]string{"optimal": {"instance_sharing": "true", "time_limit": "none"}}
		var out [2][]byte
		for k := range out {
			res, err := Run(c, 7, testEnv)
			if err != nil {
				t.Fatalf("tenants %s: %v", tenants, err)
			}
			p := res.Policies[0]
			if p.Unscheduled != 0 || p.Solves == nil || p.Solves.Unproven != 0 {
				t.Errorf("tenants %s: unscheduled %v, solves %+v; want every job run and every solve proven", tenants, p.Unscheduled, p.Solves)
			}
			if out[k], err = res.JSON(); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(out[0], out[1]) {
			t.Errorf("tenants %s: two runs with the same seed differ", tenants)
		}
	}
}
