package llmserve

import (
	"errors"
	"fmt"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/llm"
)

// request is one admitted request's serving state.
type request struct {
	rec            *RequestRecord
	seq            int // admission order, for priority ties
	prompt, output int
	// gen is the output tokens generated; computed the tokens whose KV is
	// in the cache (prompt and generated). total() - computed tokens are
	// left to run before the next token is sampled: the prompt's, or
	// after a preemption by recompute the prompt's and the generated ones,
	// or 1 while decoding.
	gen, computed int
	promptDone    int // prompt tokens prefilled at least once (outstanding work)
	sched         int // tokens scheduled in the step in flight

	hashes     []uint64 // the trace's block hashes (read-only)
	keyBlocks  int      // prompt blocks that have a prefix-cache key
	registered int      // leading blocks considered for the prefix cache
	shared     []int32  // prefix-cache entries held
	private    int      // blocks held outside the prefix cache

	lastToken engine.Time
	started   bool
	fetched   int      // prompt tokens fetched from the KV store, for its first admission
	ho        *handoff // its KV hand-off to a decode replica, once begun
	handed    bool     // prefilled on a prefill replica and handed off
}

func (q *request) total() int  { return q.prompt + q.gen }
func (q *request) blocks() int { return len(q.shared) + q.private }

// replica is one vLLM engine: a scheduler over its KV cache, running one
// step at a time.
type replica struct {
	id int
	c  *cluster
	pl *pool // the GPUs, model placement and KV capacity it runs on
	kv *kvCache

	running []*request // admission order
	waiting waitQueue
	swapped []*request // v0 swap: preempted to host memory, FIFO

	batch       []*request // scheduled in the step in flight
	busy        bool
	start, end  engine.Time // the step in flight
	readyAt     engine.Time // the last step's end: the next may start then
	gpuDebt     engine.Time // GPU work queued since the last step (fetched KV to decompress): the next step runs it first
	swapBlocks  int         // blocks swapped in and out by the step in flight
	outstanding int64       // prompt tokens not yet prefilled + output tokens not yet generated
	nextSample  engine.Time

	lb   llm.Batch // reused step description
	hits []int32   // scratch: prefix-cache hits of the request being admitted

	// Disaggregation: the replica's server, the hand-offs waiting for its
	// blocks (a decode replica), a step queued at this instant, and the
	// requests its last step prefilled (a prefill replica).
	server     int
	gpu        int  // its (first) GPU, counting every pool's GPUs in order
	slice      bool // a MIG instance of that GPU
	inbox      []*handoff
	wakeQueued bool
	handedNow  []*request
	// heldForHandoff counts the hand-offs whose blocks this (prefill)
	// replica still holds.
	heldForHandoff int
}

func (r *replica) blocksFor(tokens int) int {
	bs := r.c.p.BlockSize
	return (tokens + bs - 1) / bs
}

// advance runs the replica's steps up to time t: every step ending at or
// before t completes, and its successor is scheduled if it starts before
// t. A step that would start at t itself waits for kick, so that requests
// arriving at t join it, as vLLM's scheduler sees every request queued
// when a step begins.
func (r *replica) advance(t engine.Time) error {
	for {
		if r.busy {
			if r.end > t {
				return nil
			}
			r.finishStep()
		}
		if r.readyAt >= t {
			return nil
		}
		ran, err := r.schedule(r.readyAt)
		if err != nil || !ran {
			return err
		}
	}
}

// kick starts a step at t if the replica is idle (after advance(t)).
func (r *replica) kick(t engine.Time) error {
	if r.busy {
		return nil
	}
	_, err := r.schedule(max(r.readyAt, t))
	return err
}

