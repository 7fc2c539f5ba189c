// Package alloc is the allocation experiment of the FGD paper (Weng et al.,
// USENIX ATC'23, section 6 and its artifact's "tune" runs): the pods of a
// pod list, CPU-only ones included, are shuffled and resampled with a seed
// until their GPU request reaches Tune times the cluster's GPU capacity,
// then scheduled one by one on the servers of a node list by a node-level
// policy (policies/nodealloc); pods never leave. The metric is the GPU
// allocation ratio, allocated GPU-milli over total GPU-milli, as the GPU
// request that has arrived grows.
//
// The shuffle, the resampling and the measurement follow the authors'
// simulator (hkust-adsl/kubernetes-scheduler-simulator: SortClusterPods
// with shufflePod, tuneUpPods/tuneDownPods, experiments/analysis
// merge_alloc_discrete.py); the random numbers are this project's (named
// streams), so single seeds differ from theirs and means over seeds are
// what compare.
//
// The model does no I/O: the assembly imports the pod and node lists.
package alloc

import (
	"errors"
	"fmt"
	"github.com/conspirator-sim/conspirator/internal/parallel"
	"math"
	"runtime"
	"slices"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/stats"
	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/internal/suggest"
	"github.com/conspirator-sim/conspirator/policies/nodealloc"
)

// Default input files: the Alibaba v2023 openb trace in ../shared, the
// FGD paper's own workload.
const (
	OpenBPods  = "../shared/traces/alibaba-gpu-v2023/openb_pod_list_default.csv"
	OpenBNodes = "../shared/traces/alibaba-gpu-v2023/openb_node_list_gpu_node.csv"
)

// Config is the allocation section of a scenario: one allocation
// experiment.
type Config struct {
	Trace    string   `yaml:"trace" doc:"openb pod list (CSV: name, cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec, ...); every openb variant of ../shared/traces/alibaba-gpu-v2023 works; relative to the working directory" default:"../shared/traces/alibaba-gpu-v2023/openb_pod_list_default.csv"`
	Nodes    string   `yaml:"nodes" doc:"openb node list (CSV: sn, cpu_milli, memory_mib, gpu, model): the servers" default:"../shared/traces/alibaba-gpu-v2023/openb_node_list_gpu_node.csv"`
	Policies []string `yaml:"policies" doc:"node-level policies to compare: random, dot-product, gpu-clustering, gpu-packing, best-fit, fgd (the FGD paper's), conspirator (this project's heuristic's placement rule)" default:"[random, dot-product, gpu-clustering, gpu-packing, best-fit, fgd, conspirator]" source:"paper: FGD (Weng et al., USENIX ATC'23) section 6 and its artifact"`
	Seeds    int      `yaml:"seeds" doc:"runs per policy (seeds seed .. seed+seeds-1); the report gives the mean and 95% CI over them" default:"10" source:"paper: the FGD artifact's expected results use 10 seeds (42-51)"`
	// Tune is the arrived GPU request at the end of the run, as a multiple
	// of the cluster's GPU capacity.
	Tune float64 `yaml:"tune" doc:"GPU request that arrives by the end, as a multiple of the cluster's GPU capacity (pods are resampled to reach it)" default:"1.3" source:"paper: FGD artifact, -tune 1.3"`
	// TypicalThreshold is the percent of pods the FGD typical pod shapes
	// cover.
	TypicalThreshold float64 `yaml:"typical_threshold" doc:"percent of pods (CPU-only included) that FGD's typical pod shapes cover" default:"95" source:"paper: FGD artifact, podPopularityThreshold 95"`
	// TieBreak chooses among nodes with the top score. TieNodeOrder takes
	// the first in a random order of the servers drawn once per seed: the
	// authors' simulator renames every node with a seeded permutation
	// ("%04d-" + name, simulator.go syncClusterResourceList) and patches
	// Kubernetes' selectHost to take the smallest name "for
	// reproducibility". TieRandom draws uniformly at every decision, as
	// upstream Kubernetes does. Either way the node list's row order does
	// not matter: the servers are put in name order first.
	TieBreak string `yaml:"tie_break" doc:"among servers with the top score: node-order (the first in a random order of the servers drawn once per seed, as the FGD authors' simulator) or random (uniform at every decision, as upstream Kubernetes)" default:"node-order" source:"paper: FGD artifact, simulator.go syncClusterResourceList (seeded node renaming) and vendored generic_scheduler.go selectHost (smallest name)"`
}

// Tie-break rules.
const (
	TieNodeOrder = "node-order"
	TieRandom    = "random"
)

