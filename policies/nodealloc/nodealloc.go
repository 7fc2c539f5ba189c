// Package nodealloc holds the node-level GPU-sharing schedulers of the FGD
// paper (Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing
// Workloads with Fragmentation Gradient Descent", USENIX ATC'23) as its
// authors' simulator defines them (hkust-adsl/kubernetes-scheduler-simulator,
// pkg/simulator/plugin and pkg/utils/frag.go): random, dot-product,
// gpu-clustering, gpu-packing, best-fit and fgd.
//
// A cluster here is servers (nodes) with CPU (milli-cores), memory (MiB) and
// GPUs of one model, each GPU shared in thousandths (milli). A pod asks for
// CPU, memory and either no GPU, a share of one GPU (gpu_milli < 1000) or
// num_gpu whole GPUs on one node (a gang). A policy scores every node that
// fits a pod; the scheduler takes the highest score, breaking ties uniformly
// at random as Kubernetes' selectHost does, and the policy then chooses the
// GPU devices on that node.
//
// Everything here is deterministic given the random stream it is handed:
// no I/O, no clock.
package nodealloc

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Milli is one whole GPU in GPU-milli.
const Milli = 1000

// The authors' normalisers for vector scores (open-gpu-share utils
// MaxSpecCpu, MaxSpecGpu): a 128-core, 8-GPU server.
const (
	maxSpecCPU = 128000
	maxSpecGPU = 8000
	maxScore   = 100 // Kubernetes framework.MaxNodeScore
)

// Node is one server and what is left of it.
type Node struct {
	Name    string
	Model   string // GPU type code of its GPUs ("" for a CPU-only node)
	CPU     int64  // milli-cores
	Mem     int64  // MiB
	CPULeft int64
	MemLeft int64
	GPULeft []int64 // GPU-milli left per device, by device index
	// affinity counts the GPU pods on the node per affinity tag
	// ("share-gpu", "1-gpu", "2-gpu", ...), for gpu-clustering.
	affinity map[string]int
}

// NewNode returns an empty node with n GPUs.
func NewNode(name, model string, cpu, mem int64, gpus int) Node {
	left := make([]int64, gpus)
	for i := range left {
		left[i] = Milli
	}
	return Node{Name: name, Model: model, CPU: cpu, Mem: mem, CPULeft: cpu, MemLeft: mem, GPULeft: left}
}

// GPULeftTotal is the GPU-milli left over all devices.
func (n *Node) GPULeftTotal() int64 {
	var s int64
	for _, v := range n.GPULeft {
		s += v
	}
	return s
}

// Pod is one pod's request.
type Pod struct {
	CPU      int64    // milli-cores
	Mem      int64    // MiB
	NumGPU   int      // 0 for a CPU-only pod
	GPUMilli int64    // per GPU, 1..1000; 0 when NumGPU is 0
	Types    []string // GPU types it may use; empty = any
}

// TotalGPUMilli is the pod's whole GPU request.
func (p *Pod) TotalGPUMilli() int64 { return p.GPUMilli * int64(p.NumGPU) }

// scoreCPU is the CPU the scorers see: Kubernetes counts a pod without a CPU
// request as 100 milli-cores (GetNonzeroRequests), the fit test does not.
func (p *Pod) scoreCPU() int64 {
	if p.CPU == 0 {
		return 100
	}
	return p.CPU
}

// affinityTag is the authors' GPU affinity of a pod (gpu-clustering).
func (p *Pod) affinityTag() string {
	switch {
	case p.GPUMilli == 0:
		return ""
	case p.NumGPU == 1 && p.GPUMilli < Milli:
		return "share-gpu"
	case p.NumGPU < len(gangTags):
		return gangTags[p.NumGPU]
	default:
		return fmt.Sprintf("%d-gpu", p.NumGPU)
	}
}

// gangTags are the affinity tags of whole-GPU pods, built once: the tag is
// asked for every node a pod is scored on.
var gangTags = func() []string {
	t := make([]string, 17)
	for i := range t {
		t[i] = fmt.Sprintf("%d-gpu", i)
	}
	return t
}()

