package trace

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/workloads"
)

// Stats summarises an imported trace; it backs `conspirator trace inspect`.
type Stats struct {
	Format, Source      string
	Read, Used          int
	Rejected            int
	RejectCounts        []KindCount // by count, descending, then kind
	FirstRejections     []Rejection // at most 5
	Notes               []string
	Jobs                int
	First, Last         engine.Time // earliest and latest arrival
	Span                engine.Time // Last - First
	ArrivalRatePerHour  float64     // (Jobs-1)/Span: the Poisson rate estimate; 0 if Span is 0
	ByNumGPU            []Count     // jobs per GPU count, ascending
	ByGPUMilli          []Bucket    // jobs per per-GPU share bucket
	ConstrainedGPUTypes int         // jobs that name allowed GPU types
	Tenants             int         // distinct non-empty tenants
	// Durations of jobs with a known run time (Duration > 0): nearest-rank
	// percentiles of the sorted run times.
	KnownDurations, Censored int
	MeanDuration             engine.Time
	P50, P90, P99, MaxDur    engine.Time
	GPUHours                 float64 // sum of NumGPU x GPUMilli/1000 x Duration
	Nodes, NodeGPUs          int
	NodesByGPUType           []KindCount // GPU nodes per type, by count then type
}

// KindCount is a named count.
type KindCount struct {
	Kind  string
	Count int
}

// Count is the number of jobs with one value of an integer field.
type Count struct{ Value, Jobs int }

// Bucket is the number of jobs whose per-GPU share lies in [Lo, Hi] milli.
type Bucket struct {
	Lo, Hi int
	Jobs   int
}

// gpuMilliEdges are the upper bounds of the share buckets: small slices
// (<=10%), quarter, half, three quarters, most of a GPU, a whole GPU.
var gpuMilliEdges = []int{100, 250, 500, 750, 999, 1000}

// Inspect computes the statistics of an import.
func Inspect(res Result) Stats {
	s := Stats{Format: res.Format, Source: res.Source, Read: res.Read, Used: res.Used,
		Rejected: res.RejectedTotal(), Notes: res.Notes, Jobs: len(res.Jobs), Nodes: len(res.Nodes)}
	for k, c := range res.RejectCounts {
		s.RejectCounts = append(s.RejectCounts, KindCount{k, c})
	}
	sortCounts(s.RejectCounts)
	s.FirstRejections = res.Rejected[:min(5, len(res.Rejected))]

	lo := 1
	for _, hi := range gpuMilliEdges {
		s.ByGPUMilli = append(s.ByGPUMilli, Bucket{Lo: lo, Hi: hi})
		lo = hi + 1
	}
	byGPU := map[int]int{}
	tenants := map[string]bool{}
	var durs []engine.Time
	var sum float64
	for i, j := range res.Jobs {
		if i == 0 || j.Arrival < s.First {
			s.First = j.Arrival
		}
		s.Last = max(s.Last, j.Arrival)
		byGPU[j.NumGPU]++
		for b := range s.ByGPUMilli {
			if j.GPUMilli >= s.ByGPUMilli[b].Lo && j.GPUMilli <= s.ByGPUMilli[b].Hi {
				s.ByGPUMilli[b].Jobs++
			}
		}
		if len(j.GPUTypes) > 0 {
			s.ConstrainedGPUTypes++
		}
		if j.Tenant != "" {
			tenants[j.Tenant] = true
		}
		if j.Censored {
			s.Censored++
		}
		if j.Duration > 0 {
			durs = append(durs, j.Duration)
			sum += j.Duration.Seconds()
		}
		s.GPUHours += j.GPUHours()
	}
	s.Tenants = len(tenants)
	s.Span = s.Last - s.First
	if s.Span > 0 {
		s.ArrivalRatePerHour = float64(s.Jobs-1) / (s.Span.Seconds() / 3600)
	}
	for v, n := range byGPU {
		s.ByNumGPU = append(s.ByNumGPU, Count{v, n})
	}
	slices.SortFunc(s.ByNumGPU, func(a, b Count) int { return a.Value - b.Value })
	if n := len(durs); n > 0 {
		slices.Sort(durs)
		s.KnownDurations = n
		s.MeanDuration = engine.Seconds(sum / float64(n))
		s.P50, s.P90, s.P99 = percentile(durs, 50), percentile(durs, 90), percentile(durs, 99)
		s.MaxDur = durs[n-1]
	}
	byType := map[string]int{}
	for _, n := range res.Nodes {
		s.NodeGPUs += n.NumGPU
		if n.NumGPU > 0 {
			byType[n.GPUType]++
		}
	}
	for k, c := range byType {
		s.NodesByGPUType = append(s.NodesByGPUType, KindCount{k, c})
	}
	sortCounts(s.NodesByGPUType)
	return s
}

