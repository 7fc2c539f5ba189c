package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/workloads"
	"github.com/conspirator-sim/conspirator/workloads/trace"
)

// Bad values of the regime keys are named by Validate, each with its key.
func TestValidateRegimes(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(*Config)
		key  string
	}{
		{"batch fraction above 1", func(c *Config) { c.BatchFraction = 1.5 }, "batch_fraction:"},
		{"batch fraction below 0", func(c *Config) { c.BatchFraction = -0.1 }, "batch_fraction:"},
		{"tenant count 0", func(c *Config) { c.Tenants = "0" }, "tenants:"},
		{"tenants not a count", func(c *Config) { c.Tenants = "many" }, "tenants:"},
		{"fast share above 1", func(c *Config) { c.FastShare = "1.2" }, "fast_share:"},
		{"fast share without a node list", func(c *Config) { c.FastShare = "0.5"; c.Nodes = ""; c.GPUs = []GPUGroup{{Model: "t4", Count: 2}} }, "fast_share:"},
		{"unknown fast model", func(c *Config) { c.FastGPUs = []string{"x9000"} }, "fast_gpus[0]:"},
		{"seed_varies", func(c *Config) { c.SeedVaries = "everything" }, "seed_varies:"},
		{"fast share without a reference GPU", func(c *Config) { c.FastShare = "0.25"; c.ReferenceGPU = "" }, "reference_gpu:"},
		{"tenant count with synthetic jobs", func(c *Config) { c.Tenants = "4"; c.Synthetic.Jobs = 100 }, "synthetic.jobs:"},
	} {
		cfg := Defaults()
		c.set(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s: error %v; want one naming %s", c.name, err, c.key)
		}
	}
	for _, ok := range []func(*Config){
		func(c *Config) { c.JobKind, c.BatchFraction = JobKindBatchFraction, 0 },
		func(c *Config) { c.JobKind, c.BatchFraction = JobKindBatchFraction, 1 },
		func(c *Config) { c.Tenants = "1" },
		func(c *Config) { c.FastShare, c.FastGPUs, c.ReferenceGPU = "0", []string{"G2"}, "G2" },
		func(c *Config) { c.SeedVaries = SeedVariesCluster },
	} {
		cfg := Defaults()
		ok(&cfg)
		if err := cfg.Validate(); err != nil {
			t.Errorf("valid config refused: %v", err)
		}
	}
}

// Ten jobs j0..j9: batch_fraction 0.3 makes exactly round(3) of them
// batch jobs, 0 none and 1 all; 3 tenants hold 4, 3 and 3 jobs, 10 one
// each, and 11 are more than the jobs (an InputError naming the key). The
// draws depend on the seed and the IDs, not on the jobs' order.
func TestDrawRegimes(t *testing.T) {
	var jobs []workloads.Job
	for k := range 10 {
		jobs = append(jobs, job(fmt.Sprint("j", k), float64(k), 10, 500))
	}
	reversed := slices.Clone(jobs)
	slices.Reverse(reversed)
	draw := func(frac float64, tenants string, src []workloads.Job, seed uint64) (*planner, error) {
		cfg := small(src, "a100-40gb", 1)
		cfg.JobKind, cfg.BatchFraction, cfg.Tenants = JobKindBatchFraction, frac, tenants
		pl := &planner{cfg: cfg}
		return pl, pl.drawRegimes(src, seed)
	}
	batch := func(pl *planner) (ids []string) {
		for k := range jobs {
			if !pl.isService(&jobs[k]) {
				ids = append(ids, jobs[k].ID)
			}
		}
		return ids
	}
	for _, c := range []struct {
		frac float64
		want int
	}{{0, 0}, {0.3, 3}, {0.34, 3}, {0.36, 4}, {1, 10}} {
		pl, err := draw(c.frac, TenantsTrace, jobs, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(batch(pl)); got != c.want {
			t.Errorf("batch_fraction %v: %d batch jobs, want %d", c.frac, got, c.want)
		}
		back, _ := draw(c.frac, TenantsTrace, reversed, 1)
		if a, b := batch(pl), batch(back); !slices.Equal(a, b) {
			t.Errorf("batch_fraction %v: batch jobs %v, reversed rows %v; want the same", c.frac, a, b)
		}
	}
	one, _ := draw(0.5, TenantsTrace, jobs, 1)
	two, _ := draw(0.5, TenantsTrace, jobs, 2)
	if slices.Equal(batch(one), batch(two)) {
		t.Errorf("seeds 1 and 2 drew the same batch jobs %v; a seed should draw its own", batch(one))
	}
	for _, c := range []struct {
		tenants string
		want    string // jobs per tenant, sorted
	}{{"1", "[10]"}, {"3", "[3 3 4]"}, {"10", "[1 1 1 1 1 1 1 1 1 1]"}} {
		pl, err := draw(0, c.tenants, jobs, 1)
		if err != nil {
			t.Fatal(err)
		}
		per := map[string]int{}
		for k := range jobs {
			per[pl.tenantOf[jobs[k].ID]]++
		}
		var n []int
		for _, v := range per {
			n = append(n, v)
		}
		slices.Sort(n)
		if got := fmt.Sprint(n); got != c.want {
			t.Errorf("tenants %s: jobs per tenant %s, want %s", c.tenants, got, c.want)
		}
	}
	_, err := draw(0, "11", jobs, 1)
	var ie *InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "cluster.tenants") || !strings.Contains(err.Error(), "at most 10") {
		t.Errorf("11 tenants for 10 jobs: error %v; want an InputError naming cluster.tenants and at most 10", err)
	}
}

