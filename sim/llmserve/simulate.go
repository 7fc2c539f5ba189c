package llmserve

import (
	"container/heap"
	"errors"
	"fmt"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/llm"
	wllm "github.com/conspirator-sim/conspirator/workloads/llm"
)

// cluster is the replicas behind the router, and what the run records.
type cluster struct {
	p        Plan
	replicas []*replica
	caching  bool
	perTrace int // BlockSize blocks per trace hash block

	// pools are the GPU pools the replicas run on: one, or with
	// prefill/decode disaggregation a prefill and a decode pool.
	pools []*pool
	pd    *pd // the disaggregated run, or nil

	// The KV store of prefix fetches: every prompt block hash seen, the
	// requests waiting for theirs, and what was fetched.
	store        map[uint64]bool
	fetching     fetchHeap
	fetches      int
	fetchSkipped int
	fetchBytes   float64
	fetchTime    float64 // seconds from each fetch's start to its KV landed
	fetchAlone   float64 // the same, each fetch timed alone
	fnet         *fetchNet
	err          error // a failure inside a callback, returned by run
	rr           int   // round-robin position
	inSystem     int   // admitted and not finished

	records      []RequestRecord
	itl          itlCounts
	outputTokens int64
	preemptions  int
	steps        int64
	batchSum     float64
	kvSum        float64
	kvPeak       float64
	samples      chunked[Sample]
	notes        []string
	noted        map[string]bool

	// stepHook, when set (tests), sees every step as scheduled.
	stepHook func(r *replica)
}

// Simulate replays trace tr on the cluster of plan p. Deterministic: the
// same plan and trace give the same result.
//
// The only events are the trace's arrivals, taken in order. Between two
// arrivals each replica runs its steps back to back in a loop: a step's
// batch is formed by the scheduler at its start, timed by llm.Step, and
// applied at its end, with no event per step. A replica's steps depend on
// nothing outside it except the requests routed to it, so running them
// up to the next arrival and then routing is exact; the router sees every
// replica as of the arrival's time.
//
// A request that cannot fit one replica's KV capacity even alone
// (ceil((prompt+output-1)/block size) blocks), or whose prompt exceeds the
// model's context, is refused with an error naming it; so is, under
// vllm-v0 (no chunked prefill), a prompt longer than max_num_batched_tokens.
func Simulate(p Plan, tr wllm.Trace) (*Result, error) {
	c, err := newCluster(p, tr)
	if err != nil {
		return nil, err
	}
	if c.pd != nil {
		return c.runPD(tr)
	}
	return c.run(tr)
}

func newCluster(p Plan, tr wllm.Trace) (*cluster, error) {
	if err := checkPlan(&p); err != nil {
		return nil, err
	}
	c := &cluster{p: p, noted: map[string]bool{}}
	var pl *pool
	if p.Disagg != nil {
		if err := c.addPDPools(); err != nil {
			return nil, err
		}
	} else {
		var err error
		if pl, err = newPool(p); err != nil {
			return nil, err
		}
		c.pools = []*pool{pl}
		c.p.KVBlocks = pl.p.KVBlocks
	}
	if p.PrefixCaching {
		switch {
		case tr.BlockTokens == 0:
			c.note("prefix caching on, but trace " + tr.Name + " has no block hashes: no request can hit the cache")
		case tr.BlockTokens%p.BlockSize != 0:
			c.note(fmt.Sprintf("prefix caching off: trace %s's %d-token hash blocks are not a multiple of the %d-token KV block, so its hashes cannot name KV blocks", tr.Name, tr.BlockTokens, p.BlockSize))
		default:
			c.caching = true
			c.perTrace = tr.BlockTokens / p.BlockSize
		}
	}
	for i := 0; pl != nil && i < c.p.Replicas; i++ {
		c.replicas = append(c.replicas, &replica{id: i, c: c, pl: pl, kv: newKVCache(pl.p.KVBlocks), waiting: waitQueue{priority: p.Priority == PriorityShortest}})
	}
	for _, q := range tr.Requests {
		if q.PromptTokens > p.Model.MaxContext {
			return nil, fmt.Errorf("llmserve: request %d: prompt of %d tokens exceeds %s's context of %d", q.ID, q.PromptTokens, p.Model.Name, p.Model.MaxContext)
		}
		if need := (q.PromptTokens + q.OutputTokens - 1 + p.BlockSize - 1) / p.BlockSize; need > c.p.KVBlocks {
			return nil, fmt.Errorf("llmserve: request %d: prompt %d + output %d tokens need %d KV blocks of %d tokens, more than a replica's %d; use a larger GPU, TP or gpu_memory_utilization, or drop the request",
				q.ID, q.PromptTokens, q.OutputTokens, need, p.BlockSize, c.p.KVBlocks)
		}
		if p.Scheduler == SchedulerV0 && q.PromptTokens > p.MaxBatchedTokens {
			return nil, fmt.Errorf("llmserve: request %d: prompt of %d tokens exceeds max_num_batched_tokens %d, and vllm-v0 (no chunked prefill) runs a prompt whole in one step; raise max_num_batched_tokens or use vllm-v1",
				q.ID, q.PromptTokens, p.MaxBatchedTokens)
		}
	}
	return c, nil
}

