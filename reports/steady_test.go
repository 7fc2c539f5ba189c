package reports

import (
	"strings"
	"testing"
)

// SteadyNote by hand: two samples, 4 a100 + 2 t4 + 1 v100 and 4 a100 + 5
// t4 + 3 v100 (7 to 12 GPUs). A policy that held at most 3 a100 and 2 t4,
// the same hours in both seeds, finds all it uses in both. One whose t4
// and v100 hours move between seeds (1 to 3, 2 to 4) but sum to the same
// says so with the share on the a100 every sample holds alike (96 of
// 100 GPU-hours). A CI,
// one seed, or alike samples: nothing to explain.
func TestSteadyNote(t *testing.T) {
	samples := []map[string]int{{"a100": 4, "t4": 2, "v100": 1}, {"a100": 4, "t4": 5, "v100": 3}}
	head := "p gives 100 GPU-hours in every one of its 2 seeds (CI 0) although the sampled cluster holds 7 to 12 GPUs: the samples differ only in t4 (2 to 5), v100 (1 to 3)"
	got := SteadyNote("p", 100, 2, 0, map[string]TypeUse{"a100": {3, 90, 90}, "t4": {2, 10, 10}}, samples)
	want := head + ", and at least 90.0% of its GPU-hours are on types every sample holds alike (a100 4). Every seed gives it the same GPU-hours on each type it uses, a100 (90), t4 (10), and no more GPUs of a type at once than the smallest sample holds: the GPUs the samples differ in are ones it never needs."
	if got != want {
		t.Errorf("fits:\n%s\nwant\n%s", got, want)
	}
	got = SteadyNote("p", 100, 2, 0, map[string]TypeUse{"a100": {4, 96, 96}, "t4": {2, 1, 3}, "v100": {1, 1, 3}}, samples)
	want = head + ", and at least 96.0% of its GPU-hours are on types every sample holds alike (a100 4). Its GPU-hours on a100 (96) are the same in every seed; on t4 (1 to 3, at most 2 at once), v100 (1 to 3, at most 1 at once) they move between seeds but always sum to 4: a sample changes which of these types some of its jobs run on, not how many GPUs it holds for how long."
	if got != want {
		t.Errorf("moved:\n%s\nwant\n%s", got, want)
	}
	if got := SteadyNote("p", 100, 2, 0, nil, samples); !strings.Contains(got, "records no use per GPU type") {
		t.Errorf("no per-type use: %s", got)
	}
	for _, c := range []struct {
		seeds int
		ci    float64
		s     []map[string]int
	}{{2, 1.5, samples}, {1, 0, samples}, {2, 0, []map[string]int{{"a100": 4}, {"a100": 4}}}} {
		if got := SteadyNote("p", 100, c.seeds, c.ci, map[string]TypeUse{"a100": {1, 1, 1}}, c.s); got != "" {
			t.Errorf("%d seeds, CI %v, %v: %q, want nothing", c.seeds, c.ci, c.s, got)
		}
	}
}
