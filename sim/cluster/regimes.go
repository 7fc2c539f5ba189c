package cluster

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/workloads"
	"github.com/conspirator-sim/conspirator/workloads/trace"
)

// The three axes a user's cluster differs from the trace's on (issue 39):
// the share of batch work (job_kind batch-fraction), the number of
// tenants that must be isolated (tenants N), and the share of fast GPUs
// (fast_share); and what a seed varies (seed_varies). Every draw here is
// a function of the seed and of the jobs' IDs or the servers' names, never
// of a file's row order.

// fastSpeedShare is how close to the fastest model's speed a model of the
// node list must be to count in the fast class when fast_gpus is empty:
// openb's a100-40gb is 0.941 of the a100-80gb, its V100s below 0.5, so any
// bound between them gives the same class.
const fastSpeedShare = 0.9

// tenantCount reads Config.Tenants as a count N; ok is false for the named
// modes (trace, per-job, single).
func tenantCount(s string) (n int, ok bool, err error) {
	if slices.Contains([]string{TenantsTrace, TenantsPerJob, TenantsSingle}, s) {
		return 0, false, nil
	}
	n, err = strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, false, fmt.Errorf("%q; use %s, %s, %s or a count of tenants (1 or more, at most the run's jobs)", s, TenantsTrace, TenantsPerJob, TenantsSingle)
	}
	if n < 1 {
		return 0, false, fmt.Errorf("%d tenants; want at least 1 (1: one shared tenant)", n)
	}
	return n, true, nil
}

// fastShare reads Config.FastShare; ok is false when it is empty (the
// node list's own mix).
func fastShare(s string) (v float64, ok bool, err error) {
	if strings.TrimSpace(s) == "" {
		return 0, false, nil
	}
	v, err = strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || !(v >= 0 && v <= 1) {
		return 0, false, fmt.Errorf("%q; want a share of the sampled GPUs from 0 to 1 (e.g. 0.5), or empty for the node list's own mix", s)
	}
	return v, true, nil
}

// validateRegimes checks the keys of this file.
func (c Config) validateRegimes(add func(key, format string, args ...any)) {
	if !(c.BatchFraction >= 0 && c.BatchFraction <= 1) {
		add("batch_fraction", "%v; want a share of the jobs from 0 (all services) to 1 (all batch)", c.BatchFraction)
	}
	_, counted, err := tenantCount(c.Tenants)
	if err != nil {
		add("tenants", "%v", err)
	}
	if c.Synthetic.Jobs > 0 && (counted || c.JobKind == JobKindBatchFraction) {
		add("synthetic.jobs", "not with job_kind batch-fraction or a tenant count (they are drawn over the run's list of jobs, which synthetic jobs are not); replay the trace, or use job_kind by-qos and tenants per-job")
	}
	share, fast, err := fastShare(c.FastShare)
	if err != nil {
		add("fast_share", "%v", err)
	}
	if fast && c.Nodes == "" {
		add("fast_share", "%v needs a node list to sample (cluster.nodes); with declared gpus, declare the mix itself", share)
	}
	if fast && c.ReferenceGPU == "" {
		// Without it the reference is the sample's most common type, which
		// the share itself moves (T4 at 25% A100s on openb, A100 above):
		// every job's size and work would be read against another GPU, and
		// the map would show that, not the mix (a review of issue 39).
		add("reference_gpu", "empty with fast_share %v: the default reference (the sample's most common GPU type) moves with the share and changes how every job is read; name one, e.g. reference_gpu: a100-40gb (openb's most common)", share)
	}
	tm, _ := gpu.ParseTraceTypeMap(c.TypeMap)
	for i, m := range c.FastGPUs {
		if _, err := resolveType(m, tm); err != nil {
			add(fmt.Sprintf("fast_gpus[%d]", i), "%v", err)
		}
	}
	if c.SeedVaries != SeedVariesCluster && c.SeedVaries != SeedVariesWorkload {
		add("seed_varies", "%q; use %s or %s", c.SeedVaries, SeedVariesWorkload, SeedVariesCluster)
	}
}