// schedule forms the step starting at now; false when there is no work.
func (r *replica) schedule(now engine.Time) (bool, error) {
	r.swapBlocks = 0
	for {
		before := r.c.preemptions
		if r.c.p.Scheduler == SchedulerV0 {
			r.scheduleV0(now)
		} else {
			r.scheduleV1(now)
		}
		// Under priority a request may preempt itself, the lowest, before
		// any other is scheduled: the step is empty, as in vLLM, and the
		// next, at once, has its blocks back.
		if len(r.batch) > 0 || r.c.preemptions == before {
			break
		}
	}
	if len(r.batch) == 0 {
		if r.heldForHandoff > 0 {
			// A prefill replica whose blocks wait on KV transfers: it
			// resumes when one ends (pd.delivered wakes it).
			return false, nil
		}
		if len(r.running)+r.waiting.len()+len(r.swapped) > 0 {
			// Unreachable: with nothing running every block is free, and
			// Simulate refused requests longer than the capacity.
			return false, fmt.Errorf("llmserve: replica %d stalled at %s with %d running, %d waiting, %d swapped and %d of %d blocks available (a bug)",
				r.id, now, len(r.running), r.waiting.len(), len(r.swapped), r.kv.available(), r.kv.total)
		}
		return false, nil
	}
	r.lb.Prefill, r.lb.Decode = r.lb.Prefill[:0], r.lb.Decode[:0]
	var S int64
	sampled := 0 // requests whose next token this step samples
	for _, q := range r.batch {
		if q.computed+q.sched == q.total() {
			sampled++
		}
		if q.gen >= 1 && q.sched == 1 && q.computed == q.total()-1 {
			r.lb.Decode = append(r.lb.Decode, q.computed+1)
			S += int64(q.computed + 1)
		} else {
			r.lb.Prefill = append(r.lb.Prefill, llm.Chunk{Tokens: q.sched, ContextBefore: q.computed})
		}
	}
	p := r.pl.p
	sec, ok := 0.0, false
	if len(r.lb.Prefill) == 0 && r.pl.decode != nil {
		sec, ok = r.pl.decode.time(r.lb.Decode, S)
		if !ok && r.fits() {
			sec, ok = r.pl.roomyDecode.time(r.lb.Decode, S)
		}
	}
	if !ok {
		st, err := llm.Step(p.Model, p.Placement, r.lb, p.Eff)
		if fe := (*llm.FitError)(nil); errors.As(err, &fe) && r.fits() {
			// Step's check sums the contexts, counting a cached prefix
			// block once per request that reads it; the blocks the
			// replica holds fit, so time the step (memory only enters
			// the check).
			st, err = llm.Step(p.Model, r.pl.roomy, r.lb, p.Eff)
		}
		if err != nil {
			return false, fmt.Errorf("llmserve: replica %d step at %s (%d prefill chunks, %d decodes): %w", r.id, now, len(r.lb.Prefill), len(r.lb.Decode), err)
		}
		sec = st.Seconds
	}
	dur := engine.Seconds(sec)
	if cp := p.Control; cp != nil {
		dur = cp.stepTime(dur, len(r.batch), sampled)
	}
	if r.swapBlocks > 0 {
		dur += engine.Seconds(float64(r.swapBlocks) * r.pl.blockBytesPerGPU / p.HostLinkBytesPerSec)
	}
	dur += r.gpuDebt
	r.gpuDebt = 0
	dur = max(dur, 1)
	r.busy, r.start, r.end = true, now, now+dur
	r.c.observeStep(r, now)
	return true, nil
}

// fits says whether the blocks the replica holds, shared prefix blocks
// once, fit the memory as llm.Step's check counts it: the weights' share
// and the KV within MemoryUtilization of the GPU's (slice's) memory.
func (r *replica) fits() bool {
	pl := r.pl
	return pl.weightsPerGPU+float64(r.kv.held)*pl.blockBytesPerGPU <= pl.memPerGPU*llm.MemoryUtilization
}

// reserve gives the running request q (at index i of running) the blocks
// for its first tokens, preempting the lowest-priority running request
// (r.victim) while the free blocks are too few, as both schedulers do. It
// returns whether q itself is still running, the tokens the preempted
// requests had scheduled in this step (back to the budget), how many of
// them stood before index i (the caller's index moves back by as many),
// and whether it preempted any.
func (r *replica) reserve(q *request, tokens, i int) (ok bool, freed, before int, preempted bool) {
	for {
		need := r.blocksFor(tokens) - q.blocks()
		if need <= r.kv.available() {
			r.grow(q, need)
			return true, freed, before, preempted
		}
		v, vi := r.victim()
		if v.sched > 0 {
			freed += v.sched
			r.unbatch(v)
		}
		r.preempt(v, vi)
		preempted = true
		if v == q {
			return false, freed, before, preempted
		}
		if vi < i {
			before++
		}
	}
}

// scheduleV1 is vLLM v1's Scheduler.schedule: running requests first, in
// order, each given min(its remaining tokens, the budget left) (a decode
// 1, a prefill a chunk), preempting the lowest-priority running request
// when blocks run out; then, if nothing was preempted, waiting requests
// while the budget, max_num_seqs and the free blocks allow.
func (r *replica) scheduleV1(now engine.Time) {
	p := &r.c.p
	budget := p.MaxBatchedTokens
	preempted := false
	for i := 0; i < len(r.running) && budget > 0; i++ {
		q := r.running[i]
		n := min(q.total()-q.computed, budget)
		ok, freed, before, pre := r.reserve(q, q.computed+n, i)
		budget += freed
		i -= before
		preempted = preempted || pre
		if !ok {
			break
		}
		r.addToBatch(q, n)
		budget -= n
	}
	if preempted {
		return
	}
	for r.waiting.len() > 0 && budget > 0 && len(r.running) < p.MaxSeqs {
		q := r.waiting.peek()
		if !r.admit(q, now, budget, true) {
			break
		}
		budget -= q.sched
	}
}