func checkPlan(p *Plan) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("llmserve: "+format, a...)) }
	if p.Replicas < 1 {
		bad("replicas %d; want at least 1", p.Replicas)
	}
	switch p.Scheduler {
	case SchedulerV1, SchedulerV0:
	default:
		bad("scheduler %q; want %s or %s", p.Scheduler, SchedulerV1, SchedulerV0)
	}
	if p.MaxBatchedTokens < 1 || p.MaxSeqs < 1 {
		bad("max_num_batched_tokens %d and max_num_seqs %d must be at least 1", p.MaxBatchedTokens, p.MaxSeqs)
	} else if p.MaxBatchedTokens < p.MaxSeqs {
		bad("max_num_batched_tokens %d < max_num_seqs %d: a step could not give each running request its decode token (vLLM refuses this too)", p.MaxBatchedTokens, p.MaxSeqs)
	}
	if p.BlockSize < 1 {
		bad("block size %d; want at least 1 (vLLM: 16)", p.BlockSize)
	}
	if p.KVBlocks < 0 {
		bad("kv blocks %d; want 0 (from memory) or more", p.KVBlocks)
	}
	switch p.Preemption {
	case PreemptRecompute:
	case PreemptSwap:
		if p.Scheduler != SchedulerV0 {
			bad("preemption swap is vLLM v0's; %s recomputes (use preemption recompute)", p.Scheduler)
		}
		if !(p.HostLinkBytesPerSec > 0) {
			bad("preemption swap needs the host link's bytes per second (> 0), got %g", p.HostLinkBytesPerSec)
		}
	default:
		bad("preemption %q; want %s or %s", p.Preemption, PreemptRecompute, PreemptSwap)
	}
	switch p.Router {
	case RouterRoundRobin, RouterLeastTokens, RouterPrefix:
	default:
		bad("router %q; want %s, %s or %s", p.Router, RouterRoundRobin, RouterLeastTokens, RouterPrefix)
	}
	switch p.Priority {
	case PriorityFCFS, PriorityShortest:
	default:
		bad("priority %q; want %s or %s", p.Priority, PriorityFCFS, PriorityShortest)
	}
	if p.RouterBalanceAbs < 0 || (p.RouterBalanceAbs > 0 && !(p.RouterBalanceRel >= 1)) {
		bad("router balance %d tokens and factor %v; want 0 tokens (no fall-back), or tokens above 0 and a factor of at least 1", p.RouterBalanceAbs, p.RouterBalanceRel)
	}
	if p.MaxOutstanding < 0 || p.SampleEvery < 0 {
		bad("max outstanding %d and sample interval %s must be >= 0", p.MaxOutstanding, p.SampleEvery)
	}
	return errors.Join(errs...)
}