// permutedIDs returns the IDs of jobs sorted, then shuffled by the seed's
// stream name: the same order whatever the jobs' order in the file.
func permutedIDs(jobs []workloads.Job, seed uint64, name string) []string {
	ids := make([]string, len(jobs))
	for k := range jobs {
		ids[k] = jobs[k].ID
	}
	slices.Sort(ids)
	rs := engine.NewStream(seed, name)
	for i := len(ids) - 1; i > 0; i-- {
		j := rs.IntN(i + 1)
		ids[i], ids[j] = ids[j], ids[i]
	}
	return ids
}

// drawRegimes draws the seed's kinds (job_kind batch-fraction) and
// tenants (a tenant count) over src, the run's jobs, into pl. A tenant
// count above the jobs is an InputError naming cluster.tenants.
func (pl *planner) drawRegimes(src []workloads.Job, seed uint64) error {
	cfg := &pl.cfg
	if pl.llm.count() > 0 { // the services' kinds and tenants are their own
		src = slices.DeleteFunc(slices.Clone(src), func(j workloads.Job) bool { return pl.llm.has(j.ID) })
	}
	if cfg.JobKind == JobKindBatchFraction {
		ids := permutedIDs(src, seed, "cluster/job-kind")
		nb := int(math.Round(cfg.BatchFraction * float64(len(ids))))
		pl.batchJob = make(map[string]bool, nb)
		for _, id := range ids[:nb] {
			pl.batchJob[id] = true
		}
	}
	n, counted, _ := tenantCount(cfg.Tenants) // checked by Validate
	if !counted {
		return nil
	}
	if n > len(src) {
		return &InputError{fmt.Errorf("cluster.tenants: %d tenants for %d jobs; use at most %d (every job its own tenant), or per-job", n, len(src), len(src))}
	}
	ids := permutedIDs(src, seed, "cluster/tenants")
	pl.tenantOf = make(map[string]string, len(ids))
	for k, id := range ids {
		pl.tenantOf[id] = "tenant-" + strconv.Itoa(k%n)
	}
	return nil
}

// isService is job j's kind: drawn under batch-fraction, read from the
// job otherwise.
func (pl *planner) isService(j *workloads.Job) bool {
	if pl.cfg.JobKind == JobKindBatchFraction {
		return !pl.batchJob[j.ID]
	}
	return pl.cfg.isService(j)
}