// Accessible reports whether a pod that may use types can use a node of
// GPU model (authors' IsNodeAccessibleToPodByType): any node when types is
// empty, else a node of one of them.
func Accessible(model string, types []string) bool {
	if len(types) == 0 {
		return true
	}
	return model != "" && slices.Contains(types, model)
}

// hostsGPUs reports whether n has p.NumGPU devices with at least p.GPUMilli
// left each.
func hostsGPUs(n *Node, p *Pod) bool {
	need := p.NumGPU
	for _, v := range n.GPULeft {
		if v >= p.GPUMilli {
			need--
			if need <= 0 {
				return true
			}
		}
	}
	return false
}

// Fits reports whether p can run on n now: CPU and memory (Kubernetes'
// NodeResourcesFit) and, for a GPU pod, a GPU model it accepts with enough
// devices that have its share left (the authors' Open-Gpu-Share filter).
func Fits(n *Node, p *Pod) bool {
	if n.CPULeft < p.CPU || n.MemLeft < p.Mem {
		return false
	}
	if p.GPUMilli == 0 {
		return true
	}
	return len(n.GPULeft) > 0 && Accessible(n.Model, p.Types) && hostsGPUs(n, p)
}

// Place takes p's resources on n, on the given devices.
func Place(n *Node, p *Pod, gpus []int) {
	n.CPULeft -= p.CPU
	n.MemLeft -= p.Mem
	for _, g := range gpus {
		n.GPULeft[g] -= p.GPUMilli
	}
	if tag := p.affinityTag(); tag != "" {
		if n.affinity == nil {
			n.affinity = map[string]int{}
		}
		n.affinity[tag]++
	}
}

// Rand is the random source a policy may draw from (ties, random fit).
type Rand interface {
	IntN(n int) int
}

// Policy scores the nodes that fit a pod and picks its GPU devices on the
// chosen node. Score and GPUs are only called for nodes where Fits holds.
// A policy keeps no state between pods beyond what SetWorkload gives it.
type Policy interface {
	Name() string
	// Score rates node n for pod p, higher is better.
	Score(n *Node, p *Pod) int64
	// Normalize says whether the scores of one pod are rescaled to 0..100
	// over the fitting nodes (min-max, integer), as best-fit's plugin does.
	Normalize() bool
	// GPUs returns the devices of n that p takes (nil for a CPU-only pod).
	GPUs(n *Node, p *Pod, r Rand) []int
}

// exclusiveGPUs returns the first p.NumGPU fully free devices in index
// order (authors' AllocateExclusiveGpuId).
func exclusiveGPUs(n *Node, p *Pod) []int {
	var out []int
	for i, v := range n.GPULeft {
		if len(out) == p.NumGPU {
			break
		}
		if v == Milli {
			out = append(out, i)
		}
	}
	return out
}

// bestFitGPUs: a shared pod goes to the device with the least left that
// fits it (the first such on ties), a whole-GPU pod to the first free
// devices (authors' allocateGpuIdBasedOnBestFit, gpuSelMethod "best").
func bestFitGPUs(n *Node, p *Pod, _ Rand) []int {
	if p.GPUMilli == 0 {
		return nil
	}
	if p.GPUMilli >= Milli {
		return exclusiveGPUs(n, p)
	}
	best := -1
	for i, v := range n.GPULeft {
		if v >= p.GPUMilli && (best < 0 || v < n.GPULeft[best]) {
			best = i
		}
	}
	return []int{best}
}

// randomFitGPUs: a shared pod goes to a device drawn uniformly among those
// that fit (authors' allocateGpuIdBasedOnRandomFit).
func randomFitGPUs(n *Node, p *Pod, r Rand) []int {
	if p.GPUMilli == 0 {
		return nil
	}
	if p.GPUMilli >= Milli {
		return exclusiveGPUs(n, p)
	}
	pick, seen := -1, 0
	for i, v := range n.GPULeft {
		if v >= p.GPUMilli {
			seen++
			if r.IntN(seen) == 0 {
				pick = i
			}
		}
	}
	return []int{pick}
}

