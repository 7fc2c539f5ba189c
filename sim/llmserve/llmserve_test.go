package llmserve

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/llm"
	wllm "github.com/conspirator-sim/conspirator/workloads/llm"
)

// One request alone, prompt within the budget: its first token comes at
// the end of one prefill step (TTFT = that step's time) and every later
// token after one decode step at its context (prompt + tokens so far).
func TestOneRequestAlone(t *testing.T) {
	p := testPlan(t)
	const prompt, output = 1000, 5
	res, log := simulate(t, p, trace(req{at: engine.Second, prompt: prompt, output: output}))
	r := res.Requests[0]
	wantTTFT := stepTime(t, p, llm.Batch{Prefill: []llm.Chunk{{Tokens: prompt}}})
	if r.TTFT() != wantTTFT || r.Queue() != 0 {
		t.Errorf("TTFT %s queue %s; want the prefill step %s and 0", r.TTFT(), r.Queue(), wantTTFT)
	}
	// Decode steps read contexts 1001 .. 1004 (the new token included).
	var decode engine.Time
	for ctx := prompt + 1; ctx < prompt+output; ctx++ {
		decode += stepTime(t, p, llm.Batch{Decode: []int{ctx}})
	}
	if r.TPOT() != decode/(output-1) || r.E2E() != wantTTFT+decode {
		t.Errorf("TPOT %s E2E %s; want %s and %s", r.TPOT(), r.E2E(), decode/(output-1), wantTTFT+decode)
	}
	if len(log) != output || res.Steps != output || res.Events != 1 {
		t.Errorf("%d steps logged, Steps %d, Events %d; want %d, %d, 1", len(log), res.Steps, res.Events, output, output)
	}
	// ITL: the four decode steps' times, each once.
	last := stepTime(t, p, llm.Batch{Decode: []int{prompt + output - 1}})
	if itl := res.Summary.ITL; math.Abs(itl.Mean-(decode/(output-1)).Seconds()) > 1e-9 || itl.P99 != last.Seconds() || res.GeneratedTokens != output {
		t.Errorf("ITL %+v, generated %d; want mean %v, p99 %v (the last, longest step), %d", itl, res.GeneratedTokens, (decode / (output - 1)).Seconds(), last.Seconds(), output)
	}
}

// A prompt over the budget is chunked: 3000 tokens at 1024 a step run as
// 1024 + 1024 + 952 with 0, 1024 and 2048 tokens before; TTFT is the sum.
func TestChunkedPrefill(t *testing.T) {
	p := testPlan(t)
	p.MaxBatchedTokens = 1024
	res, _ := simulate(t, p, trace(req{prompt: 3000, output: 1}))
	want := stepTime(t, p, llm.Batch{Prefill: []llm.Chunk{{Tokens: 1024}}}) +
		stepTime(t, p, llm.Batch{Prefill: []llm.Chunk{{Tokens: 1024, ContextBefore: 1024}}}) +
		stepTime(t, p, llm.Batch{Prefill: []llm.Chunk{{Tokens: 952, ContextBefore: 2048}}})
	if r := res.Requests[0]; r.TTFT() != want || r.E2E() != want || r.TPOT() != 0 {
		t.Errorf("TTFT %s E2E %s TPOT %s; want %s, %s, 0", r.TTFT(), r.E2E(), r.TPOT(), want, want)
	}
}

