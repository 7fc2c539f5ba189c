package reports

import "fmt"

// SeedsText names the seeds a run's numbers come from: "seed 1" for one,
// "seeds 1-10 (means over 10 seeds)" where the run is many seeds
// (cluster.seeds, training.seeds, allocation.seeds), whose first is the
// scenario's seed.
func SeedsText(first uint64, n int) string {
	if n <= 1 {
		return fmt.Sprintf("seed %d", first)
	}
	return fmt.Sprintf("seeds %d-%d (means over %d seeds)", first, first+uint64(n)-1, n)
}

// FewSeedsCaveat is what a 95% CI over n seeds needs said beside it where
// n is 2: Student t of one degree of freedom puts its half-width at 12.7
// standard errors, so the interval says next to nothing. "" for one seed
// (no CI at all) and for three or more.
func FewSeedsCaveat(n int) string {
	if n != 2 {
		return ""
	}
	return "(2 seeds: CI not meaningful, Student t of 1 degree of freedom is 12.7 standard errors wide; use 3 or more)"
}

// seedCount is how many seeds r's means are over: the most of its
// cluster, training and allocation sections (1 for a data-path run).
func (r Result) seedCount() int {
	n := 1
	if len(r.Policies) > 0 {
		n = max(n, r.Policies[0].Seeds)
	}
	if t := r.Training; t != nil && len(t.Policies) > 0 {
		n = max(n, t.Policies[0].Seeds)
	}
	for _, a := range r.Allocation {
		for _, at := range a.At {
			n = max(n, at.Seeds)
		}
	}
	return n
}