// KVCapacity is a replica's KV blocks from its GPU's (or slice's) memory,
// as vLLM sizes its cache: memory x gpu_memory_utilization (0: 0.9), less
// the weights' share per GPU (weights/TP) and ActivationReserveBytes, over
// the bytes a block takes on one GPU. Simulate uses it when Plan.KVBlocks
// is 0.
func KVCapacity(p Plan) (int, error) {
	m, pl := p.Model, p.Placement
	if pl.TP < 1 || p.BlockSize < 1 {
		return 0, fmt.Errorf("llmserve: TP %d and block size %d must be at least 1", pl.TP, p.BlockSize)
	}
	mem := float64(pl.GPU.MemoryBytes)
	where := pl.GPU.Name
	if pl.Slice != nil {
		mem = float64(pl.Slice.MemoryBytes)
		where += " slice " + pl.Slice.Name
	}
	util := p.GPUMemoryUtilization
	if util == 0 {
		util = llm.MemoryUtilization
	}
	weights := float64(m.WeightBytes()) / float64(pl.TP)
	act := ActivationReserveBytes(m, pl.TP, p.MaxBatchedTokens, p.MaxSeqs)
	perBlock := float64(int64(p.BlockSize) * m.KVBytesPerTokenPerGPU(pl.TP))
	left := mem*util - weights - act
	n := int(left / perBlock)
	if n < 1 {
		return 0, fmt.Errorf("llmserve: %s at TP %d leaves no KV memory on %s: %.1f GB x %.2f - %.1f GB weights - %.2f GB activations = %.2f GB; use a larger TP, GPU or slice",
			m.Name, pl.TP, where, mem/1e9, util, weights/1e9, act/1e9, left/1e9)
	}
	return n, nil
}

func (c *cluster) note(s string) { c.notes = append(c.notes, s) }

// fail keeps the first error raised where it cannot be returned (a
// callback); the run returns it.
func (c *cluster) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

func (c *cluster) noteOnce(key, s string) {
	if !c.noted[key] {
		c.noted[key] = true
		c.note(s)
	}
}

// key is the prefix-cache key of q's k-th KV block.
func (c *cluster) key(q *request, k int) blockKey {
	return blockKey{hash: q.hashes[k/c.perTrace], sub: int32(k % c.perTrace)}
}

func (c *cluster) run(tr wllm.Trace) (*Result, error) {
	reqs := tr.Requests
	c.records = make([]RequestRecord, len(reqs))
	var events int64
	var kicked []*replica
	if c.p.Fetch != nil {
		c.store = map[uint64]bool{}
		var err error
		if c.fnet, err = newFetchNet(c.p.Fetch); err != nil {
			return nil, err
		}
	}
	for i := 0; i < len(reqs) || len(c.fetching) > 0 || c.fnet.busy(); {
		if c.itl.over {
			return nil, ErrTooManyGaps
		}
		if c.err != nil {
			return nil, c.err
		}
		// The next event: an arrival, a fetch network's event, or a
		// fetch's end (at the same time, the fetch first: the request was
		// there before the arrival).
		t := engine.MaxTime
		if i < len(reqs) {
			t = reqs[i].Arrival
		}
		if ft, ok := c.fnet.next(); ok && ft < t {
			t = ft
		}
		if ft, ok := c.nextFetch(); ok && ft <= t {
			t = ft
		}
		c.fnet.runUntil(t) // may queue fetch ends at t or later
		for _, r := range c.replicas {
			if err := r.advance(t); err != nil {
				return nil, err
			}
		}
		kicked = kicked[:0]
		for len(c.fetching) > 0 && c.fetching[0].at == t {
			f := heap.Pop(&c.fetching).(fetching)
			events++
			f.r.gpuDebt += f.gpu
			f.r.waiting.pushBack(f.q)
			if !f.r.busy {
				kicked = append(kicked, f.r)
			}
		}
		for ; i < len(reqs) && reqs[i].Arrival == t; i++ {
			events++
			if r := c.arrive(i, reqs[i]); r != nil && !r.busy {
				kicked = append(kicked, r)
			}
		}
		for _, r := range kicked {
			if err := r.kick(t); err != nil {
				return nil, err
			}
		}
	}
	for _, r := range c.replicas {
		if err := r.advance(engine.MaxTime); err != nil {
			return nil, err
		}
	}
	if c.itl.over {
		return nil, ErrTooManyGaps
	}
	if c.err != nil {
		return nil, c.err
	}
	if c.p.Fetch != nil {
		c.note(fetchNote(c.fetches, c.fetchSkipped, c.fetchBytes, c.fetchTime, c.fetchAlone))
	}
	return c.result(events), nil
}