// sub returns what is left of n after p, packed on the devices with the
// least left first (authors' NodeResource.Sub), and the devices used.
func sub(n *Node, p *Pod) (cpuLeft int64, left []int64) {
	left = slices.Clone(n.GPULeft)
	cpuLeft = n.CPULeft - p.scoreCPU()
	if p.NumGPU == 0 || p.GPUMilli == 0 {
		return cpuLeft, left
	}
	idx := make([]int, len(left))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return left[idx[a]] < left[idx[b]] })
	need := p.NumGPU
	for _, i := range idx {
		if p.GPUMilli <= left[i] {
			left[i] -= p.GPUMilli
			need--
			if need == 0 {
				break
			}
		}
	}
	return cpuLeft, left
}

// Names lists the policies: the FGD paper's six in its order, then this
// project's heuristic.
func Names() []string {
	return []string{"random", "dot-product", "gpu-clustering", "gpu-packing", "best-fit", "fgd", "conspirator"}
}

// New returns the policy called name; fgd needs the typical pods of the
// workload (Typical).
func New(name string, typical []TypicalPod) (Policy, error) {
	switch name {
	case "random":
		return random{}, nil
	case "dot-product":
		return dotProduct{}, nil
	case "gpu-clustering":
		return gpuClustering{}, nil
	case "gpu-packing":
		return gpuPacking{}, nil
	case "best-fit":
		return bestFit{}, nil
	case "conspirator":
		return heuristic{}, nil
	case "fgd":
		if len(typical) == 0 {
			return nil, fmt.Errorf("fgd needs the workload's typical pods; none given")
		}
		return &fgd{typical: typical, memo: map[fgdKey]int64{}}, nil
	}
	return nil, fmt.Errorf("unknown node-allocation policy %q; known: %s", name, strings.Join(Names(), ", "))
}

// random: every fitting node scores the same, so the scheduler's tie-break
// picks one uniformly (the authors' RandomScore gives one node, drawn
// uniformly among the fitting ones, the top score); random device.
type random struct{}

func (random) Name() string                           { return "random" }
func (random) Score(*Node, *Pod) int64                { return 0 }
func (random) Normalize() bool                        { return false }
func (random) GPUs(n *Node, p *Pod, r Rand) []int     { return randomFitGPUs(n, p, r) }
func (dotProduct) GPUs(n *Node, p *Pod, r Rand) []int { return bestFitGPUs(n, p, r) }

// dotProduct: 1 - the dot product of the node's free (CPU, total GPU) and
// the pod's request, both over (128 cores, 8 GPUs), halved (authors'
// DotProductScore with dimExtMethod "merge" and normMethod "max"): the
// node that the pod's shape leaves most unbalanced scores highest.
type dotProduct struct{}

func (dotProduct) Name() string    { return "dot-product" }
func (dotProduct) Normalize() bool { return false }
func (dotProduct) Score(n *Node, p *Pod) int64 {
	cpu := p.scoreCPU()
	if n.CPULeft < cpu {
		return 0
	}
	dot := float64(n.CPULeft)/maxSpecCPU*float64(cpu)/maxSpecCPU +
		float64(n.GPULeftTotal())/maxSpecGPU*float64(p.TotalGPUMilli())/maxSpecGPU
	return int64(maxScore * (1 - dot/2))
}

// gpuClustering prefers nodes whose GPU pods share the pod's affinity tag
// (authors' GpuClusteringScore): 75-100 when the node holds only that tag,
// 50-75 with others besides, 25-50 for a node without GPU pods, 0-25
// otherwise, each band rising with the GPU-milli in use; 0 for CPU pods.
type gpuClustering struct{}