// A bootstrap keeps the number of jobs, draws only jobs of the list (the
// c-th copy named ID#c, every ID unique), returns them by arrival, is the
// same whatever the list's order, and differs by seed.
func TestResampleJobs(t *testing.T) {
	var jobs []workloads.Job
	for k := range 50 {
		jobs = append(jobs, job(fmt.Sprintf("j%02d", k), float64(k%7), float64(10+k), 100+k))
	}
	got := resampleJobs(jobs, 3)
	if len(got) != len(jobs) {
		t.Fatalf("%d jobs, want %d", len(got), len(jobs))
	}
	seen := map[string]bool{}
	for k, j := range got {
		if seen[j.ID] {
			t.Errorf("ID %s twice", j.ID)
		}
		seen[j.ID] = true
		orig, _, _ := strings.Cut(j.ID, "#")
		i := slices.IndexFunc(jobs, func(o workloads.Job) bool { return o.ID == orig })
		if i < 0 {
			t.Fatalf("job %s is none of the list's", j.ID)
		}
		o := jobs[i]
		o.ID = j.ID
		if fmt.Sprint(o) != fmt.Sprint(j) {
			t.Errorf("copy %v differs from its job %v", j, jobs[i])
		}
		if k > 0 && got[k-1].Arrival > j.Arrival {
			t.Errorf("job %d arrives before job %d", k, k-1)
		}
	}
	if len(seen) == 0 || !slices.ContainsFunc(got, func(j workloads.Job) bool { return strings.Contains(j.ID, "#") }) {
		t.Errorf("no job drawn twice in 50 draws (the chance is below 1e-20)")
	}
	rev := slices.Clone(jobs)
	slices.Reverse(rev)
	if a, b := fmt.Sprint(got), fmt.Sprint(resampleJobs(rev, 3)); a != b {
		t.Errorf("reversed rows resampled differently")
	}
	if fmt.Sprint(got) == fmt.Sprint(resampleJobs(jobs, 4)) {
		t.Errorf("seeds 3 and 4 drew the same jobs")
	}
}

