package llmserve

import (
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/llm"
	wllm "github.com/conspirator-sim/conspirator/workloads/llm"
)

// testPlan is Llama-3.1-8B on one H100-80GB with vLLM v1's defaults.
func testPlan(t testing.TB) Plan {
	t.Helper()
	m, err := llm.Lookup("llama-3.1-8b")
	if err != nil {
		t.Fatal(err)
	}
	g, err := gpu.Lookup("h100-80gb")
	if err != nil {
		t.Fatal(err)
	}
	eff, err := llm.FittedEfficiency(g)
	if err != nil {
		t.Fatal(err)
	}
	return Plan{Model: m, Placement: llm.Placement{GPU: g, TP: 1}, Eff: eff, Replicas: 1,
		Scheduler: SchedulerV1, MaxBatchedTokens: 8192, MaxSeqs: 256, BlockSize: 16,
		GPUMemoryUtilization: 0.9, Preemption: PreemptRecompute, HostLinkBytesPerSec: 64e9,
		Router: RouterRoundRobin, Priority: PriorityFCFS}
}

// stepTime is llm.Step's time for b, in ns as the model rounds it.
func stepTime(t testing.TB, p Plan, b llm.Batch) engine.Time {
	t.Helper()
	st, err := llm.Step(p.Model, p.Placement, b, p.Eff)
	if err != nil {
		t.Fatal(err)
	}
	return engine.Seconds(st.Seconds)
}

// req is a trace request; traces number them in order.
type req struct {
	at             engine.Time
	prompt, output int
	hashes         []uint64
}

func trace(rs ...req) wllm.Trace {
	tr := wllm.Trace{Name: "test", Format: "synthetic"}
	for i, r := range rs {
		tr.Requests = append(tr.Requests, wllm.Request{ID: i, Arrival: r.at, PromptTokens: r.prompt, OutputTokens: r.output, BlockHashes: r.hashes})
		if r.hashes != nil {
			tr.BlockTokens = wllm.MooncakeBlockTokens
		}
	}
	return tr
}

// stepLog is what a test sees of each step as it starts.
type stepLog struct {
	replica         int
	start, end      engine.Time
	prefill, decode int // chunks and decodes
	tokens, seqs    int
	held, total     int
	preemptions     int // cluster total so far
}

// simulate runs Simulate with a step hook that checks the invariants on
// every step and logs the steps.
func simulate(t testing.TB, p Plan, tr wllm.Trace) (*Result, []stepLog) {
	t.Helper()
	c, err := newCluster(p, tr)
	if err != nil {
		t.Fatal(err)
	}
	var log []stepLog
	c.stepHook = func(r *replica) {
		checkStep(t, r)
		l := stepLog{replica: r.id, start: r.start, end: r.end, prefill: len(r.lb.Prefill), decode: len(r.lb.Decode),
			tokens: r.lb.Tokens(), seqs: len(r.batch), held: r.kv.held, total: r.kv.total, preemptions: r.c.preemptions}
		log = append(log, l)
	}
	res, err := c.run(tr)
	if err != nil {
		t.Fatal(err)
	}
	return res, log
}

// checkStamp marks the cache entries seen in one checkStep call.
var (
	checkStamp []int
	checkGen   int
)

// checkStep is the invariant checker: the budget and max_num_seqs hold,
// the blocks held match the requests' and stay within capacity, every
// running request holds the blocks its tokens need, and under v0 a step
// is prefill-only or decode-only.
func checkStep(t testing.TB, r *replica) {
	t.Helper()
	p := r.c.p
	tokens := r.lb.Tokens()
	if tokens > p.MaxBatchedTokens && !(p.Scheduler == SchedulerV0 && len(r.batch) == 1) {
		t.Fatalf("replica %d step at %s: %d tokens over the budget %d", r.id, r.start, tokens, p.MaxBatchedTokens)
	}
	if len(r.running) > p.MaxSeqs || len(r.batch) > p.MaxSeqs {
		t.Fatalf("replica %d step at %s: %d running, %d scheduled, over max_num_seqs %d", r.id, r.start, len(r.running), len(r.batch), p.MaxSeqs)
	}
	held := 0
	for _, q := range r.running {
		held += q.blocks()
		if need := r.blocksFor(q.computed + q.sched); q.blocks() < need {
			t.Fatalf("replica %d: request %d holds %d blocks, needs %d", r.id, q.rec.ID, q.blocks(), need)
		}
	}
	// Cached blocks are counted once however many requests hold them.
	checkGen++
	if len(checkStamp) < len(r.kv.entries) {
		checkStamp = make([]int, 2*len(r.kv.entries))
	}
	dup := 0
	for _, q := range r.running {
		for _, e := range q.shared {
			if checkStamp[e] == checkGen {
				dup++
			}
			checkStamp[e] = checkGen
		}
	}
	if held-dup != r.kv.held || r.kv.held > r.kv.total || r.kv.free < 0 || r.kv.held+r.kv.free+r.kv.evictable != r.kv.total {
		t.Fatalf("replica %d: blocks held %d (requests %d), free %d, evictable %d, total %d", r.id, r.kv.held, held-dup, r.kv.free, r.kv.evictable, r.kv.total)
	}
	if p.Scheduler == SchedulerV0 && len(r.lb.Prefill) > 0 && len(r.lb.Decode) > 0 {
		t.Fatalf("replica %d v0 step at %s mixes %d prefills and %d decodes", r.id, r.start, len(r.lb.Prefill), len(r.lb.Decode))
	}
}