// scheduleV0 is vLLM v0's default scheduler (chunked prefill off): a step
// runs waiting prompts whole, as many as the budget, max_num_seqs and the
// blocks allow, when none is swapped out; otherwise it decodes every
// running request (preempting the latest when blocks run out) and, if
// none was preempted, swaps requests back in.
func (r *replica) scheduleV0(now engine.Time) {
	p := &r.c.p
	if len(r.swapped) == 0 {
		budget := p.MaxBatchedTokens
		for r.waiting.len() > 0 && len(r.running) < p.MaxSeqs {
			q := r.waiting.peek()
			// A prompt is scheduled whole; one past the whole budget (a
			// recompute of prompt plus output) runs alone in its step.
			if !r.admit(q, now, budget, false) {
				if len(r.batch) > 0 || !r.admit(q, now, q.total(), false) {
					break
				}
				r.c.noteOnce("v0-long-recompute", "vllm-v0: a preempted request's prompt plus generated tokens exceeded max_num_batched_tokens; its recompute ran alone in one step")
				break
			}
			budget -= q.sched
		}
		if len(r.batch) > 0 {
			return
		}
	}
	preempted := false
	for i := 0; i < len(r.running); i++ {
		q := r.running[i]
		ok, _, before, pre := r.reserve(q, q.computed+1, i)
		i -= before
		preempted = preempted || pre
		if !ok {
			break
		}
		r.addToBatch(q, 1)
	}
	if preempted {
		return
	}
	for len(r.swapped) > 0 && len(r.running) < p.MaxSeqs {
		q := r.swapped[0]
		need := r.blocksFor(q.computed + 1)
		if need > r.kv.available() {
			break
		}
		r.swapped = r.swapped[1:]
		r.grow(q, need)
		r.swapBlocks += r.blocksFor(q.computed)
		r.running = append(r.running, q)
		r.addToBatch(q, 1)
	}
}

// admit moves waiting request q (the queue's head) to running with its
// prefix-cache hits and up to budget tokens (chunked) or all its tokens
// (whole, refused past budget), if the blocks allow.
func (r *replica) admit(q *request, now engine.Time, budget int, chunked bool) bool {
	hits := r.match(q, q.total())
	computed := hits * r.c.p.BlockSize
	fetched := 0
	if q.fetched > computed {
		// Fetched from the store (its wait is over): the KV is in, as
		// private blocks until the step registers them in the cache.
		fetched, computed = q.fetched, q.fetched
	}
	n := q.total() - computed
	if n > budget {
		if !chunked {
			return false
		}
		n = budget
	}
	need := r.blocksFor(computed+n) - hits
	touched := 0
	for _, e := range r.hits {
		if r.kv.entries[e].refs == 0 {
			touched++
		}
	}
	if need > r.kv.available()-touched {
		return false
	}
	r.waiting.pop()
	if fetched > 0 {
		q.fetched = 0 // a recompute after a preemption starts from the cache
	}
	for _, e := range r.hits {
		r.kv.touch(e)
	}
	q.shared = append(q.shared, r.hits...)
	q.registered = hits
	r.grow(q, need)
	q.computed = computed
	if !q.started {
		q.started = true
		q.rec.FirstScheduled = now
		q.rec.CachedTokens = computed
	}
	r.running = append(r.running, q)
	r.addToBatch(q, n)
	return true
}

// match finds the prefix-cache hits of q's first blocks into r.hits and
// returns their number: whole blocks only, and never the block of the
// last known token, which is recomputed to sample from (vLLM caps a hit
// at total-1 tokens).
func (r *replica) match(q *request, total int) int {
	r.hits = r.hits[:0]
	if !r.c.caching {
		return 0
	}
	limit := min(q.keyBlocks, (total-1)/r.c.p.BlockSize)
	for k := 0; k < limit; k++ {
		e := r.kv.lookup(r.c.key(q, k))
		if e < 0 {
			break
		}
		r.hits = append(r.hits, e)
	}
	return len(r.hits)
}

// cachedPrefix is the blocks of q's prompt r's cache holds, for routing.
func (r *replica) cachedPrefix(q *request) int {
	if !r.c.caching {
		return 0
	}
	limit := min(q.keyBlocks, (q.prompt-1)/r.c.p.BlockSize)
	k := 0
	for k < limit && r.kv.lookup(r.c.key(q, k)) >= 0 {
		k++
	}
	return k
}

func (r *replica) grow(q *request, n int) {
	if n > 0 {
		r.kv.allocate(n)
		q.private += n
	}
}