// By hand, on 8 servers in this order: a 8xG2, b 2xT4, c 8xG3, d 4xP100,
// e 8xG2, f 2xT4, g 4xP100, h 8xG2. The fast class (within 0.9 of the
// fastest's resnet50 speed) is a100-40gb (G2) and a100-80gb (G3): 32 of
// the 44 GPUs. node_fraction 0.5 keeps a, e (G2), c, b, d: 30 GPUs.
// fast_share 0.75 wants round(22.5) = 23 fast GPUs and 7 others, shared by
// the models' GPUs in the list: G2 17.25, G3 5.75, T4 2.33, P100 4.67;
// taking a server while it brings its model nearer: a, b, c, d, e (G2 16,
// G3 8, T4 2, P100 4). fast_share 1 wants 30 fast GPUs: G2 22.5 (a, e, h:
// 24), G3 7.5 (c). fast_share 0.5 leaves 15 to 12 slow GPUs: refused, as
// is a fast class with no GPU in the list, and one (T4 and P100) with 12
// GPUs for 15.
func TestNodesKeptShare(t *testing.T) {
	nodes := []trace.Node{
		{Name: "a", NumGPU: 8, GPUType: "G2"}, {Name: "b", NumGPU: 2, GPUType: "T4"},
		{Name: "c", NumGPU: 8, GPUType: "G3"}, {Name: "d", NumGPU: 4, GPUType: "P100"},
		{Name: "e", NumGPU: 8, GPUType: "G2"}, {Name: "f", NumGPU: 2, GPUType: "T4"},
		{Name: "g", NumGPU: 4, GPUType: "P100"}, {Name: "h", NumGPU: 8, GPUType: "G2"},
	}
	tm, _ := gpu.ParseTraceTypeMap("")
	cfg := Defaults()
	cfg.NodeFraction = 0.5
	for _, c := range []struct {
		share float64
		fast  []string
		want  string // kept, or the error's text
	}{
		{0.75, nil, "[true true true true true false false false]"},
		{1, nil, "[true false true false true false false true]"},
		{0.5, nil, "cluster.fast_share: 0.5 leaves 15 GPUs to the other models, and the node list"},
		{0.5, []string{"h100-80gb"}, "has no GPU of the fast class (h100-80gb)"},
		{0.5, []string{"T4", "P100"}, "cluster.fast_share: 0.5 wants 15 fast GPUs of 30 sampled, and the node list"},
	} {
		cfg.FastGPUs = c.fast
		keep, err := nodesKeptShare(cfg, nodes, c.share, tm)
		got := fmt.Sprint(keep)
		if err != nil {
			got = err.Error()
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Errorf("share %v: %v is not an InputError (exit 2)", c.share, err)
			}
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("share %v fast %v: %s; want %s", c.share, c.fast, got, c.want)
		}
	}
}

