package llm

import (
	"fmt"
	"math"
	"slices"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/workloads/trace"
)

// MaxTokens bounds a request's prompt and output lengths: 1e8 tokens, ten
// times the longest context window offered today (10M tokens). A length
// times a per-token time of up to one second then stays within
// engine.Horizon (1e8 s is about 3.2 years of the 100), so the serving
// models may multiply the two without checking; "1e12 output tokens" is
// refused here instead of wrapping the clock there.
const MaxTokens = 100_000_000

// MooncakeBlockTokens is the number of prompt tokens one Mooncake hash id
// covers.
const MooncakeBlockTokens = 512

// Request is one LLM inference request.
type Request struct {
	// ID is the request's position in its trace's arrival order as read
	// (0, 1, ...; ties keep file order). Scale and Window keep it, so a
	// request of a derived trace can be found in the source.
	ID int
	// Arrival is the time since the trace's start, 0..engine.Horizon.
	Arrival engine.Time
	// PromptTokens and OutputTokens are 1..MaxTokens.
	PromptTokens, OutputTokens int
	// BlockHashes holds one id per Trace.BlockTokens-token block of the
	// prompt, in prompt order; equal ids mean an identical prefix block (a
	// prefix-cache hit). nil where the trace has none. Shared between a
	// trace and the traces derived from it: read-only.
	BlockHashes []uint64
}

// Trace is a list of requests in arrival order.
type Trace struct {
	Name   string // the source's name, for messages (a file path, "synthetic")
	Format string // "azure", "mooncake", "burstgpt" or "synthetic"
	// BlockTokens is the number of prompt tokens per BlockHashes entry:
	// 512 for Mooncake, 0 for a trace without hashes.
	BlockTokens int
	// Requests are sorted by Arrival; ties keep file order.
	Requests []Request
	// Notes are remarks on the whole trace, in order: rows sorted, rows
	// left out, the time origin, scaling and windowing applied.
	Notes []string
}