// Two requests arriving together under v1 share every step: one prefill
// step with both chunks, then decode steps with both contexts. Under v0 the
// same: both prompts whole in one prefill-only step.
func TestTwoRequestsShareSteps(t *testing.T) {
	for _, sched := range []string{SchedulerV1, SchedulerV0} {
		p := testPlan(t)
		p.Scheduler = sched
		res, log := simulate(t, p, trace(req{prompt: 500, output: 3}, req{prompt: 700, output: 3}))
		prefill := stepTime(t, p, llm.Batch{Prefill: []llm.Chunk{{Tokens: 500}, {Tokens: 700}}})
		d1 := stepTime(t, p, llm.Batch{Decode: []int{501, 701}})
		d2 := stepTime(t, p, llm.Batch{Decode: []int{502, 702}})
		for _, r := range res.Requests {
			if r.TTFT() != prefill || r.E2E() != prefill+d1+d2 {
				t.Errorf("%s request %d: TTFT %s E2E %s; want %s, %s", sched, r.ID, r.TTFT(), r.E2E(), prefill, prefill+d1+d2)
			}
		}
		if len(log) != 3 || log[0].prefill != 2 || log[1].decode != 2 {
			t.Errorf("%s steps %+v; want a 2-prefill step then 2-decode steps", sched, log)
		}
	}
	// v1 mixes: a request arriving while another decodes joins its step.
	p := testPlan(t)
	first := stepTime(t, p, llm.Batch{Prefill: []llm.Chunk{{Tokens: 500}}})
	res, log := simulate(t, p, trace(req{prompt: 500, output: 4}, req{at: first - 1, prompt: 300, output: 1}))
	mixed := stepTime(t, p, llm.Batch{Prefill: []llm.Chunk{{Tokens: 300}}, Decode: []int{501}})
	if r := res.Requests[1]; r.FirstScheduled != first || r.TTFT() != 1+mixed {
		t.Errorf("late request: scheduled %s TTFT %s; want %s and %s", r.FirstScheduled, r.TTFT(), first, 1+mixed)
	}
	if log[1].prefill != 1 || log[1].decode != 1 {
		t.Errorf("second step %+v; want 1 prefill chunk and 1 decode", log[1])
	}
	// v0 does not: the prefill runs alone, the decode waits a step.
	p.Scheduler = SchedulerV0
	_, log = simulate(t, p, trace(req{prompt: 500, output: 4}, req{at: first - 1, prompt: 300, output: 1}))
	if log[1].prefill != 1 || log[1].decode != 0 || log[2].decode != 1 {
		t.Errorf("v0 steps %+v; want a prefill-only step then decode", log[:3])
	}
}

// The budget and max_num_seqs hold at every step (checkStep) on a loaded
// synthetic run, and they bind: some step reaches each.
func TestBudgetAndSeqsRespected(t *testing.T) {
	for _, sched := range []string{SchedulerV1, SchedulerV0} {
		p := testPlan(t)
		p.Scheduler = sched
		p.MaxBatchedTokens, p.MaxSeqs = 2048, 16
		if sched == SchedulerV0 {
			// v0 runs a prompt whole: the budget must hold the longest.
			p.MaxBatchedTokens = 32768
		}
		tr := synthetic(t, 400, 40, 1)
		res, log := simulate(t, p, tr)
		maxTok, maxSeqs := 0, 0
		for _, l := range log {
			maxTok, maxSeqs = max(maxTok, l.tokens), max(maxSeqs, l.seqs)
		}
		if maxSeqs != 16 || (sched == SchedulerV1 && maxTok != 2048) {
			t.Errorf("%s: largest step %d tokens, %d sequences; want the limits 2048 (v1) and 16 reached", sched, maxTok, maxSeqs)
		}
		conserved(t, res)
	}
}