// Files returns the input files and their keys, for the assembly's
// existence check.
func (c Config) Files() (keys, paths []string) {
	return []string{"allocation.trace", "allocation.nodes"}, []string{c.Trace, c.Nodes}
}

// Input is the cluster and the workload, as imported.
type Input struct {
	Nodes []nodealloc.Node // empty nodes
	Pods  []nodealloc.Pod  // in file order
}

// Point is the allocation after one arrived-GPU percentage bucket: the
// mean over the pods whose arrival brought the arrived GPU request to
// ArrivedPct (rounded) of the allocation ratio after them, as the authors'
// analysis averages.
type Point struct {
	ArrivedPct int     `json:"arrived_pct"`
	AllocPct   float64 `json:"alloc_pct"`
}

// Run is one policy and seed.
type Run struct {
	Policy    string  `json:"policy"`
	Seed      uint64  `json:"seed"`
	Pods      int     `json:"pods"`
	Failed    int     `json:"failed"`
	Points    []Point `json:"points"`
	FinalPct  float64 `json:"final_alloc_pct"`
	CapacityM int64   `json:"gpu_capacity_milli"`
}

// Result holds every run, policies in Config order, seeds ascending.
type Result struct {
	Runs []Run `json:"runs"`
}

// Validate checks the configuration; each problem names its key.
func (c Config) Validate() error {
	var errs []error
	if c.Trace == "" {
		errs = append(errs, units.Invalid("trace", "empty; name an openb pod list, e.g. %s", OpenBPods))
	}
	if c.Nodes == "" {
		errs = append(errs, units.Invalid("nodes", "empty; name an openb node list, e.g. %s", OpenBNodes))
	}
	if len(c.Policies) == 0 {
		errs = append(errs, units.Invalid("policies", "empty; use some of %s", strings.Join(nodealloc.Names(), ", ")))
	}
	seen := map[string]bool{}
	for i, p := range c.Policies {
		key := fmt.Sprintf("policies[%d]", i)
		switch {
		case !slices.Contains(nodealloc.Names(), p):
			msg := fmt.Sprintf("unknown policy %q; known: %s", p, strings.Join(nodealloc.Names(), ", "))
			if near := suggest.Nearest(p, nodealloc.Names()); near != "" {
				msg = fmt.Sprintf("unknown policy %q (did you mean %q?); known: %s", p, near, strings.Join(nodealloc.Names(), ", "))
			}
			errs = append(errs, units.Invalid(key, "%s", msg))
		case seen[p]:
			errs = append(errs, units.Invalid(key, "policy %q is listed twice", p))
		}
		seen[p] = true
	}
	if c.Seeds < 1 || c.Seeds > 1000 {
		errs = append(errs, units.Invalid("seeds", "%d; want 1 to 1000", c.Seeds))
	}
	if !(c.Tune > 0) || c.Tune > 10 {
		errs = append(errs, units.Invalid("tune", "%v; want a multiple of the GPU capacity in (0, 10], e.g. 1.3", c.Tune))
	}
	if c.TieBreak != TieNodeOrder && c.TieBreak != TieRandom {
		errs = append(errs, units.Invalid("tie_break", "%q; want %q (the FGD authors' simulator) or %q (upstream Kubernetes)", c.TieBreak, TieNodeOrder, TieRandom))
	}
	if !(c.TypicalThreshold > 0 && c.TypicalThreshold <= 100) {
		errs = append(errs, units.Invalid("typical_threshold", "%v; want a percent in (0, 100], e.g. 95", c.TypicalThreshold))
	}
	return errors.Join(errs...)
}

// Simulate runs every policy for every seed, on as many goroutines as
// GOMAXPROCS (SimulateWorkers).
func Simulate(cfg Config, in Input, seed uint64) (*Result, error) {
	return SimulateWorkers(cfg, in, seed, runtime.GOMAXPROCS(0))
}

// SimulateWorkers is Simulate on at most workers goroutines. Every
// (policy, seed) run is independent: its own copy of the nodes, its own
// random streams, its own policy value; results go to their place in
// policy-then-seed order, so the result is the same at any worker count.
func SimulateWorkers(cfg Config, in Input, seed uint64, workers int) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var capacity int64
	for _, n := range in.Nodes {
		capacity += int64(len(n.GPULeft)) * nodealloc.Milli
	}
	if capacity == 0 {
		return nil, fmt.Errorf("the node list has no GPU")
	}
	if len(in.Pods) == 0 {
		return nil, fmt.Errorf("the pod list has no pod")
	}
	typical := nodealloc.Typical(in.Pods, cfg.TypicalThreshold)
	for _, name := range cfg.Policies {
		if _, err := nodealloc.New(name, typical); err != nil {
			return nil, err
		}
	}
	res := &Result{Runs: make([]Run, len(cfg.Policies)*cfg.Seeds)}
	parallel.Each(len(res.Runs), workers, func(k int) {
		pol, _ := nodealloc.New(cfg.Policies[k/cfg.Seeds], typical) // checked above
		res.Runs[k] = runOne(pol, in, capacity, cfg, seed+uint64(k%cfg.Seeds))
	})
	return res, nil
}

