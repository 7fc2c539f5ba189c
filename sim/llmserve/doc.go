// Package llmserve simulates LLM serving: replicas of a vLLM-like engine
// behind a router, replaying an LLM request trace (workloads/llm) with
// each iteration timed by hw/llm's step model.
//
// A replica runs continuous batching as vLLM v1 does (SchedulerV1): each
// step fills a token budget (max_num_batched_tokens) with the running
// requests' decodes and prefill chunks, then admits waiting requests while
// the budget, max_num_seqs and the free KV blocks allow; prompts are
// chunked into the budget and there are no separate prefill and decode
// phases. vLLM v0's scheduler is the named alternative (SchedulerV0): a
// step runs either whole prompts (prefills first) or decodes, never both.
// Waiting requests are served first come first served, or shortest prompt
// first (PriorityShortest).
//
// KV memory is paged: BlockSize-token blocks, as many as the GPU's memory
// leaves after weights and activations (KVCapacity). When a running
// request needs a block and none is free, the latest admitted running
// request (the lowest priority) is preempted: by recompute its blocks are
// freed and it goes back to the head of the waiting queue to recompute
// its prompt and generated tokens; by swap (v0 only) its blocks are
// copied to host memory over the host link, inside the step, and back
// when it resumes. With prefix caching, full prompt blocks are cached by
// hash as vLLM counts them: the trace's coarser hash blocks (Mooncake's
// 512 tokens) name BlockSize blocks (a 512-token hit is 32 16-token
// blocks), a request's hit is whole leading blocks and never the block of
// its last token (recomputed to sample from), cached blocks are kept
// after their requests finish and evicted least recently freed first (a
// prompt's tail before its head), and a hit still counts in the step's
// attention reads (the chunk's ContextBefore): each request reads the
// shared blocks, but they take memory once, so a batch is checked
// against the memory by the blocks the replica holds, not by llm.Step's
// sum of the contexts.
//
// A step's output: every decoding request gains one token, and a prefill
// chunk that completes the request's known tokens samples one (the first
// token, ending TTFT, at the end of that step).
//
// Time: the trace's arrivals are the only events. Between two arrivals
// each replica runs its steps back to back in a loop, each formed by the
// scheduler at its start and applied at its end, so a steady decode batch
// costs no event per step or token, and the result is exactly what an
// event per step would give: a replica depends on nothing outside it but
// the requests routed to it, and the router sees every replica as of the
// arrival's time. A decode-only step's time comes from a per-batch-size
// template that replays llm.Step's arithmetic bit for bit (decodeTimer:
// only attention depends on the contexts, through their sum), with
// llm.Step itself for every other step.
//
// The package does no I/O and reads no clock; Simulate is deterministic.
// config.go holds the scenario section that resolves to a Plan.
package llmserve