// KV blocks: 10 blocks of 16 tokens; two 64-token prompts (4 blocks
// each) with 50 output tokens. Step 1 prefills both (8 blocks); step 2
// gives each a fifth block (all 10 held); their contexts then fill 80
// tokens after 16 more tokens, so at step 18 (computed 80, the 81st token
// needs a sixth block) request 1, the latest admitted, is preempted, and
// it cannot return (81 tokens need 6 blocks, 4 free) until request 0
// finishes at step 50. Both still complete with all their tokens.
func TestPreemptionWhenBlocksRunOut(t *testing.T) {
	p := testPlan(t)
	p.KVBlocks = 10
	res, log := simulate(t, p, trace(req{prompt: 64, output: 50}, req{prompt: 64, output: 50}))
	at := -1
	for i, l := range log {
		if l.held > l.total {
			t.Fatalf("step %d holds %d of %d blocks", i+1, l.held, l.total)
		}
		if l.preemptions > 0 && at < 0 {
			at = i + 1
		}
	}
	if at != 18 || res.Preemptions != 1 || res.Requests[1].Preemptions != 1 || res.Requests[0].Preemptions != 0 {
		t.Fatalf("first preemption at step %d, %d in all (%d, %d); want step 18, one, of request 1", at, res.Preemptions, res.Requests[0].Preemptions, res.Requests[1].Preemptions)
	}
	if log[16].held != 10 {
		t.Errorf("step 17 holds %d blocks; want all 10", log[16].held)
	}
	// Request 0 finishes at the end of step 50; request 1's recompute of
	// 64 + 17 tokens is the next step, a prefill chunk.
	if r0 := res.Requests[0]; log[50].start != r0.Finish || log[50].prefill != 1 {
		t.Errorf("step 51 at %s with %d prefills; want at request 0's finish %s, the recompute", log[50].start, log[50].prefill, r0.Finish)
	}
	conserved(t, res)
	// Swap under v0: the same run; at step 18 request 1's 5 blocks (80
	// tokens) go to host memory, 5 x 16 x 128 KiB over the 64 GB/s link,
	// in that step, which decodes request 0 alone at context 81; they come
	// back (5 blocks again) in step 51, after request 0 finishes, which
	// decodes request 1 alone at context 81.
	p.Scheduler, p.Preemption = SchedulerV0, PreemptSwap
	res, log = simulate(t, p, trace(req{prompt: 64, output: 50}, req{prompt: 64, output: 50}))
	swap := engine.Seconds(5 * 16 * float64(p.Model.KVBytesPerTokenPerGPU(1)) / p.HostLinkBytesPerSec)
	alone := stepTime(t, p, llm.Batch{Decode: []int{81}})
	if res.Preemptions != 1 || log[17].preemptions != 1 || log[16].preemptions != 0 {
		t.Errorf("v0 swap: %d preemptions, first at step 18: %v; want 1, true", res.Preemptions, log[17].preemptions == 1 && log[16].preemptions == 0)
	}
	for _, k := range []int{17, 50} {
		if d := log[k].end - log[k].start; d != alone+swap || log[k].decode != 1 {
			t.Errorf("v0 swap: step %d takes %s with %d decodes; want %s + %s swap, 1", k+1, d, log[k].decode, alone, swap)
		}
	}
	conserved(t, res)
}

// Prefix caching, 512-token trace blocks on 16-token KV blocks (32 each).
func TestPrefixCaching(t *testing.T) {
	p := testPlan(t)
	p.PrefixCaching = true
	later := 10 * engine.Second
	cases := []struct {
		name          string
		first, second req
		cached        int
	}{
		// 1100 tokens: 68 whole blocks (1088 tokens), the last token in
		// the 69th: all 68 hit.
		{"whole prompt", req{prompt: 1100, output: 2, hashes: []uint64{1, 2, 3}}, req{at: later, prompt: 1100, output: 2, hashes: []uint64{1, 2, 3}}, 1088},
		// 1024 tokens, 64 whole blocks: the last token's block (the 64th)
		// is recomputed: 63 blocks, 1008 tokens.
		{"last block recomputed", req{prompt: 1024, output: 2, hashes: []uint64{1, 2}}, req{at: later, prompt: 1024, output: 2, hashes: []uint64{1, 2}}, 1008},
		// The second trace block differs: the first 512 tokens hit.
		{"shared first block", req{prompt: 1100, output: 2, hashes: []uint64{1, 2, 3}}, req{at: later, prompt: 1100, output: 2, hashes: []uint64{1, 9, 3}}, 512},
		// A different first block: nothing, though later ids match.
		{"different head", req{prompt: 1100, output: 2, hashes: []uint64{1, 2, 3}}, req{at: later, prompt: 1100, output: 2, hashes: []uint64{8, 2, 3}}, 0},
	}
	for _, tc := range cases {
		res, _ := simulate(t, p, trace(tc.first, tc.second))
		r := res.Requests[1]
		want := stepTime(t, p, llm.Batch{Prefill: []llm.Chunk{{Tokens: tc.second.prompt - tc.cached, ContextBefore: tc.cached}}})
		if res.Requests[0].CachedTokens != 0 || r.CachedTokens != tc.cached || r.TTFT() != want {
			t.Errorf("%s: cached %d, %d, TTFT %s; want 0, %d, %s", tc.name, res.Requests[0].CachedTokens, r.CachedTokens, r.TTFT(), tc.cached, want)
		}
	}
	// Eviction, LRU with a prompt's tail first: 70 blocks. Request 0
	// (1100 tokens: 68 full blocks cached + 1 partial) finishes and leaves
	// 68 cached blocks, freed last block first, and 2 free. Request 1
	// (other hashes) needs 69: the 2 free and 67 evicted, blocks 68..2 of
	// request 0's prompt, so only its first block stays cached. Request 2,
	// request 0's prompt again, hits that one block: 16 tokens.
	p.KVBlocks = 70
	res, _ := simulate(t, p, trace(req{prompt: 1100, output: 1, hashes: []uint64{1, 2, 3}},
		req{at: later, prompt: 1100, output: 1, hashes: []uint64{4, 5, 6}},
		req{at: 2 * later, prompt: 1100, output: 1, hashes: []uint64{1, 2, 3}}))
	if got := res.Requests[2].CachedTokens; got != 16 {
		t.Errorf("after eviction: cached %d; want 16 (the head block survives LRU, tail first)", got)
	}
}