// workload returns the pods of one seed: the pod list shuffled, then
// resampled (uniformly, with replacement, from the pod list) until the
// next pod would take the GPU request past tune x capacity, or thinned by
// removing random pods until it is at most that (authors' tuneUpPods and
// tuneDownPods; like theirs, the stop test compares the next pod's
// per-GPU share, not its total, and CPU-only pods are always added).
func workload(pods []nodealloc.Pod, capacity int64, tune float64, s *engine.Stream) []nodealloc.Pod {
	out := slices.Clone(pods)
	for i := len(out) - 1; i > 0; i-- {
		j := s.IntN(i + 1)
		out[i], out[j] = out[j], out[i]
	}
	var total int64
	for i := range out {
		total += out[i].TotalGPUMilli()
	}
	target := tune * float64(capacity)
	switch {
	case float64(total) > target:
		for float64(total) > target && len(out) > 0 {
			i := s.IntN(len(out))
			total -= out[i].TotalGPUMilli()
			out = slices.Delete(out, i, i+1)
		}
	case float64(total) < target:
		for {
			p := pods[s.IntN(len(pods))]
			if float64(total+p.GPUMilli) > target {
				break
			}
			total += p.TotalGPUMilli()
			out = append(out, p)
		}
	}
	return out
}

// tieRand is the scheduler's random stream, as nodealloc.Rand.
type tieRand struct{ s *engine.Stream }

func (r tieRand) IntN(n int) int { return r.s.IntN(n) }

func runOne(pol nodealloc.Policy, in Input, capacity int64, cfg Config, seed uint64) Run {
	pods := workload(in.Pods, capacity, cfg.Tune, engine.NewStream(seed, "alloc/workload"))
	run := place(pol, in.Nodes, pods, capacity, cfg, tieRand{engine.NewStream(seed, "alloc/"+pol.Name())}, engine.NewStream(seed, "alloc/node-order"))
	run.Seed = seed
	return run
}

// place schedules pods, in order, on a copy of nodes and measures the
// allocation as they arrive.
// order draws the per-seed node order of TieNodeOrder.
func place(pol nodealloc.Policy, in []nodealloc.Node, pods []nodealloc.Pod, capacity int64, cfg Config, r, order nodealloc.Rand) Run {
	tune := cfg.Tune
	// Nodes in name order, so that neither the ties nor the random draws
	// depend on the node list's row order.
	nodes := make([]nodealloc.Node, len(in))
	for i, n := range in {
		nodes[i] = n
		nodes[i].GPULeft = slices.Clone(n.GPULeft)
	}
	slices.SortStableFunc(nodes, func(a, b nodealloc.Node) int { return strings.Compare(a.Name, b.Name) })
	if cfg.TieBreak == TieNodeOrder {
		// The seed's order of the servers: ties go to the earliest.
		for i := len(nodes) - 1; i > 0; i-- {
			j := order.IntN(i + 1)
			nodes[i], nodes[j] = nodes[j], nodes[i]
		}
	}
	run := Run{Policy: pol.Name(), Pods: len(pods), CapacityM: capacity}
	var arrived, used int64
	// Per-bucket sums of the allocation ratio after each pod.
	sum := map[int]float64{}
	cnt := map[int]int{}
	fit := make([]int, 0, len(nodes))
	scores := make([]int64, 0, len(nodes))
	for k := range pods {
		p := &pods[k]
		arrived += p.TotalGPUMilli()
		fit, scores = fit[:0], scores[:0]
		for i := range nodes {
			if nodealloc.Fits(&nodes[i], p) {
				fit = append(fit, i)
				scores = append(scores, pol.Score(&nodes[i], p))
			}
		}
		if len(fit) == 0 {
			run.Failed++
		} else {
			if pol.Normalize() {
				nodealloc.Normalized(scores)
			}
			// Highest score; ties to the earliest node in the seed's
			// order, or uniformly at random (reservoir, as Kubernetes'
			// selectHost).
			// The random policy scores all nodes alike and always draws.
			random := cfg.TieBreak == TieRandom || pol.Name() == "random"
			best, ties := 0, 1
			for i := 1; i < len(fit); i++ {
				switch {
				case scores[i] > scores[best]:
					best, ties = i, 1
				case scores[i] < scores[best]:
				case random:
					ties++
					if r.IntN(ties) == 0 {
						best = i
					}
				}
				// Otherwise the tie stays with the earlier node.
			}
			n := &nodes[fit[best]]
			nodealloc.Place(n, p, pol.GPUs(n, p, r))
			used += p.TotalGPUMilli()
		}
		b := int(math.Round(float64(arrived) / float64(capacity) * 100))
		sum[b] += float64(used) / float64(capacity) * 100
		cnt[b]++
	}
	run.FinalPct = float64(used) / float64(capacity) * 100
	maxB := int(math.Round(tune * 100))
	for b := 0; b <= maxB; b++ {
		if cnt[b] > 0 {
			run.Points = append(run.Points, Point{ArrivedPct: b, AllocPct: sum[b] / float64(cnt[b])})
			continue
		}
		// An empty bucket (a large pod jumped over it) takes its
		// neighbours, as the authors' analysis does.
		var s float64
		var c int
		for _, d := range []int{b - 1, b, b + 1} {
			s += sum[d]
			c += cnt[d]
		}
		if c > 0 {
			run.Points = append(run.Points, Point{ArrivedPct: b, AllocPct: s / float64(c)})
		}
	}
	return run
}

