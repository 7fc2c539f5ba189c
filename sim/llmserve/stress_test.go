package llmserve

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	wllm "github.com/conspirator-sim/conspirator/workloads/llm"
)

// withHashes gives tr's requests Mooncake-style hashes: one id per 512
// prompt tokens, the first few drawn from 4 shared prefixes (so requests
// share leading blocks), the rest unique.
func withHashes(tr wllm.Trace, rng *engine.Stream) wllm.Trace {
	tr.BlockTokens = wllm.MooncakeBlockTokens
	next := uint64(1000)
	rs := make([]wllm.Request, len(tr.Requests))
	for i, q := range tr.Requests {
		n := (q.PromptTokens + 511) / 512
		h := make([]uint64, n)
		prefix, shared := uint64(rng.IntN(4)), rng.IntN(n+1)
		for j := range h {
			if j < shared {
				h[j] = prefix*100 + uint64(j)
			} else {
				h[j] = next
				next++
			}
		}
		q.BlockHashes = h
		rs[i] = q
	}
	tr.Requests = rs
	return tr
}

// Every combination of scheduler, preemption, queue order, router and
// prefix caching under a KV cache small enough to preempt often: the
// invariant checker passes on every step, every request completes with
// its tokens, and the run is deterministic.
func TestStress(t *testing.T) {
	rng := engine.NewStream(11, "stress")
	base := synthetic(t, 200, 30, 13)
	// Shorter lengths so a few thousand blocks press.
	for i := range base.Requests {
		base.Requests[i].PromptTokens = 1 + base.Requests[i].PromptTokens%3000
		base.Requests[i].OutputTokens = 1 + base.Requests[i].OutputTokens%400
	}
	hashed := withHashes(base, rng)
	for _, sched := range []string{SchedulerV1, SchedulerV0} {
		for _, pre := range []string{PreemptRecompute, PreemptSwap} {
			if pre == PreemptSwap && sched == SchedulerV1 {
				continue
			}
			for _, prio := range []string{PriorityFCFS, PriorityShortest} {
				for _, router := range []string{RouterRoundRobin, RouterLeastTokens, RouterPrefix} {
					for _, caching := range []bool{false, true} {
						name := fmt.Sprintf("%s/%s/%s/%s/cache=%v", sched, pre, prio, router, caching)
						p := testPlan(t)
						p.Scheduler, p.Preemption, p.Priority, p.Router, p.PrefixCaching = sched, pre, prio, router, caching
						p.Replicas, p.KVBlocks, p.MaxBatchedTokens, p.MaxSeqs = 2, 260, 4096, 64
						// The prefix router's fall-back to load, at a few
						// thousand tokens, so that it fires under this load.
						p.RouterBalanceAbs, p.RouterBalanceRel = 2000, 1.2
						a, _ := simulate(t, p, hashed)
						b, err := Simulate(p, hashed)
						if err != nil {
							t.Fatal(name, err)
						}
						if !equalResults(a, b) {
							t.Errorf("%s: not deterministic", name)
						}
						conserved(t, a)
						if a.Preemptions == 0 {
							t.Errorf("%s: no preemption with 260 blocks", name)
						}
						cached := 0
						for _, r := range a.Requests {
							cached += r.CachedTokens
						}
						if caching != (cached > 0) {
							t.Errorf("%s: %d cached tokens", name, cached)
						}
					}
				}
			}
		}
	}
}

func equalResults(a, b *Result) bool { return reflect.DeepEqual(a, b) }