func sortCounts(c []KindCount) {
	slices.SortFunc(c, func(a, b KindCount) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return cmp.Compare(a.Kind, b.Kind)
	})
}

// percentile returns the nearest-rank p-th percentile of sorted values: the
// smallest value with at least p% of the values at or below it.
func percentile(sorted []engine.Time, p float64) engine.Time {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// WriteText prints the statistics for a person to read.
func (s Stats) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "trace    %s (format %s)\n", s.Source, s.Format)
	fmt.Fprintf(&b, "rows     read %d, used %d, rejected %d\n", s.Read, s.Used, s.Rejected)
	for _, c := range s.RejectCounts {
		fmt.Fprintf(&b, "  %6d  %s\n", c.Count, c.Kind)
	}
	for _, r := range s.FirstRejections {
		col := ""
		if r.Column != "" {
			col = " " + r.Column
		}
		fmt.Fprintf(&b, "  row %d%s: %s\n", r.Row, col, r.Reason)
	}
	for _, n := range s.Notes {
		fmt.Fprintf(&b, "note     %s\n", n)
	}
	if s.Nodes > 0 {
		fmt.Fprintf(&b, "nodes    %d with %d GPUs\n", s.Nodes, s.NodeGPUs)
		for _, c := range s.NodesByGPUType {
			fmt.Fprintf(&b, "  %6d  %s\n", c.Count, c.Kind)
		}
	}
	if s.Jobs == 0 {
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "jobs     %d, arrivals over %s (%.2f days), %.2f jobs/hour\n",
		s.Jobs, s.Span, s.Span.Seconds()/86400, s.ArrivalRatePerHour)
	fmt.Fprintf(&b, "tenants  %d; %d jobs constrained to GPU types\n", s.Tenants, s.ConstrainedGPUTypes)
	b.WriteString("num_gpu ")
	for _, c := range s.ByNumGPU {
		fmt.Fprintf(&b, " %d:%d (%.1f%%)", c.Value, c.Jobs, 100*float64(c.Jobs)/float64(s.Jobs))
	}
	b.WriteString("\ngpu_milli")
	for _, c := range s.ByGPUMilli {
		fmt.Fprintf(&b, " %d-%d:%d", c.Lo, c.Hi, c.Jobs)
	}
	b.WriteString("\n")
	if s.KnownDurations > 0 {
		fmt.Fprintf(&b, "duration %d known (%d censored): mean %s, p50 %s, p90 %s, p99 %s, max %s\n",
			s.KnownDurations, s.Censored, s.MeanDuration, s.P50, s.P90, s.P99, s.MaxDur)
		fmt.Fprintf(&b, "demand   %.1f GPU-hours\n", s.GPUHours)
	} else {
		b.WriteString("duration unknown (arrival-only)\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Rate returns the arrival rate of jobs in jobs per hour, (n-1)/span: the
// maximum-likelihood rate of a Poisson process observed from its first to
// its last arrival. It is 0 for fewer than two jobs or a zero span.
func Rate(jobs []workloads.Job) float64 {
	if len(jobs) < 2 {
		return 0
	}
	first, last := jobs[0].Arrival, jobs[0].Arrival
	for _, j := range jobs {
		first, last = min(first, j.Arrival), max(last, j.Arrival)
	}
	if last == first {
		return 0
	}
	return float64(len(jobs)-1) / ((last - first).Seconds() / 3600)
}