// Routers on two replicas.
func TestRouters(t *testing.T) {
	p := testPlan(t)
	p.Replicas = 2
	rs := []req{{prompt: 100, output: 10}, {prompt: 100, output: 10}, {prompt: 100, output: 10}, {prompt: 100, output: 10}}
	res, _ := simulate(t, p, trace(rs...))
	for i, r := range res.Requests {
		if r.Replica != i%2 {
			t.Errorf("round-robin: request %d on %d; want %d", i, r.Replica, i%2)
		}
	}
	// Least outstanding tokens: 0 (1100 tokens) -> replica 0 (tie, lowest);
	// 1 (2100) -> replica 1; 2 (20) -> 0 (1100 < 2100); 3 (5000) -> 0
	// (1120 < 2100); 4 -> 1 (2100 < 6120).
	p.Router = RouterLeastTokens
	res, _ = simulate(t, p, trace(req{prompt: 1000, output: 100}, req{prompt: 2000, output: 100}, req{prompt: 10, output: 10},
		req{prompt: 4900, output: 100}, req{prompt: 10, output: 10}))
	for i, want := range []int{0, 1, 0, 0, 1} {
		if got := res.Requests[i].Replica; got != want {
			t.Errorf("least-outstanding-tokens: request %d on %d; want %d", i, got, want)
		}
	}
	// Prefix-aware: request 0 (hashes 1, 2) -> replica 0 (no hits, tie on
	// tokens, lowest index); request 1 (hashes 7, 9) -> replica 1 (no
	// hits: nothing is cached before the first step; 0 < 1026 tokens).
	// At 10 s both are done and cached. Request 2 (7, 8) -> replica 1:
	// 32 blocks (the first 512 tokens) cached there, none on 0. Request 3
	// (1, 2, 1024 tokens) -> replica 0: 63 blocks there (the 64th holds
	// the last token). Request 4 (1, 2) -> replica 0 again: 63 blocks beat
	// replica 1's fewer outstanding tokens (602 < 1224). Request 5 (99):
	// no hits anywhere, so the fewest tokens: replica 1 (602 < 2250).
	p.Router, p.PrefixCaching = RouterPrefix, true
	s := 10 * engine.Second
	res, _ = simulate(t, p, trace(req{prompt: 1024, output: 2, hashes: []uint64{1, 2}}, req{prompt: 600, output: 2, hashes: []uint64{7, 9}},
		req{at: s, prompt: 600, output: 2, hashes: []uint64{7, 8}}, req{at: s, prompt: 1024, output: 200, hashes: []uint64{1, 2}},
		req{at: s, prompt: 1024, output: 2, hashes: []uint64{1, 2}}, req{at: s, prompt: 100, output: 2, hashes: []uint64{99}}))
	for i, want := range []int{0, 1, 1, 0, 0, 1} {
		if got := res.Requests[i].Replica; got != want {
			t.Errorf("prefix-aware: request %d on %d; want %d", i, got, want)
		}
	}
}

