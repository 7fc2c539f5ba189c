package llmserve

import (
	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/llm"
)

// Scheduler names.
const (
	// SchedulerV1 is vLLM v1's scheduler: every step fills a token budget
	// with decodes and prefill chunks together (chunked prefill on).
	SchedulerV1 = "vllm-v1"
	// SchedulerV0 is vLLM v0's default scheduler: a step runs either
	// prefills (whole prompts up to the budget) or decodes, prefills first;
	// no chunked prefill.
	SchedulerV0 = "vllm-v0"
)

// Preemption modes.
const (
	// PreemptRecompute frees a preempted request's blocks; it goes back to
	// the head of the waiting queue and recomputes its prompt and the
	// tokens it had generated.
	PreemptRecompute = "recompute"
	// PreemptSwap copies a preempted request's blocks to host memory over
	// the host link and back when it resumes (vLLM v0 only).
	PreemptSwap = "swap"
)

// Router policies.
const (
	RouterRoundRobin  = "round-robin"
	RouterLeastTokens = "least-outstanding-tokens"
	// RouterPrefix sends a request to the replica with the longest cached
	// prefix of its prompt (its home), ties to the fewest outstanding
	// tokens, unless the home is too far ahead of the least-loaded
	// replica (Plan.RouterBalanceAbs and RouterBalanceRel): then to that
	// one, as SGLang's cache-aware router does.
	RouterPrefix = "prefix-aware"
)

// Queue orders.
const (
	PriorityFCFS = "fcfs"
	// PriorityShortest serves the shortest prompt first (ties by arrival).
	PriorityShortest = "priority"
)

// Plan is a resolved llm section: everything the model reads, resolved once.
type Plan struct {
	Model     llm.Model
	Placement llm.Placement  // GPU, TP, optional MIG slice
	Eff       llm.Efficiency // llm.FittedEfficiency(gpu) unless overridden
	Replicas  int
	Scheduler string // SchedulerV1 ("vllm-v1") | SchedulerV0 ("vllm-v0")
	// MaxBatchedTokens is vLLM's max_num_batched_tokens: the token budget
	// of one step.
	MaxBatchedTokens int
	MaxSeqs          int // vLLM max_num_seqs
	BlockSize        int // tokens per KV block (16)
	// KVBlocks is each replica's KV capacity in blocks; 0: from the GPU's
	// (slice's) memory: (memory x GPUMemoryUtilization - weights/TP -
	// activation reserve) / (block bytes per GPU).
	KVBlocks             int
	GPUMemoryUtilization float64 // 0.9
	Preemption           string  // PreemptRecompute ("recompute") | PreemptSwap ("swap", v0 only)
	HostLinkBytesPerSec  float64 // swap's bytes over the host link (PCIe), for swap
	PrefixCaching        bool
	Router               string // RouterRoundRobin | RouterLeastTokens | RouterPrefix
	// RouterBalanceAbs and RouterBalanceRel are RouterPrefix's fall-back
	// to load: a request goes to the replica with the fewest outstanding
	// tokens instead of its home when the home's outstanding tokens
	// exceed that replica's by more than RouterBalanceAbs and by more
	// than the factor RouterBalanceRel (>= 1). RouterBalanceAbs 0: no
	// fall-back.
	RouterBalanceAbs int64
	RouterBalanceRel float64
	// MaxOutstanding is the admission limit across the cluster: requests
	// in the system; 0: none. A request arriving past it is rejected and
	// counted.
	MaxOutstanding int
	Priority       string // "fcfs" | "priority" (priority: shorter prompt first)
	SLO            SLO
	SampleEvery    engine.Time // KV use and batch size sampled this often (0: every step)
	// Disagg, when set, serves with a prefill and a decode pool (its own
	// plans) instead of Replicas of Placement.
	Disagg *DisaggPlan
	// Control, when set, times each step's CPU work and where it runs
	// (Eff's per-step fixed costs are then 0).
	Control *ControlPlane
	// Fetch, when set, is the KV store behind the prefix caches.
	Fetch *PrefixFetch
}