// resampleJobs is the seed's bootstrap of jobs (seed_varies
// cluster+workload): len(jobs) draws with replacement, from the jobs
// sorted by ID (so that the draw does not depend on the file's row order),
// returned in arrival order (ties by ID); the c-th copy of a job drawn c
// times is named ID#c, so that every run job keeps a unique ID. It does
// not modify jobs.
func resampleJobs(jobs []workloads.Job, seed uint64) []workloads.Job {
	byID := slices.Clone(jobs)
	slices.SortStableFunc(byID, func(a, b workloads.Job) int { return strings.Compare(a.ID, b.ID) })
	count := make([]int, len(byID))
	rs := engine.NewStream(seed, "cluster/workload")
	for range byID {
		count[rs.IntN(len(byID))]++
	}
	out := make([]workloads.Job, 0, len(byID))
	for k, c := range count {
		for i := range c {
			j := byID[k]
			if i > 0 {
				j.ID = j.ID + "#" + strconv.Itoa(i+1)
			}
			out = append(out, j)
		}
	}
	slices.SortStableFunc(out, func(a, b workloads.Job) int {
		switch {
		case a.Arrival < b.Arrival:
			return -1
		case a.Arrival > b.Arrival:
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// nodesKeptShare marks the servers of nodes (in node order) that a
// fast_share sample keeps: as many GPUs as node_fraction's sample
// (nodesKept) holds, share of them of the fast class and the rest of the
// other models in proportion to their GPUs in the list, each model's
// servers taken in order while a server brings its count nearer its
// target. A share the list cannot meet (no fast GPUs, or no others, or too
// few) is an InputError naming cluster.fast_share.
func nodesKeptShare(cfg Config, nodes []trace.Node, share float64, tm gpu.TraceTypeMap) ([]bool, error) {
	base := nodesKept(nodes, cfg.NodeFraction, tm)
	keep := make([]bool, len(nodes))
	model := make([]string, len(nodes))
	total, listed := 0, map[string]int{}
	for i, n := range nodes {
		if n.NumGPU == 0 || n.GPUType == "" {
			keep[i] = base[i] // reported as a node without GPU
			continue
		}
		name, err := resolveType(n.GPUType, tm)
		if err != nil {
			keep[i] = true // buildCluster reports it
			continue
		}
		model[i] = name
		listed[name] += n.NumGPU
		if base[i] {
			total += n.NumGPU
		}
	}
	fast, err := fastClass(cfg, listed, tm)
	if err != nil {
		return nil, err
	}
	fastGPUs, slowGPUs := 0, 0
	for m, g := range listed {
		if fast[m] {
			fastGPUs += g
		} else {
			slowGPUs += g
		}
	}
	wantFast := int(math.Round(share * float64(total)))
	wantSlow := total - wantFast
	switch {
	case wantFast > 0 && fastGPUs == 0:
		return nil, &InputError{fmt.Errorf("cluster.fast_share: %v wants %d fast GPUs, and the node list %s has no GPU of the fast class (%s); name models it has in cluster.fast_gpus, or use fast_share 0", share, wantFast, cfg.Nodes, strings.Join(sortedKeys(fast), ", "))}
	case wantFast > fastGPUs:
		return nil, &InputError{fmt.Errorf("cluster.fast_share: %v wants %d fast GPUs of %d sampled, and the node list %s has %d; lower fast_share or node_fraction", share, wantFast, total, cfg.Nodes, fastGPUs)}
	case wantSlow > 0 && slowGPUs == 0:
		return nil, &InputError{fmt.Errorf("cluster.fast_share: %v leaves %d GPUs to models outside the fast class, and the node list %s has none; use fast_share 1 or name fewer models in fast_gpus", share, wantSlow, cfg.Nodes)}
	case wantSlow > slowGPUs:
		return nil, &InputError{fmt.Errorf("cluster.fast_share: %v leaves %d GPUs to the other models, and the node list %s has %d; raise fast_share or lower node_fraction", share, wantSlow, cfg.Nodes, slowGPUs)}
	}
	want := map[string]float64{}
	for m, g := range listed {
		if fast[m] {
			want[m] = float64(wantFast) * float64(g) / float64(fastGPUs)
		} else {
			want[m] = float64(wantSlow) * float64(g) / float64(slowGPUs)
		}
	}
	taken := map[string]int{}
	for i, m := range model {
		if m == "" {
			continue
		}
		t, w := float64(taken[m]), want[m]
		if math.Abs(t+float64(nodes[i].NumGPU)-w) < math.Abs(t-w) {
			taken[m] += nodes[i].NumGPU
			keep[i] = true
		}
	}
	return keep, nil
}

// fastClass is the set of models (catalog names) of the fast class:
// cfg.FastGPUs resolved, or every listed model at least fastSpeedShare
// of the fastest listed one's speed.
func fastClass(cfg Config, listed map[string]int, tm gpu.TraceTypeMap) (map[string]bool, error) {
	fast := map[string]bool{}
	if len(cfg.FastGPUs) > 0 {
		for i, m := range cfg.FastGPUs {
			n, err := resolveType(m, tm)
			if err != nil {
				return nil, &InputError{fmt.Errorf("cluster.fast_gpus[%d]: %w", i, err)}
			}
			fast[n] = true
		}
		return fast, nil
	}
	speed := map[string]float64{}
	top := 0.0
	for m := range listed {
		s, err := gpu.Lookup(m)
		if err != nil {
			return nil, err
		}
		speed[m] = s.RelSpeed[cfg.SpeedModel]
		top = max(top, speed[m])
	}
	for m, v := range speed {
		if v >= fastSpeedShare*top {
			fast[m] = true
		}
	}
	return fast, nil
}

// bestBaseline is the index in cfg.Policies of the established baseline
// with the fewest GPU-hours over the seeds (their sum; ties to the first
// listed): the policies that are neither the project's (conspirator...)
// nor an exact solver (optimal...). -1 with fewer than two such
// baselines, where vs_baseline already says it all.
func bestBaseline(cfg Config, runs []seedRun) int {
	best, n := -1, 0
	sum := func(k int) float64 {
		var s float64
		for _, r := range runs {
			s += r.policies[k].GPUHours
		}
		return s
	}
	for k, name := range cfg.Policies {
		if strings.HasPrefix(name, "conspirator") || strings.HasPrefix(name, "optimal") {
			continue
		}
		n++
		if best < 0 || sum(k) < sum(best) {
			best = k
		}
	}
	if n < 2 {
		return -1
	}
	return best
}