// Admission: at most 2 in the system; the third of three simultaneous
// arrivals is rejected; a fourth after both finished is admitted.
func TestAdmissionLimit(t *testing.T) {
	p := testPlan(t)
	p.MaxOutstanding = 2
	res, _ := simulate(t, p, trace(req{prompt: 100, output: 5}, req{prompt: 100, output: 5}, req{prompt: 100, output: 5},
		req{at: 10 * engine.Second, prompt: 100, output: 5}))
	got := []bool{res.Requests[0].Rejected, res.Requests[1].Rejected, res.Requests[2].Rejected, res.Requests[3].Rejected}
	if !reflect.DeepEqual(got, []bool{false, false, true, false}) || res.Rejected != 1 || res.Summary.Rejected != 1 || res.Summary.Completed != 3 {
		t.Errorf("rejected %v (%d, summary %d, completed %d); want only the third, 1, 1, 3", got, res.Rejected, res.Summary.Rejected, res.Summary.Completed)
	}
	conserved(t, res)
}

// The same plan and trace give the identical result, on every scheduler,
// router and queue order.
func TestDeterminism(t *testing.T) {
	tr := synthetic(t, 600, 30, 7)
	for _, v := range []struct{ sched, router, prio, preempt string }{
		{SchedulerV1, RouterLeastTokens, PriorityFCFS, PreemptRecompute},
		{SchedulerV1, RouterRoundRobin, PriorityShortest, PreemptRecompute},
		{SchedulerV0, RouterLeastTokens, PriorityFCFS, PreemptSwap},
	} {
		p := testPlan(t)
		p.Replicas, p.KVBlocks = 3, 2000
		p.Scheduler, p.Router, p.Priority, p.Preemption = v.sched, v.router, v.prio, v.preempt
		if v.sched == SchedulerV0 {
			p.MaxBatchedTokens = 32768
		}
		a, err := Simulate(p, tr)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Simulate(p, tr)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%v: two runs differ", v)
		}
		if a.Preemptions == 0 {
			t.Errorf("%v: no preemption; the run should press its 2000 blocks", v)
		}
		conserved(t, a)
	}
}

// conserved checks that every request completed (with its tokens in
// order) or was rejected, and that the tokens generated are the sum of
// the admitted requests' OutputTokens.
func conserved(t *testing.T, res *Result) {
	t.Helper()
	var out int64
	done := 0
	for _, r := range res.Requests {
		if r.Rejected {
			continue
		}
		if !(r.Arrival <= r.FirstScheduled && r.FirstScheduled < r.FirstToken && r.FirstToken <= r.Finish) {
			t.Fatalf("request %d: arrival %s scheduled %s first token %s finish %s out of order", r.ID, r.Arrival, r.FirstScheduled, r.FirstToken, r.Finish)
		}
		if r.OutputTokens > 1 && r.FirstToken == r.Finish {
			t.Fatalf("request %d: %d tokens but first token at finish", r.ID, r.OutputTokens)
		}
		out += int64(r.OutputTokens)
		done++
	}
	if res.GeneratedTokens != out || done+res.Rejected != len(res.Requests) || res.Summary.Completed != done {
		t.Fatalf("generated %d tokens, admitted requests ask %d; %d done + %d rejected of %d", res.GeneratedTokens, out, done, res.Rejected, len(res.Requests))
	}
}

// Queue order with one sequence at a time: FCFS serves in arrival order;
// priority the shortest prompt first (B 100, C 500, A 2000), so the first
// tokens come in that order.
func TestPriorityOrder(t *testing.T) {
	p := testPlan(t)
	p.MaxSeqs = 1
	tr := trace(req{prompt: 2000, output: 3}, req{prompt: 100, output: 3}, req{prompt: 500, output: 3})
	for _, tc := range []struct {
		prio  string
		order []int
	}{{PriorityFCFS, []int{0, 1, 2}}, {PriorityShortest, []int{1, 2, 0}}} {
		p.Priority = tc.prio
		res, _ := simulate(t, p, tr)
		for k := 1; k < 3; k++ {
			a, b := res.Requests[tc.order[k-1]], res.Requests[tc.order[k]]
			if !(a.Finish <= b.FirstScheduled) {
				t.Errorf("%s: request %d (scheduled %s) before %d finished (%s); want order %v", tc.prio, b.ID, b.FirstScheduled, a.ID, a.Finish, tc.order)
			}
		}
	}
}