func (gpuClustering) Name() string                       { return "gpu-clustering" }
func (gpuClustering) Normalize() bool                    { return false }
func (gpuClustering) GPUs(n *Node, p *Pod, r Rand) []int { return bestFitGPUs(n, p, r) }
func (gpuClustering) Score(n *Node, p *Pod) int64 {
	tag := p.affinityTag()
	if tag == "" {
		return 0
	}
	used := maxScore / 4 * (maxSpecGPU - n.GPULeftTotal()) / maxSpecGPU
	switch {
	case n.affinity[tag] > 0 && len(n.affinity) == 1:
		return used + maxScore*3/4
	case n.affinity[tag] > 0:
		return used + maxScore*2/4
	case len(n.affinity) == 0:
		return used + maxScore/4
	default:
		return used
	}
}

// gpuPacking (authors' GpuPackingScore): prefer a device already shared,
// the fuller the better (50-100), then nodes with some GPUs in use that
// would take free devices (33-50), then empty nodes (0-33); 0 for CPU
// pods.
type gpuPacking struct{}

func (gpuPacking) Name() string                       { return "gpu-packing" }
func (gpuPacking) Normalize() bool                    { return false }
func (gpuPacking) GPUs(n *Node, p *Pod, r Rand) []int { return bestFitGPUs(n, p, r) }
func (gpuPacking) Score(n *Node, p *Pod) int64 {
	if p.GPUMilli <= 0 {
		return 0
	}
	free := 0
	for _, v := range n.GPULeft {
		if v == Milli {
			free++
		}
	}
	if free == len(n.GPULeft) {
		return max(maxScore/3-int64(free), int64(free))
	}
	idx := make([]int, len(n.GPULeft))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return n.GPULeft[idx[a]] < n.GPULeft[idx[b]] })
	need, freeUsed := p.NumGPU, 0
	var used []int
	for _, i := range idx {
		if need == 0 {
			break
		}
		if v := n.GPULeft[i]; p.GPUMilli <= v {
			need--
			used = append(used, i)
			if v == Milli {
				freeUsed++
			}
		}
	}
	if freeUsed > 0 {
		return max(maxScore/2-int64(freeUsed), maxScore/3)
	}
	var freeOnUsed int64
	for _, i := range used {
		freeOnUsed += n.GPULeft[i] * 100 / Milli
	}
	return max(maxScore-freeOnUsed/10, maxScore/2)
}

// bestFit: the node left with the least free (CPU, total GPU), each over
// its 128-core / 8-GPU normaliser and weighted 1/2, scores highest; scores
// are rescaled to 0..100 over the fitting nodes (authors' BestFitScore).
type bestFit struct{}

func (bestFit) Name() string                       { return "best-fit" }
func (bestFit) Normalize() bool                    { return true }
func (bestFit) GPUs(n *Node, p *Pod, r Rand) []int { return bestFitGPUs(n, p, r) }
func (bestFit) Score(n *Node, p *Pod) int64 {
	free := float64(n.CPULeft-p.scoreCPU())/maxSpecCPU*0.5 + float64(n.GPULeftTotal()-p.TotalGPUMilli())/maxSpecGPU*0.5
	return int64((1 - free) * maxScore)
}

// Normalized rescales scores to 0..100 (Kubernetes-style min-max with
// integer arithmetic, authors' NormalizeScore); all equal gives all 0.
func Normalized(scores []int64) {
	if len(scores) == 0 {
		return
	}
	lo, hi := slices.Min(scores), slices.Max(scores)
	for i, s := range scores {
		if hi == lo {
			scores[i] = 0
		} else {
			scores[i] = (s - lo) * maxScore / (hi - lo)
		}
	}
}

// TypicalPod is one pod shape of the workload and its share of the pods.
type TypicalPod struct {
	Pod  Pod
	Freq float64 // 0..1; the typical pods' Freq sum to 1
}

// typicalKey is a pod shape as the authors group them: CPU (as scored),
// GPU milli, GPU count and the GPU types joined.
type typicalKey struct {
	cpu, milli int64
	num        int
	types      string
}

// compare orders shapes as the authors' PodResource.Less: CPU, GPU milli,
// GPU count, types.
func (k typicalKey) compare(o typicalKey) int {
	return cmp.Or(cmp.Compare(k.cpu, o.cpu), cmp.Compare(k.milli, o.milli), cmp.Compare(k.num, o.num), cmp.Compare(k.types, o.types))
}