// arrive admits or rejects trace request i and routes it; it returns the
// replica it joined (nil if rejected).
func (c *cluster) arrive(i int, tq wllm.Request) *replica {
	rec := &c.records[i]
	*rec = RequestRecord{ID: tq.ID, Replica: -1, Arrival: tq.Arrival, PromptTokens: tq.PromptTokens, OutputTokens: tq.OutputTokens}
	if c.p.MaxOutstanding > 0 && c.inSystem >= c.p.MaxOutstanding {
		rec.Rejected = true
		return nil
	}
	q := &request{rec: rec, seq: i, prompt: tq.PromptTokens, output: tq.OutputTokens, hashes: tq.BlockHashes}
	if c.caching {
		q.keyBlocks = min(q.prompt/c.p.BlockSize, len(q.hashes)*c.perTrace)
	}
	r := c.route(q)
	rec.Replica = r.id
	c.inSystem++
	if c.p.Disagg != nil {
		// A prefill replica's work is the prompt and the first token; the
		// rest is the decode replica's, counted when it is chosen.
		r.outstanding += int64(q.prompt + 1)
	} else {
		r.outstanding += int64(q.prompt + q.output)
	}
	if c.p.Fetch != nil && c.caching && q.keyBlocks > 0 {
		if at := c.planFetch(q, r, tq.Arrival); at > tq.Arrival {
			// It waits for its fetch (fetchNet queues its end); the step
			// that admits it runs after.
			return nil
		}
	}
	r.waiting.pushBack(q)
	return r
}

// route picks q's replica by the plan's policy; ties go to the lowest
// index.
func (c *cluster) route(q *request) *replica {
	switch c.p.Router {
	case RouterRoundRobin:
		r := c.replicas[c.rr]
		c.rr = (c.rr + 1) % len(c.replicas)
		return r
	case RouterPrefix:
		home, homeHit := c.replicas[0], -1
		for _, r := range c.replicas {
			h := r.cachedPrefix(q)
			if h > homeHit || (h == homeHit && r.outstanding < home.outstanding) {
				home, homeHit = r, h
			}
		}
		if c.p.RouterBalanceAbs > 0 {
			// SGLang's cache-aware router compares its busiest worker with
			// the least busy and, past both thresholds, sends every request
			// to the least busy. Comparing the request's own home instead
			// leaves requests whose home is not the busy one with their
			// cache hits: on llm/mooncake SGLang's form moved 10,407 of
			// 12,031 requests off their home and its mean TTFT fell to
			// 628 ms, this one's to 592 ms.
			least := c.leastLoaded()
			if d := home.outstanding - least.outstanding; d > c.p.RouterBalanceAbs && float64(home.outstanding) > float64(least.outstanding)*c.p.RouterBalanceRel {
				return least
			}
		}
		return home
	default:
		return c.leastLoaded()
	}
}

// leastLoaded is the replica with the fewest outstanding tokens, ties to
// the lowest index.
func (c *cluster) leastLoaded() *replica {
	best := c.replicas[0]
	for _, r := range c.replicas[1:] {
		if r.outstanding < best.outstanding {
			best = r
		}
	}
	return best
}

// observeStep counts a step as it starts, checks it in tests, and samples
// the replica's state.
func (c *cluster) observeStep(r *replica, now engine.Time) {
	c.steps++
	used := r.kv.used()
	c.batchSum += float64(len(r.batch))
	c.kvSum += used
	c.kvPeak = max(c.kvPeak, used)
	if c.stepHook != nil {
		c.stepHook(r)
	}
	if c.p.SampleEvery == 0 || now >= r.nextSample {
		c.samples.add(Sample{T: now, Replica: r.id, KVUsed: used, Running: len(r.running), Waiting: r.waiting.len() + len(r.swapped)})
		if c.p.SampleEvery > 0 {
			r.nextSample = now - now%c.p.SampleEvery + c.p.SampleEvery
		}
	}
}
