package llmserve

import (
	"cmp"
	"math"
	"slices"

	"github.com/conspirator-sim/conspirator/engine"
)

// itlCounts holds the inter-token latencies exactly, as (latency, count)
// pairs: a step that gives n requests their next token right after their
// previous one adds one pair, so memory grows with steps, not tokens.
type itlCounts struct {
	chunks chunked[itlPair]
	pairs  []itlPair
	n      int64
	kept   int64
	over   bool // kept reached maxITLPairs: the run must stop
}

type itlPair struct {
	d engine.Time
	n int64
}

func (s *itlCounts) add(d engine.Time, n int) {
	if s.kept >= maxITLPairs {
		s.over = true
		return
	}
	s.kept++
	s.chunks.add(itlPair{d, int64(n)})
	s.n += int64(n)
}

// quantiles sorts the pairs and returns their weighted quantiles in
// seconds (nearest rank).
func (s *itlCounts) quantiles() Quantiles {
	if s.n == 0 {
		return Quantiles{}
	}
	s.pairs = s.chunks.all()
	slices.SortFunc(s.pairs, func(a, b itlPair) int { return cmp.Compare(a.d, b.d) })
	var sum float64
	for _, p := range s.pairs {
		sum += p.d.Seconds() * float64(p.n)
	}
	at := func(q float64) float64 {
		rank := int64(math.Ceil(q * float64(s.n)))
		var seen int64
		for _, p := range s.pairs {
			seen += p.n
			if seen >= rank {
				return p.d.Seconds()
			}
		}
		return s.pairs[len(s.pairs)-1].d.Seconds()
	}
	return Quantiles{Mean: sum / float64(s.n), P50: at(0.5), P90: at(0.9), P99: at(0.99)}
}

// quantilesOf sorts xs (seconds) and returns their quantiles (nearest
// rank).
func quantilesOf(xs []float64) Quantiles {
	if len(xs) == 0 {
		return Quantiles{}
	}
	slices.Sort(xs)
	var sum float64
	for _, x := range xs {
		sum += x
	}
	at := func(q float64) float64 { return xs[max(int(math.Ceil(q*float64(len(xs))))-1, 0)] }
	return Quantiles{Mean: sum / float64(len(xs)), P50: at(0.5), P90: at(0.9), P99: at(0.99)}
}

// meetsSLO says whether a completed request meets both bounds (a zero
// bound is no bound).
func (s SLO) meets(r *RequestRecord) bool {
	return (s.TTFT == 0 || r.TTFT() <= s.TTFT) && (s.TPOT == 0 || r.TPOT() <= s.TPOT)
}

func (c *cluster) result(events int64) *Result {
	res := &Result{Requests: c.records, Samples: c.samples.all(), Steps: c.steps, Events: events, Preemptions: c.preemptions, GeneratedTokens: c.outputTokens}
	s := &res.Summary
	n := len(c.records)
	ttft, tpot, e2e, queue := make([]float64, 0, n), make([]float64, 0, n), make([]float64, 0, n), make([]float64, 0, n)
	var first, last, lastArrival engine.Time = engine.MaxTime, 0, 0
	var promptTok, outTok, cachedTok, fetchedTok int64
	good := 0
	for i := range c.records {
		r := &c.records[i]
		first = min(first, r.Arrival)
		lastArrival = max(lastArrival, r.Arrival)
		if r.Rejected {
			s.Rejected++
			continue
		}
		s.Completed++
		last = max(last, r.Finish)
		promptTok += int64(r.PromptTokens)
		cachedTok += int64(r.CachedTokens)
		fetchedTok += int64(r.FetchedTokens)
		outTok += int64(r.OutputTokens)
		ttft = append(ttft, r.TTFT().Seconds())
		if r.OutputTokens > 1 {
			tpot = append(tpot, r.TPOT().Seconds())
		}
		e2e = append(e2e, r.E2E().Seconds())
		queue = append(queue, r.Queue().Seconds())
		if c.p.SLO.meets(r) {
			good++
		}
	}
	res.Rejected = s.Rejected
	s.TTFT, s.TPOT, s.E2E, s.Queue = quantilesOf(ttft), quantilesOf(tpot), quantilesOf(e2e), quantilesOf(queue)
	s.ITL = c.itl.quantiles()
	if s.Completed > 0 {
		if span := (last - first).Seconds(); span > 0 {
			s.RequestsPerSec = float64(s.Completed) / span
			s.OutputTokensPerSec = float64(outTok) / span
			s.TokensPerSec = float64(promptTok+outTok) / span
		}
		// Goodput is over the arrivals' span, the window the load was
		// offered in, as the offered rate is: it is then that rate times
		// the share of requests meeting the SLO, the rate DistServe and
		// Vidur judge served within the SLO (their goodput or capacity is
		// the highest such rate, our capacity search). Over first
		// arrival .. last finish, as throughput, the drain would dilute
		// it: requests arriving over 10 s and draining for 5 s would
		// read two thirds of the rate they were served at.
		span := lastArrival - first
		if span <= 0 {
			span = last - first
			c.note("goodput is over first arrival .. last finish: every request arrived at once, so there is no span of arrivals")
		}
		if span > 0 {
			s.Goodput = float64(good) / span.Seconds()
		}
		// A request refused by the admission limit missed the SLO: over
		// completed requests alone, refusing the slow ones would raise
		// attainment.
		s.SLOAttainment = float64(good) / float64(s.Completed+s.Rejected)
		if promptTok > 0 {
			s.PrefixHitShare = float64(cachedTok) / float64(promptTok)
			s.FetchedShare = float64(fetchedTok) / float64(promptTok)
		}
	}
	if c.steps > 0 {
		s.MeanBatch = c.batchSum / float64(c.steps)
		s.MeanKVUsed = c.kvSum / float64(c.steps)
	}
	s.PeakKVUsed = c.kvPeak
	s.Preemptions = c.preemptions
	res.Notes = c.notes
	return res
}

// chunked is an append-only list kept in fixed-size chunks, so that a
// long run grows it without copying (a million steps' samples would
// otherwise be copied at every doubling); all joins it once.
type chunked[T any] struct {
	full [][]T
	cur  []T
	n    int
}

const chunkLen = 8192

func (c *chunked[T]) add(v T) {
	if len(c.cur) == cap(c.cur) {
		if c.cur != nil {
			c.full = append(c.full, c.cur)
		}
		c.cur = make([]T, 0, chunkLen)
	}
	c.cur = append(c.cur, v)
	c.n++
}

func (c *chunked[T]) all() []T {
	out := make([]T, 0, c.n)
	for _, f := range c.full {
		out = append(out, f...)
	}
	return append(out, c.cur...)
}