// Typical returns the most frequent pod shapes that together make up at
// least threshold percent of pods (CPU-only pods included), their
// frequencies renormalised to sum to 1 (authors' GetTypicalPods with
// IsInvolvedCpuPods, PodPopularityThreshold 95, PodIncreaseStep 1). Shapes
// are ordered by count, then by shape, both descending, as the authors'
// sort.Reverse does.
func Typical(pods []Pod, threshold float64) []TypicalPod {
	count := map[typicalKey]float64{}
	for _, p := range pods {
		count[typicalKey{p.scoreCPU(), p.GPUMilli, p.NumGPU, strings.Join(p.Types, "|")}]++
	}
	keys := make([]typicalKey, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b typicalKey) int {
		return cmp.Or(cmp.Compare(count[b], count[a]), b.compare(a))
	})
	total := float64(len(pods))
	var out []TypicalPod
	cum := 0.0
	for _, k := range keys {
		if cum >= threshold/100*total {
			break
		}
		cum += count[k]
		var types []string
		if k.types != "" {
			types = strings.Split(k.types, "|")
		}
		out = append(out, TypicalPod{Pod: Pod{CPU: k.cpu, NumGPU: k.num, GPUMilli: k.milli, Types: types}, Freq: count[k]})
	}
	for i := range out {
		out[i].Freq /= cum
	}
	return out
}

// fgd is Fragmentation Gradient Descent: place the pod where the node's
// expected GPU fragmentation (against the typical pods) grows least; the
// score is sigmoid of the decrease over 1000, times 100 (authors'
// FGDScore). A shared pod is tried on every device that fits it and
// placed on the best; a whole-GPU pod packs on the devices with the least
// left.
type fgd struct {
	typical []TypicalPod
	// memo holds scores by (pod shape, node state): the score depends only
	// on the node's model, CPU left and the multiset of its devices' GPU
	// left, and most nodes of a cluster share a few such states, so a
	// decision computes few fragmentation sums (this made a 10,866-pod run
	// about 30x faster).
	memo map[fgdKey]int64
}

// fgdKey is a node state and a pod shape; gpus holds the node's GPU left,
// sorted, for nodes of at most 8 GPUs (larger ones are not memoised).
type fgdKey struct {
	model, types string
	cpuLeft      int64
	gpus         [8]int64
	n            int
	cpu, milli   int64
	num          int
}

func (*fgd) Name() string    { return "fgd" }
func (*fgd) Normalize() bool { return false }

func (f *fgd) Score(n *Node, p *Pod) int64 {
	if len(n.GPULeft) > 8 {
		s, _ := f.best(n, p)
		return s
	}
	k := fgdKey{model: n.Model, cpuLeft: n.CPULeft, n: len(n.GPULeft), cpu: p.CPU, milli: p.GPUMilli, num: p.NumGPU}
	if len(p.Types) > 0 {
		k.types = strings.Join(p.Types, "|")
	}
	copy(k.gpus[:], n.GPULeft)
	slices.Sort(k.gpus[:k.n])
	if s, ok := f.memo[k]; ok {
		return s
	}
	s, _ := f.best(n, p)
	if len(f.memo) >= 1<<20 {
		clear(f.memo) // bound the memory of very long runs
	}
	f.memo[k] = s
	return s
}