// SLO is a service-level objective on time to first token and time per
// output token, each met at or below its bound.
type SLO struct {
	TTFT, TPOT engine.Time
	Quantile   float64 // 0.9
}

// RequestRecord is one request's outcome. Times in engine.Time (ns) from
// the trace's start.
type RequestRecord struct {
	ID, Replica int
	// FirstToken is the end of the step that produced the first output
	// token; FirstScheduled the start of the first step that ran any of
	// the request's work.
	Arrival, FirstScheduled, FirstToken, Finish engine.Time
	// CachedTokens are prompt tokens served without recompute, from the
	// prefix cache or fetched into it (FetchedTokens of them) (at the
	// first scheduling).
	PromptTokens, OutputTokens, CachedTokens int
	// FetchedTokens are prompt tokens fetched from the KV store (waited
	// for before the first scheduling).
	FetchedTokens int
	Preemptions   int
	Rejected      bool // refused by the admission limit
}

// TTFT is the time to the first output token.
func (r RequestRecord) TTFT() engine.Time { return r.FirstToken - r.Arrival }

// TPOT is the mean time per output token after the first (0 for one
// output token).
func (r RequestRecord) TPOT() engine.Time {
	if r.OutputTokens <= 1 {
		return 0
	}
	return (r.Finish - r.FirstToken) / engine.Time(r.OutputTokens-1)
}

// E2E is the time from arrival to the last output token.
func (r RequestRecord) E2E() engine.Time { return r.Finish - r.Arrival }

// Queue is the time from arrival to the first step that ran its work.
func (r RequestRecord) Queue() engine.Time { return r.FirstScheduled - r.Arrival }

// Sample is one replica's state at the start of a step: every step's
// when Plan.SampleEvery is 0, else the first step at or after each
// multiple of it. An idle replica takes none (it holds no request then).
// KVUsed and Running are as the step was scheduled (its blocks allocated).
type Sample struct {
	T       engine.Time
	Replica int
	KVUsed  float64 // fraction of blocks held by running requests
	Running int
	Waiting int
}

// Result is what Simulate returns.
type Result struct {
	Requests []RequestRecord
	Samples  []Sample
	Summary  Summary
	// Steps is the iterations all replicas ran; Events the arrivals
	// processed, the run's only events (replicas run their steps in loops
	// between arrivals: no event per step or token).
	Steps       int64
	Events      int64
	Preemptions int
	Rejected    int
	// GeneratedTokens is the output tokens the replicas sampled: the sum
	// of OutputTokens over the admitted requests once all finish.
	GeneratedTokens int64
	// Notes say what the run did that a reader must know.
	Notes []string
	// Disagg is the KV transfers of a disaggregated run (nil otherwise).
	Disagg *DisaggStats
}

// Quantiles summarise a distribution.
type Quantiles struct{ Mean, P50, P90, P99 float64 }

// Summary is the run's aggregate figures.
type Summary struct {
	TTFT, TPOT, ITL, E2E, Queue Quantiles // seconds
	Completed, Rejected         int
	// Rates over the span first arrival .. last finish.
	RequestsPerSec, OutputTokensPerSec, TokensPerSec float64
	// Goodput is the requests meeting both SLOs (TTFT and TPOT each at
	// or below its bound) per second of the arrivals' span, first
	// arrival .. last (the offered rate's span): the offered rate times
	// the share of arrivals meeting the SLO. Where all arrive at once it
	// is over first arrival .. last finish, and a note says so.
	Goodput       float64
	SLOAttainment float64 // share of requests meeting both; a refused one counts as a miss
	// PrefixHitShare is the share of the completed requests' prompt
	// tokens served without recompute (from the prefix cache, or fetched
	// into it); FetchedShare the part of them fetched from the KV store.
	PrefixHitShare, FetchedShare float64
	MeanBatch                    float64
	MeanKVUsed                   float64
	PeakKVUsed                   float64
	Preemptions                  int
}