// sortByArrival sorts rs stably by arrival, numbers them 0.. in that
// order, and returns a note when rows were out of order ("" otherwise). A
// row is out of order when it arrives before some earlier row.
func sortByArrival(rs []Request) string {
	late := 0
	var latest engine.Time
	for i, r := range rs {
		if i > 0 && r.Arrival < latest {
			late++
		}
		latest = max(latest, r.Arrival)
	}
	if late > 0 {
		slices.SortStableFunc(rs, func(a, b Request) int {
			switch {
			case a.Arrival < b.Arrival:
				return -1
			case a.Arrival > b.Arrival:
				return 1
			}
			return 0
		})
	}
	for i := range rs {
		rs[i].ID = i
	}
	if late == 0 {
		return ""
	}
	return fmt.Sprintf("%d %s out of order: sorted by arrival (ties keep file order)", late, plural(late, "row", "rows"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Stats summarises a trace.
type Stats struct {
	Requests int
	// Duration is the last arrival minus the first.
	Duration engine.Time
	// Rate is the mean arrival rate in requests per second,
	// (Requests-1)/Duration (the estimate from the gaps between arrivals);
	// 0 when Duration is 0.
	Rate           float64
	Prompt, Output TokenStats
}

// TokenStats summarises one length over a trace's requests. Percentiles
// are nearest-rank: the smallest length that at least that share of the
// requests do not exceed. All zero for an empty trace.
type TokenStats struct {
	Mean          float64
	P50, P99, Max int
}

// Stats returns the trace's statistics.
func (t Trace) Stats() Stats {
	s := Stats{Requests: len(t.Requests)}
	if s.Requests == 0 {
		return s
	}
	s.Duration = t.Requests[len(t.Requests)-1].Arrival - t.Requests[0].Arrival
	if s.Duration > 0 {
		s.Rate = float64(s.Requests-1) / s.Duration.Seconds()
	}
	s.Prompt = tokenStats(t.PromptLengths())
	s.Output = tokenStats(t.OutputLengths())
	return s
}

// String formats the statistics on one line.
func (s Stats) String() string {
	return fmt.Sprintf("%d requests over %s (%.4g/s); prompt tokens mean %.1f p50 %d p99 %d max %d; output tokens mean %.1f p50 %d p99 %d max %d",
		s.Requests, s.Duration, s.Rate,
		s.Prompt.Mean, s.Prompt.P50, s.Prompt.P99, s.Prompt.Max,
		s.Output.Mean, s.Output.P50, s.Output.P99, s.Output.Max)
}

func tokenStats(xs []int) TokenStats {
	if len(xs) == 0 {
		return TokenStats{}
	}
	slices.Sort(xs)
	var sum float64
	for _, x := range xs {
		sum += float64(x)
	}
	return TokenStats{
		Mean: sum / float64(len(xs)),
		P50:  nearestRank(xs, 0.50),
		P99:  nearestRank(xs, 0.99),
		Max:  xs[len(xs)-1],
	}
}

// nearestRank returns the ceil(p*n)-th smallest of the sorted xs.
func nearestRank(sorted []int, p float64) int {
	k := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(k, 0), len(sorted)-1)]
}

// PromptLengths returns every request's prompt length, in arrival order
// (a new slice: to fit a LengthDist to, FitLognormal or Empirical).
func (t Trace) PromptLengths() []int {
	xs := make([]int, len(t.Requests))
	for i, r := range t.Requests {
		xs[i] = r.PromptTokens
	}
	return xs
}

// OutputLengths returns every request's output length, in arrival order.
func (t Trace) OutputLengths() []int {
	xs := make([]int, len(t.Requests))
	for i, r := range t.Requests {
		xs[i] = r.OutputTokens
	}
	return xs
}

// Scale returns the trace at factor times its arrival rate: every arrival
// divided by factor, rounded to the nearest nanosecond, lengths unchanged
// (as workloads/trace.CompressTime does to a cluster trace: factor 2 puts
// the same requests into half the time). It refuses a factor that is not
// a finite number > 0, and one that would put an arrival past
// engine.Horizon. tr is not modified.
func Scale(tr Trace, factor float64) (Trace, error) {
	if !(factor > 0) || math.IsInf(factor, 0) {
		return Trace{}, fmt.Errorf("llm: %s: rate factor %g; want a finite factor > 0 (2 doubles the rate, 0.5 halves it)", tr.Name, factor)
	}
	out := derived(tr, tr.Requests)
	for i := range out.Requests {
		a := math.Round(float64(out.Requests[i].Arrival) / factor)
		if a > float64(engine.Horizon) {
			return Trace{}, fmt.Errorf("llm: %s: rate factor %g puts request %d at %.4g s, past the simulator's horizon (%s, engine.Horizon); use a factor of at least %.3g",
				tr.Name, factor, out.Requests[i].ID, a/float64(engine.Second), engine.HorizonText,
				ceil3(float64(tr.Requests[len(tr.Requests)-1].Arrival)/float64(engine.Horizon)))
		}
		out.Requests[i].Arrival = engine.Time(a)
	}
	out.Notes = append(out.Notes, fmt.Sprintf("rate scaled by %g: arrivals divided by %g", factor, factor))
	return out, nil
}

// Window returns the requests arriving in [from, to), their arrivals
// re-based so that from becomes 0; IDs are kept. It refuses from < 0 and
// to <= from. tr is not modified.
func Window(tr Trace, from, to engine.Time) (Trace, error) {
	if from < 0 || to <= from {
		return Trace{}, fmt.Errorf("llm: %s: window [%s, %s); want 0 <= from < to", tr.Name, from, to)
	}
	lo, _ := slices.BinarySearchFunc(tr.Requests, from, cmpArrival)
	hi, _ := slices.BinarySearchFunc(tr.Requests, to, cmpArrival)
	out := derived(tr, tr.Requests[lo:hi])
	for i := range out.Requests {
		out.Requests[i].Arrival -= from
	}
	out.Notes = append(out.Notes, fmt.Sprintf("window [%s, %s): %d of %d requests, arrivals re-based to %s", from, to, hi-lo, len(tr.Requests), from))
	return out, nil
}

// cmpArrival orders a request against a time, the first request at or
// after t being the search result.
func cmpArrival(r Request, t engine.Time) int {
	switch {
	case r.Arrival < t:
		return -1
	case r.Arrival > t:
		return 1
	}
	return 0
}

// derived returns tr with a copy of rs as its requests and a copy of its
// notes.
func derived(tr Trace, rs []Request) Trace {
	out := tr
	out.Requests = slices.Clone(rs)
	out.Notes = slices.Clone(tr.Notes)
	return out
}

// ParseError is a trace row that cannot be read: the same error as a
// cluster trace's bad row (workloads/trace.RowError, file:line:column,
// the field and the fix), so the command line gives both exit code 2.
type ParseError = trace.RowError

// checkLength returns why n cannot be a length of the named kind, or "".
func checkLength(n int64, what string) string {
	switch {
	case n <= 0:
		return fmt.Sprintf("%d %s tokens; a request has at least 1 (remove the row or correct the count)", n, what)
	case n > MaxTokens:
		return fmt.Sprintf("%d %s tokens is more than %d (llm.MaxTokens, ten times the longest context window); correct the count", n, what, MaxTokens)
	}
	return ""
}

// ceil3 rounds x > 0 up to three significant digits, for a bound in a
// message that must itself satisfy the bound.
func ceil3(x float64) float64 {
	m := math.Pow(10, math.Floor(math.Log10(x))-2)
	return math.Ceil(x/m) * m
}

// quote returns s quoted for a message, cut to 40 bytes.
func quote(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return fmt.Sprintf("%q", s)
}