func (f *fgd) GPUs(n *Node, p *Pod, _ Rand) []int {
	if p.GPUMilli == 0 {
		return nil
	}
	if p.NumGPU == 1 && p.GPUMilli < Milli {
		_, g := f.best(n, p)
		return []int{g}
	}
	return exclusiveGPUs(n, p)
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// best returns the FGD score of p on n and, for a shared pod, the device
// that gives it (the first on ties).
func (f *fgd) best(n *Node, p *Pod) (int64, int) {
	before := f.frag(n.Model, n.CPULeft, n.GPULeft)
	if p.NumGPU == 1 && p.GPUMilli < Milli {
		score, dev := int64(0), -1
		left := slices.Clone(n.GPULeft)
		cpu := n.CPULeft - p.scoreCPU()
		for i, v := range n.GPULeft {
			if v < p.GPUMilli {
				continue
			}
			left[i] = v - p.GPUMilli
			s := int64(sigmoid((before-f.frag(n.Model, cpu, left))/1000) * maxScore)
			left[i] = v
			if dev < 0 || s > score {
				score, dev = s, i
			}
		}
		return score, dev
	}
	cpu, left := sub(n, p)
	return int64(sigmoid((before-f.frag(n.Model, cpu, left))/1000) * maxScore), -1
}

// frag is the node's expected GPU fragment in GPU-milli against the typical
// pods (authors' NodeGpuShareFragAmountScore): for each typical pod, weighted
// by its frequency, the idle GPU-milli it could not use: all of it when the
// node cannot host the pod (wrong model, too little CPU, too few devices
// with its share left, or a CPU-only pod, which uses no GPU), otherwise the
// devices with less than its share left.
func (f *fgd) frag(model string, cpuLeft int64, left []int64) float64 {
	var total int64
	for _, v := range left {
		total += v
	}
	var out float64
	for _, t := range f.typical {
		q := &t.Pod
		if q.GPUMilli == 0 || !Accessible(model, q.Types) || cpuLeft < q.CPU {
			out += t.Freq * float64(total)
			continue
		}
		need := q.NumGPU
		var small int64
		for _, v := range left {
			if v >= q.GPUMilli {
				need--
			} else {
				small += v
			}
		}
		if need > 0 {
			out += t.Freq * float64(total) // lacks GPU
		} else {
			out += t.Freq * float64(small)
		}
	}
	return out
}

// heuristic is the placement rule of the Conspirator heuristic
// (policies/conspirator, step 2) on servers with shared GPUs: the GPU time
// a pod costs, with a GPU already in use charged for the pod's share only
// and an empty GPU charged whole (open_cost 1), lowest first; then best fit
// (the least GPU-milli left on the server after the pod). Here pods never
// leave, so the heuristic's consolidation by migration (step 3) has
// nothing to do, and there is no MIG. Like the heuristic it is blind to
// CPU and memory; a CPU-only pod costs no GPU and goes to the server it
// leaves the least CPU on.
type heuristic struct{}

func (heuristic) Name() string    { return "conspirator" }
func (heuristic) Normalize() bool { return false }

// Score is -(cost x 10^5 + GPU-milli left after), both in GPU-milli, so
// that a higher score is a lower cost, then a tighter fit.
func (h heuristic) Score(n *Node, p *Pod) int64 {
	if p.GPUMilli == 0 {
		return -(n.CPULeft - p.CPU)
	}
	cost, _ := h.best(n, p)
	return -(cost*100000 + n.GPULeftTotal() - p.TotalGPUMilli())
}

func (h heuristic) GPUs(n *Node, p *Pod, _ Rand) []int {
	if p.GPUMilli == 0 {
		return nil
	}
	if p.NumGPU == 1 && p.GPUMilli < Milli {
		_, d := h.best(n, p)
		return []int{d}
	}
	return exclusiveGPUs(n, p)
}

// best returns the GPU-milli cost of p on n and, for a shared pod, the
// device: one in use (cost = the share) before an empty one (a whole GPU),
// then the one with the least left (best fit), then the lowest index.
func (heuristic) best(n *Node, p *Pod) (cost int64, dev int) {
	if p.NumGPU != 1 || p.GPUMilli >= Milli {
		return int64(p.NumGPU) * Milli, -1
	}
	dev = -1
	for i, v := range n.GPULeft {
		if v < p.GPUMilli {
			continue
		}
		c := p.GPUMilli
		if v == Milli {
			c = Milli
		}
		if dev < 0 || c < cost || c == cost && v < n.GPULeft[dev] {
			cost, dev = c, i
		}
	}
	return cost, dev
}