// Refusals: swap under v1, a request no replica can ever hold, a v0
// prompt over the budget; each error names the request or the key.
func TestRefusals(t *testing.T) {
	p := testPlan(t)
	p.Preemption = PreemptSwap
	if _, err := Simulate(p, trace(req{prompt: 10, output: 2})); err == nil || !strings.Contains(err.Error(), "swap") {
		t.Errorf("swap under v1: %v; want an error naming swap", err)
	}
	p = testPlan(t)
	p.KVBlocks = 10 // 160 tokens; 150 + 12 - 1 = 161 need 11 blocks
	if _, err := Simulate(p, trace(req{prompt: 100, output: 2}, req{prompt: 150, output: 12})); err == nil || !strings.Contains(err.Error(), "request 1") {
		t.Errorf("too long for the KV: %v; want an error naming request 1", err)
	}
	if _, err := Simulate(p, trace(req{prompt: 150, output: 11})); err != nil {
		t.Errorf("150 + 11 - 1 = 160 tokens fit 10 blocks: %v", err)
	}
	p = testPlan(t)
	p.Scheduler, p.MaxBatchedTokens = SchedulerV0, 1024
	if _, err := Simulate(p, trace(req{prompt: 1025, output: 2})); err == nil || !strings.Contains(err.Error(), "request 0") {
		t.Errorf("v0 prompt over the budget: %v; want an error naming request 0", err)
	}
}

// Requests sharing a cached prefix share its KV blocks, so a batch's
// contexts may sum past what the memory would hold unshared. Four
// 120,000-token prompts with the same hashes on one H100-80GB
// (Llama-3.1-8B: 131,072 bytes of KV a token, 28,791 blocks of 16):
// request 0 prefills 7,500 blocks and decodes; requests 1-3 arrive at 60 s
// (request 0 still decoding: 20,000 tokens at about 10 ms each) and hit
// its first 7,499 blocks (119,984 tokens; the last token's block is
// recomputed), taking one private block each for the last 16 prompt
// tokens and two more as they decode. The four then decode together
// with contexts summing to about 4 x 120,000 = 480,000 tokens, more than
// llm.Step's unshared fit check allows ((0.9 x 80 GiB - 16.06 GB of
// weights) / 131,072 B, about 467,300 tokens), though they hold at most
// 8,134 distinct blocks (130,144 tokens). The run must time those steps,
// not refuse them.
func TestSharedPrefixFitsMemory(t *testing.T) {
	p := testPlan(t)
	p.PrefixCaching = true
	hashes := make([]uint64, (120000+511)/512)
	for i := range hashes {
		hashes[i] = uint64(i + 1)
	}
	at := 60 * engine.Second
	res, log := simulate(t, p, trace(req{prompt: 120000, output: 10000, hashes: hashes},
		req{at: at, prompt: 120000, output: 20, hashes: hashes},
		req{at: at, prompt: 120000, output: 20, hashes: hashes},
		req{at: at, prompt: 120000, output: 20, hashes: hashes}))
	for i, r := range res.Requests {
		want := 0
		if i > 0 {
			want = 7499 * 16
		}
		if r.CachedTokens != want || r.Preemptions != 0 || r.Finish == 0 {
			t.Errorf("request %d: cached %d, preemptions %d, finish %s; want %d, 0, finished", i, r.CachedTokens, r.Preemptions, r.Finish, want)
		}
	}
	if r := res.Requests[0]; r.Finish <= res.Requests[3].Finish {
		t.Errorf("request 0 finished at %s, before request 3 (%s): the four never decoded together", r.Finish, res.Requests[3].Finish)
	}
	// The regime the test is about: steps of four decodes (contexts of
	// 120,001 tokens or more each) on at most 8,134 held blocks: request
	// 0's 7,500 prompt blocks and at most ceil(129,999/16) - 7,500 = 625
	// for its output, and 3 private blocks each for requests 1-3 (the
	// duplicate last prompt block, then up to token 120,019).
	over := 0
	for _, l := range log {
		if l.decode == 4 {
			over++
			if l.held > 8134 {
				t.Errorf("step at %s: %d blocks held; want at most 8,134", l.start, l.held)
			}
		}
	}
	if over == 0 {
		t.Errorf("no step decoded all four together")
	}
	if _, err := llm.Step(p.Model, p.Placement, llm.Batch{Decode: []int{120001, 120001, 120001, 120001}}, p.Eff); err == nil {
		t.Errorf("llm.Step fits four unshared 120,001-token contexts; the test no longer exercises the shared-prefix fit")
	}
}

