package cluster

import "github.com/conspirator-sim/conspirator/engine/stats"

// callLog gathers the wall-clock time of every policy call by snapshot
// size. It feeds Timing only, never the deterministic result.
type callLog struct {
	calls   []Call
	dropped int
	bucket  [len(SizeBuckets)]stats.Tally // one per SizeBuckets entry
	gpus    [len(SizeBuckets)]int         // summed GPUs per bucket
	large   stats.Tally
}

func (l *callLog) add(c Call) {
	if len(l.calls) < MaxCalls {
		l.calls = append(l.calls, c)
	} else {
		l.dropped++
	}
	b := sizeBucket(c.Jobs)
	l.bucket[b].Add(c.US)
	l.gpus[b] += c.GPUs
	if c.Jobs >= LargeJobs {
		l.large.Add(c.US)
	}
}

// fill writes the log into t.
func (l *callLog) fill(t *Timing) {
	t.Calls, t.CallsDropped = l.calls, l.dropped
	t.LargeUS, t.LargeCalls = summarize(&l.large), l.large.Count()
	for b, lo := range SizeBuckets {
		n := l.bucket[b].Count()
		if n == 0 {
			continue
		}
		hi := 0
		if b+1 < len(SizeBuckets) {
			hi = SizeBuckets[b+1] - 1
		}
		t.BySize = append(t.BySize, SizeBucket{MinJobs: lo, MaxJobs: hi, Calls: n,
			DecisionUS: summarize(&l.bucket[b]), MeanGPUs: float64(l.gpus[b]) / float64(n)})
	}
}