// Milestones are the arrived-GPU percentages the FGD paper's figure and
// table read off (its x axis ends at 130%).
var Milestones = []int{100, 110, 120, 130}

// PolicySummary is one policy over the seeds.
type PolicySummary struct {
	Name string `json:"name"`
	// At holds, per milestone, the mean allocation percent over the seeds
	// and the half-width of its 95% confidence interval (Student t).
	At []MilestoneStat `json:"alloc_pct"`
	// FailedPods is the mean number of pods that found no node.
	FailedPods float64 `json:"failed_pods_mean"`
	Pods       float64 `json:"pods_mean"`
}

// MilestoneStat is the allocation at one arrived percentage.
type MilestoneStat struct {
	ArrivedPct int      `json:"arrived_pct"`
	Mean       float64  `json:"mean"`
	CI95       *float64 `json:"ci95,omitempty"` // absent with one seed
	Seeds      int      `json:"seeds"`
}

// Summarize aggregates the runs per policy, in run order.
func Summarize(res *Result) []PolicySummary {
	var out []PolicySummary
	idx := map[string]int{}
	byPolicy := map[string][]Run{}
	for _, r := range res.Runs {
		if _, ok := idx[r.Policy]; !ok {
			idx[r.Policy] = len(out)
			out = append(out, PolicySummary{Name: r.Policy})
		}
		byPolicy[r.Policy] = append(byPolicy[r.Policy], r)
	}
	for k := range out {
		runs := byPolicy[out[k].Name]
		for _, m := range Milestones {
			var xs []float64
			for _, r := range runs {
				for _, p := range r.Points {
					if p.ArrivedPct == m {
						xs = append(xs, p.AllocPct)
					}
				}
			}
			if len(xs) == 0 {
				continue
			}
			st := MilestoneStat{ArrivedPct: m, Seeds: len(xs)}
			var hw float64
			st.Mean, hw = stats.MeanCI(xs, 0.95)
			if !math.IsNaN(hw) {
				st.CI95 = &hw
			}
			out[k].At = append(out[k].At, st)
		}
		var failed, pods int
		for _, r := range runs {
			failed += r.Failed
			pods += r.Pods
		}
		out[k].FailedPods = float64(failed) / float64(len(runs))
		out[k].Pods = float64(pods) / float64(len(runs))
	}
	return out
}

// CSV writes allocation.csv: policy, arrived_pct, alloc_pct (the mean over
// the seeds that reached that percentage), one row per policy and arrived
// percentage from 0, policies in run order.
func CSV(res *Result) []byte {
	var b strings.Builder
	b.WriteString("policy,arrived_pct,alloc_pct\n")
	var order []string
	sum := map[string]map[int]float64{}
	cnt := map[string]map[int]int{}
	for _, r := range res.Runs {
		if sum[r.Policy] == nil {
			order = append(order, r.Policy)
			sum[r.Policy], cnt[r.Policy] = map[int]float64{}, map[int]int{}
		}
		for _, p := range r.Points {
			sum[r.Policy][p.ArrivedPct] += p.AllocPct
			cnt[r.Policy][p.ArrivedPct]++
		}
	}
	for _, pol := range order {
		keys := make([]int, 0, len(cnt[pol]))
		for k := range cnt[pol] {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "%s,%d,%.4f\n", pol, k, sum[pol][k]/float64(cnt[pol][k]))
		}
	}
	return []byte(b.String())
}