// Second paths through the code: batch_fraction 1 is all-batch and 0
// all-service (the same GPU-hours, JCTs and jobs); a tenant per job drawn
// as a count (tenants = the number of jobs) is per-job, and one tenant is
// single.
func TestRegimesMatchNamedModes(t *testing.T) {
	dir := t.TempDir()
	head := "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
	var rows []string
	for k := range 24 {
		qos := []string{"LS", "BE", "Burstable"}[k%3]
		rows = append(rows, fmt.Sprintf("p%02d,2000,4096,1,%d,,%s,Succeeded,%d,%d,%d", k, 200+29*k, qos, 30*k, 30*k+400+50*(k%5), 30*k))
	}
	pods := filepath.Join(dir, "pods.csv")
	if err := os.WriteFile(pods, []byte(head+strings.Join(rows, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := small(nil, "a100-40gb", 3, "naive-share", "conspirator")
	base.Jobs, base.Trace, base.Seeds = nil, pods, 2
	run := func(set func(*Config)) string {
		c := base
		set(&c)
		res, err := Run(c, 5, testEnv)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, p := range res.Policies {
			fmt.Fprintf(&b, "%s %.9g %.9g %v|", p.Name, p.GPUHours, p.JCT.Mean, p.ByKind)
		}
		return b.String()
	}
	for _, c := range []struct {
		name   string
		a, b   func(*Config)
		differ func(*Config) // a reading that must differ from a
	}{
		{"batch_fraction 1 = all-batch",
			func(c *Config) { c.JobKind, c.BatchFraction = JobKindBatchFraction, 1 },
			func(c *Config) { c.JobKind = JobKindAllBatch },
			func(c *Config) { c.JobKind = JobKindAllService }},
		{"batch_fraction 0 = all-service",
			func(c *Config) { c.JobKind, c.BatchFraction = JobKindBatchFraction, 0 },
			func(c *Config) { c.JobKind = JobKindAllService },
			func(c *Config) { c.JobKind = JobKindAllBatch }},
		{"tenants 24 = per-job",
			func(c *Config) { c.Tenants = "24" },
			func(c *Config) { c.Tenants = TenantsPerJob },
			func(c *Config) { c.Tenants = TenantsSingle }},
		{"tenants 1 = single",
			func(c *Config) { c.Tenants = "1" },
			func(c *Config) { c.Tenants = TenantsSingle },
			func(c *Config) { c.Tenants = TenantsPerJob }},
	} {
		a, b := run(c.a), run(c.b)
		if a != b {
			t.Errorf("%s:\n%s\n%s", c.name, a, b)
		}
		if run(c.differ) == a {
			t.Errorf("%s: the contrasting reading gives the same results, so the test cannot tell them apart", c.name)
		}
	}
	// The bootstrap (the default) varies the jobs by seed: two seeds'
	// runs on one homogeneous cluster differ only through it.
	w := base
	w.Seeds, w.SeedVaries = 1, SeedVariesWorkload
	r1, err1 := Run(w, 1, testEnv)
	r2, err2 := Run(w, 2, testEnv)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if r1.Policies[0].GPUHours == r2.Policies[0].GPUHours {
		t.Errorf("seed_varies cluster+workload: seeds 1 and 2 gave the same GPU-hours %v", r1.Policies[0].GPUHours)
	}
	w.SeedVaries = SeedVariesCluster
	r1, _ = Run(w, 1, testEnv)
	r2, _ = Run(w, 2, testEnv)
	if r1.Policies[0].GPUHours != r2.Policies[0].GPUHours {
		t.Errorf("seed_varies cluster on a homogeneous cluster: seeds gave %v and %v; want the same", r1.Policies[0].GPUHours, r2.Policies[0].GPUHours)
	}
}

// The regime draws and the bootstrap give byte-identical results whatever
// the parallelism the seeds run with.
func TestRegimesDeterministic(t *testing.T) {
	var jobs []workloads.Job
	for k := range 40 {
		j := job(fmt.Sprintf("j%02d", k), float64(20*k), float64(300+40*(k%7)), 150+20*k)
		jobs = append(jobs, j)
	}
	cfg := small(jobs, "a100-40gb", 4, "naive-share", "best-fit", "first-fit", "conspirator")
	cfg.JobKind, cfg.BatchFraction, cfg.Tenants, cfg.SeedVaries, cfg.Seeds = JobKindBatchFraction, 0.5, "7", SeedVariesWorkload, 4
	run := func(procs int) string {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		res, err := Run(cfg, 3, testEnv)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	one, four := run(1), run(4)
	if one != four {
		t.Errorf("GOMAXPROCS 1 and 4 gave different results")
	}
	if !strings.Contains(one, `"vs_best_baseline"`) {
		t.Errorf("no vs_best_baseline with three baselines: %s", one)
	}
}

// By hand: over two seeds naive-share holds 100 and 110 GPU-hours,
// best-fit 90 and 100 (sum 190), first-fit 95 and 99 (194), optimal 50
// and 50 (an exact solver, never a baseline):
// best-fit is the best baseline, and conspirator's 81 and 80 are -10% and
// -20% of it (mean -15, min -20, max -10). With naive-share the only
// baseline there is none.
func TestBestBaseline(t *testing.T) {
	hours := map[string][2]float64{"naive-share": {100, 110}, "best-fit": {90, 100}, "first-fit": {95, 99}, "optimal": {50, 50}, "conspirator": {81, 80}}
	mk := func(names ...string) (Config, []seedRun) {
		cfg := Defaults()
		cfg.Policies = names
		runs := make([]seedRun, 2)
		for s := range runs {
			for _, n := range names {
				runs[s].policies = append(runs[s].policies, PolicyResult{Name: n, GPUHours: hours[n][s]})
			}
		}
		return cfg, runs
	}
	cfg, runs := mk("naive-share", "first-fit", "best-fit", "optimal", "conspirator")
	b := bestBaseline(cfg, runs)
	if b != 2 {
		t.Fatalf("best baseline %d, want 2 (best-fit)", b)
	}
	res := merge(cfg, runs)
	v := res.Policies[4].VsBest
	if v == nil || v.Baseline != "best-fit" || math.Abs(v.Pct+15) > 1e-9 || v.Min != -20 || math.Abs(v.Max+10) > 1e-9 {
		t.Errorf("conspirator vs best %+v; want best-fit, -15, min -20, max -10", v)
	}
	for _, k := range []int{0, 1, 2, 3} {
		if res.Policies[k].VsBest != nil {
			t.Errorf("%s has vs_best_baseline; only conspirator policies do", res.Policies[k].Name)
		}
	}
	if cfg, runs := mk("naive-share", "optimal", "conspirator"); bestBaseline(cfg, runs) != -1 {
		t.Errorf("one baseline: want none (-1)")
	}
}
