package cluster

import (
	"container/heap"
	"slices"

	"github.com/conspirator-sim/conspirator/engine/stats"
)

// kindTally is what one replay counts of one kind of job.
type kindTally struct {
	jobs, completed, censored, neverRan int
	firstNever                          string // the first job that never ran, for the message
	jct, queue                          stats.Tally
	held                                float64 // GPU-seconds of shares
}

// KindResult is one kind of job under one policy (PolicyResult.ByKind):
// counts per run, and times over the jobs that completed (JCT) or started
// (queue). A censored job (still running when the trace ended) holds its
// placement for the time the trace recorded and has no JCT. Held is the GPU time the kind's tasks
// held, in GPU-hours of their shares (gpu_hours_fractional split by
// kind); GPU-hours proper count a GPU once whatever holds it and are not
// split.
type KindResult struct {
	Kind         string  `json:"kind"`
	Jobs         float64 `json:"jobs"`
	Completed    float64 `json:"completed"`
	Censored     float64 `json:"censored"`
	Unscheduled  float64 `json:"unscheduled"`
	HeldGPUHours float64 `json:"held_gpu_hours"`
	JCT          Summary `json:"jct_s"`
	Queue        Summary `json:"queue_s"`
	// FirstUnscheduled names the first job of the kind that no GPU of the
	// cluster can run (a service that needs more than a whole GPU of
	// every type it may use), with its trace row.
	FirstUnscheduled string `json:"first_unscheduled,omitempty"`
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// kindResults is the run's ByKind: the kinds that have jobs, batch first.
func (r *run) kindResults() []KindResult {
	var out []KindResult
	for k, name := range []string{KindBatch, KindService} {
		kt := &r.kinds[k]
		if kt.jobs == 0 {
			continue
		}
		unfinished := 0
		for _, j := range r.alive {
			if btoi(r.live[j].plan.service) == k {
				unfinished++
			}
		}
		out = append(out, KindResult{Kind: name, Jobs: float64(kt.jobs), Completed: float64(kt.completed),
			Censored: float64(kt.censored), Unscheduled: float64(kt.neverRan + unfinished),
			HeldGPUHours: kt.held / 3600, JCT: summarize(&kt.jct), Queue: summarize(&kt.queue),
			FirstUnscheduled: kt.firstNever})
	}
	return out
}

// topHeld keeps the total GPU time the jobs held and the largest ten.
type topHeld struct {
	total float64
	top   minHeap
}

// add counts one finished (or never finished) job's held GPU-seconds.
func (t *topHeld) add(held float64, kt *kindTally) {
	t.total += held
	kt.held += held
	if len(t.top) < 10 {
		heap.Push(&t.top, held)
	} else if held > t.top[0] {
		t.top[0] = held
		heap.Fix(&t.top, 0)
	}
}

// top10Share is the ten largest jobs' share of the GPU time held (0..1);
// 0 when none was held.
func (t *topHeld) top10Share() float64 {
	if !(t.total > 0) {
		return 0
	}
	v := slices.Clone([]float64(t.top))
	slices.Sort(v) // a fixed order of addition: the same bytes every run
	var s float64
	for _, x := range v {
		s += x
	}
	return s / t.total
}

type minHeap []float64

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