// The prefix-aware router leaves a request's home replica (the longest
// cached prefix) for the least-loaded one when the home's outstanding
// tokens exceed the least-loaded replica's by more than
// RouterBalanceAbs and by more than the factor RouterBalanceRel.
//
// Two replicas. Request 0 (1,024 tokens, hashes 1, 2) runs on replica 0
// and is done by 10 s, leaving 63 blocks of its prompt cached there. At
// 10 s: request 1 (20,000 + 2 tokens, hash 99: no hits; both replicas
// idle, so the lowest index) joins replica 0: 20,002 outstanding tokens.
// Request 2 (8,000 + 2, hash 77: no hits) goes to the fewest tokens,
// replica 1: 8,002. Request 3 (1,024 tokens, hashes 1, 2) has its home
// on replica 0 (63 blocks cached, none on 1); the difference is 20,002 -
// 8,002 = 12,000 tokens and the ratio 20,002 / 8,002 = 2.4996.
func TestPrefixRouterFallsBackOnLoad(t *testing.T) {
	s := 10 * engine.Second
	tr := trace(req{prompt: 1024, output: 2, hashes: []uint64{1, 2}},
		req{at: s, prompt: 20000, output: 2, hashes: []uint64{99}},
		req{at: s, prompt: 8000, output: 2, hashes: []uint64{77}},
		req{at: s, prompt: 1024, output: 2, hashes: []uint64{1, 2}})
	for _, tc := range []struct {
		name string
		abs  int64
		rel  float64
		want int // request 3's replica
	}{
		{"off (abs 0): the cache alone decides", 0, 1.5, 0},
		{"12,000 > 8,192 and 2.4996 > 1.5: the least loaded", 8192, 1.5, 1},
		{"12,000 is not above 12,000: home", 12000, 1, 0},
		{"12,000 > 11,999: the least loaded", 11999, 1, 1},
		{"2.4996 is not above 2.5: home", 1, 2.5, 0},
		{"2.4996 > 2.49: the least loaded", 1, 2.49, 1},
	} {
		p := testPlan(t)
		p.Replicas, p.Router, p.PrefixCaching = 2, RouterPrefix, true
		p.RouterBalanceAbs, p.RouterBalanceRel = tc.abs, tc.rel
		res, _ := simulate(t, p, tr)
		got := []int{res.Requests[0].Replica, res.Requests[1].Replica, res.Requests[2].Replica, res.Requests[3].Replica}
		if want := []int{0, 0, 1, tc.want}; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: replicas %v; want %v", tc.name, got, want)
		}
		// A request sent away from its home finds none of its prefix.
		if c := res.Requests[3].CachedTokens; (c == 1008) != (tc.want == 0) {
			t.Errorf("%s: request 3 cached %d tokens; want 1,008 at home, 0 away", tc.name, c)
		}
		conserved(t, res)
	}
}

