package reports

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Why a policy's GPU-hours do not vary over seeds (issue 38): each seed
// samples its own servers, yet a policy may give the same GPU-hours in
// every one (a CI of 0, so that a saving's CI comes from the baseline
// alone). The explanation is computed from the run: what the policy used
// of each GPU type (the most held at once in any seed, the range of its
// GPU-hours over the seeds: summary.json's by_type) beside each seed's
// sample (clusters).

// SteadyNote says why policy name's GPU-hours are the same in all its
// seeds, or "" where they vary (ci > 0), there is one seed or one sample,
// or the samples are all alike. use is the policy's use per GPU type,
// samples each seed's GPUs per type.
func SteadyNote(name string, gpuHours float64, seeds int, ci float64, use map[string]TypeUse, samples []map[string]int) string {
	if seeds < 2 || ci != 0 || len(samples) < 2 {
		return ""
	}
	var types []string
	for _, s := range samples {
		for t := range s {
			if !slices.Contains(types, t) {
				types = append(types, t)
			}
		}
	}
	for t := range use {
		if !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	slices.Sort(types)
	lo, hi := map[string]int{}, map[string]int{}
	minGPUs, maxGPUs := -1, 0
	for i, s := range samples {
		n := 0
		for _, t := range types {
			c := s[t] // 0 where the sample lacks the type
			n += c
			if i == 0 || c < lo[t] {
				lo[t] = c
			}
			hi[t] = max(hi[t], c)
		}
		if minGPUs < 0 || n < minGPUs {
			minGPUs = n
		}
		maxGPUs = max(maxGPUs, n)
	}
	var differ, alike []string
	for _, t := range types {
		if lo[t] != hi[t] {
			differ = append(differ, fmt.Sprintf("%s (%d to %d)", t, lo[t], hi[t]))
		} else if lo[t] > 0 {
			alike = append(alike, fmt.Sprintf("%s %d", t, lo[t]))
		}
	}
	if len(differ) == 0 {
		return "" // the samples are alike: nothing to explain
	}
	head := fmt.Sprintf("%s gives %s GPU-hours in every one of its %d seeds (CI 0) although the sampled cluster holds %d to %d GPUs: the samples differ only in %s", name, fmtSig(gpuHours), seeds, minGPUs, maxGPUs, strings.Join(differ, ", "))
	if len(use) == 0 {
		return head + "; this result records no use per GPU type (by_type), so it cannot say which part of the cluster the policy used."
	}
	var same, moved []string
	sameHours, alikeHours, fits := 0.0, 0.0, true
	for _, t := range types {
		u, used := use[t]
		if !used {
			continue
		}
		fits = fits && u.Peak <= lo[t]
		if lo[t] == hi[t] {
			alikeHours += u.HoursMin
		}
		if math.Abs(u.HoursMax-u.HoursMin) <= 1e-9*math.Max(1, u.HoursMax) {
			same = append(same, fmt.Sprintf("%s (%s)", t, fmtSig(u.HoursMax)))
			sameHours += u.HoursMax
		} else {
			moved = append(moved, fmt.Sprintf("%s (%s to %s, at most %d at once)", t, fmtSig(u.HoursMin), fmtSig(u.HoursMax), u.Peak))
		}
	}
	s := head
	if len(alike) > 0 {
		s += fmt.Sprintf(", and at least %s of its GPU-hours are on types every sample holds alike (%s)", fmtPct(alikeHours/gpuHours), strings.Join(alike, ", "))
	}
	if fits && len(moved) == 0 {
		return s + fmt.Sprintf(". Every seed gives it the same GPU-hours on each type it uses, %s, and no more GPUs of a type at once than the smallest sample holds: the GPUs the samples differ in are ones it never needs.", strings.Join(same, ", "))
	}
	if len(same) > 0 {
		s += fmt.Sprintf(". Its GPU-hours on %s are the same in every seed", strings.Join(same, ", "))
	}
	if len(moved) > 0 {
		s += fmt.Sprintf("; on %s they move between seeds but always sum to %s: a sample changes which of these types some of its jobs run on, not how many GPUs it holds for how long", strings.Join(moved, ", "), fmtSig(gpuHours-sameHours))
	}
	return s + "."
}