// addToBatch schedules n tokens of q in the step and caches the prompt
// blocks they fill (vLLM caches a block once scheduled full).
func (r *replica) addToBatch(q *request, n int) {
	q.sched = n
	r.batch = append(r.batch, q)
	if !r.c.caching {
		return
	}
	full := min((q.computed+n)/r.c.p.BlockSize, q.keyBlocks)
	for ; q.registered < full; q.registered++ {
		if q.private == 0 {
			break
		}
		if e := r.kv.promote(r.c.key(q, q.registered)); e >= 0 {
			q.private--
			q.shared = append(q.shared, e)
		}
	}
}

func (r *replica) unbatch(q *request) {
	for i, b := range r.batch {
		if b == q {
			r.batch = append(r.batch[:i], r.batch[i+1:]...)
			break
		}
	}
	q.sched = 0
}

// victim is the running request to preempt: the latest admitted (FCFS)
// or the lowest priority (longest prompt, latest arrival).
func (r *replica) victim() (*request, int) {
	vi := len(r.running) - 1
	if r.c.p.Priority == PriorityShortest {
		for i, q := range r.running {
			if before(r.running[vi], q) {
				vi = i
			}
		}
	}
	return r.running[vi], vi
}

// preempt takes running request v (at vi) off the GPU: by recompute its
// blocks are freed and it goes back to the waiting queue's head; by swap
// (v0) its blocks are copied to host memory in this step and it waits in
// the swapped queue.
func (r *replica) preempt(v *request, vi int) {
	r.running = append(r.running[:vi], r.running[vi+1:]...)
	v.rec.Preemptions++
	r.c.preemptions++
	if r.c.p.Preemption == PreemptSwap {
		r.swapBlocks += v.blocks()
		r.free(v)
		r.swapped = append(r.swapped, v)
		return
	}
	r.free(v)
	v.computed = 0
	r.waiting.pushFront(v)
}

// freeHeld returns blocks a request held (moved off it at a hand-off),
// as free does.
func (r *replica) freeHeld(shared []int32, private int) {
	for i := len(shared) - 1; i >= 0; i-- {
		r.kv.unref(shared[i])
	}
	r.kv.release(private)
}

// free returns q's blocks, the cached ones last block first so that a
// prompt's tail is evicted before its head.
func (r *replica) free(q *request) {
	for i := len(q.shared) - 1; i >= 0; i-- {
		r.kv.unref(q.shared[i])
	}
	r.kv.release(q.private)
	q.shared, q.private, q.registered = q.shared[:0], 0, 0
}

// finishStep applies the step in flight at its end: every scheduled
// request's tokens are computed; one whose known tokens are all computed
// samples a token (the first ends its TTFT), and one with all its output
// finishes and frees its blocks.
//
// On a prefill replica of a disaggregated cluster, a request that samples
// its first token and has more to generate is handed off instead: it
// leaves the running set holding its blocks, and is returned.
func (r *replica) finishStep() []*request {
	end := r.end
	r.handedNow = r.handedNow[:0]
	handoff := r.pl.role == rolePrefill
	c := r.c
	regular := 0 // tokens whose previous token came at this step's start
	done := 0
	for _, q := range r.batch {
		q.computed += q.sched
		q.sched = 0
		if pd := min(q.computed, q.prompt); pd > q.promptDone {
			r.outstanding -= int64(pd - q.promptDone)
			q.promptDone = pd
			if c.store != nil && pd == q.prompt {
				// Its prompt's KV now exists: the store keeps it (the
				// trace's blocks; a partial last block is stored too, as
				// a KV store keeps what the engine offloads).
				for _, h := range q.hashes {
					c.store[h] = true
				}
			}
		}
		if q.computed != q.total() {
			continue
		}
		q.gen++
		r.outstanding--
		c.outputTokens++
		if q.gen == 1 {
			q.rec.FirstToken = end
			if handoff && q.output > 1 {
				q.lastToken = end
				q.handed = true
				r.handedNow = append(r.handedNow, q)
				done++
				continue
			}
		} else if q.lastToken == r.start {
			regular++
		} else {
			c.itl.add(end-q.lastToken, 1)
		}
		q.lastToken = end
		if q.gen == q.output {
			q.rec.Finish = end
			r.free(q)
			c.inSystem--
			done++
		}
	}
	if regular > 0 {
		c.itl.add(end-r.start, regular)
	}
	r.batch = r.batch[:0]
	if done > 0 {
		kept := r.running[:0]
		for _, q := range r.running {
			if q.gen < q.output && !q.handed {
				kept = append(kept, q)
			}
		}
		clear(r.running[len(kept):])
		r.running = kept
	}
	r.busy = false
	r.readyAt = end
	return r.handedNow
}