// Goodput is the requests meeting the SLO over the span of arrivals, the
// window the load was offered in (first arrival to last, as the offered
// rate), so a short run's drain does not dilute it; throughput keeps the
// span first arrival .. last finish. Where every request arrives at once
// there is no arrival span: goodput falls back to that span and a note
// says so.
func TestGoodputOverArrivals(t *testing.T) {
	p := testPlan(t)
	p.SLO = SLO{TTFT: engine.Second, TPOT: 100 * engine.Millisecond, Quantile: 0.9}
	spread := trace(req{prompt: 100, output: 20}, req{at: engine.Second, prompt: 100, output: 20}, req{at: 2 * engine.Second, prompt: 100, output: 20})
	batch := trace(req{prompt: 100, output: 20}, req{prompt: 100, output: 20})
	for _, tc := range []struct {
		name string
		tr   wllm.Trace
		ttft engine.Time
		// goodput's span; good the requests meeting the SLO.
		span func(res *Result) engine.Time
		good float64
		note bool
	}{
		// Three requests alone, each about 0.2 s: all meet the SLO, over
		// the 2 s of arrivals: 1.5/s, the offered rate.
		{"spread, all meet", spread, engine.Second, func(*Result) engine.Time { return 2 * engine.Second }, 3, false},
		// A 1 ns TTFT bound: none meet.
		{"spread, none meet", spread, 1, func(*Result) engine.Time { return 2 * engine.Second }, 0, false},
		// Both at 0: over 0 .. the last finish.
		{"batch", batch, engine.Second, lastFinish, 2, true},
	} {
		p.SLO.TTFT = tc.ttft
		res, _ := simulate(t, p, tc.tr)
		s := res.Summary
		if want := tc.good / tc.span(res).Seconds(); s.Goodput != want {
			t.Errorf("%s: goodput %v; want %v", tc.name, s.Goodput, want)
		}
		if want := float64(len(res.Requests)) / lastFinish(res).Seconds(); s.RequestsPerSec != want {
			t.Errorf("%s: throughput %v; want %v over first arrival .. last finish", tc.name, s.RequestsPerSec, want)
		}
		noted := slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "goodput") })
		if noted != tc.note {
			t.Errorf("%s: notes %q; want a goodput note: %v", tc.name, res.Notes, tc.note)
		}
	}
}

func lastFinish(res *Result) engine.Time {
	var last engine.Time
	for _, r := range res.Requests {
		last = max(last, r.Finish)
	}
	return last
}

// A run's memory is estimated as BytesPerRequest a request and
// BytesPerTokenGap an output token after the first, and refused past
// MemoryLimit (8 GiB =
// 8,589,934,592 B) naming the key and the fix.
func TestMemoryBound(t *testing.T) {
	many := func(n, output int) wllm.Trace {
		tr := wllm.Trace{Name: "big.csv"}
		for i := range n {
			tr.Requests = append(tr.Requests, wllm.Request{ID: i, PromptTokens: 10, OutputTokens: output})
		}
		return tr
	}
	for _, tc := range []struct {
		name string
		tr   wllm.Trace
		est  float64
		ok   bool
	}{
		// 400,000 x (1,024 + 2,999 x 8) = 10,006,400,000 B: refused.
		{"long outputs", many(400000, 3000), 10006400000, false},
		// 300,000 x (1,024 + 2,999 x 8) = 7,504,800,000 B: within.
		{"fewer requests", many(300000, 3000), 7504800000, true},
		// One-token outputs have no gaps: 1,000 x 1,024 B.
		{"one token each", many(1000, 1), 1024000, true},
	} {
		if got := TraceMemory(tc.tr); got != tc.est {
			t.Errorf("%s: estimate %v B; want %v", tc.name, got, tc.est)
		}
		err := CheckTraceMemory(tc.tr, "workload.trace")
		if tc.ok != (err == nil) {
			t.Errorf("%s: %v; want refused: %v", tc.name, err, !tc.ok)
		}
		if err != nil {
			for _, w := range []string{"workload.trace", "over the 8.0 GiB limit", "window_start"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: %q lacks %q", tc.name, err, w)
				}
			}
		}
	}
}

// A run whose requests each run alone keeps an inter-token latency pair
// per token; past maxITLPairs it stops with ErrTooManyGaps (colocated
// and disaggregated) instead of growing without bound.
func TestTooManyGapsStops(t *testing.T) {
	old := maxITLPairs
	maxITLPairs = 50
	defer func() { maxITLPairs = old }()
	// Two requests a second apart, 40 tokens each: 39 + 39 single-token
	// gaps, past 50.
	tr := trace(req{at: 0, prompt: 100, output: 40}, req{at: engine.Second, prompt: 100, output: 40})
	if _, err := Simulate(testPlan(t), tr); err != ErrTooManyGaps {
		t.Errorf("colocated: err %v; want ErrTooManyGaps", err)
	}
	if _, err := Simulate(pdPlan(t, 1, 1, 1, "gpudirect", false), tr); err != ErrTooManyGaps {
		t.Errorf("disaggregated: err %v; want ErrTooManyGaps", err)
	}
	maxITLPairs = 100
	if _, err := Simulate(testPlan(t), tr); err != nil {
		t.Errorf("78 gaps within 100: %v", err)
	}
}
