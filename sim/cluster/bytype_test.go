package cluster

import (
	"math"
	"reflect"
	"testing"

	"github.com/conspirator-sim/conspirator/workloads"
)

// meanByType by hand: seed 1 used a (2 at once, 10 GPU-hours) and b (1,
// 5); seed 2 a (3, 12) and no b. Over the seeds: a at most 3, 10 to 12;
// b at most 1, 0 (seed 2) to 5.
func TestMeanByType(t *testing.T) {
	runs := []seedRun{
		{policies: []PolicyResult{{ByType: map[string]TypeUse{"a": {2, 10, 10}, "b": {1, 5, 5}}}}},
		{policies: []PolicyResult{{ByType: map[string]TypeUse{"a": {3, 12, 12}}}}},
	}
	want := map[string]TypeUse{"a": {3, 10, 12}, "b": {1, 0, 5}}
	if got := meanByType(runs, 0); !reflect.DeepEqual(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
}

// A replay records its use per type: two jobs of 1000 s and 500 s one
// after the other on one A100 hold it 1500 s, one GPU at most, so
// by_type is that A100's 1 GPU and 1500 s, the run's whole GPU-hours.
func TestByTypeOfAReplay(t *testing.T) {
	a := job("a", 0, 1000, 1000)
	a.Censored, a.QoS = true, "BE"
	w := job("waits", 10, 500, 1000)
	w.Censored, w.QoS = true, "BE"
	c := small([]workloads.Job{a, w}, "a100-80gb", 1, "exclusive")
	p := mustRun(t, c).Policies[0]
	want := map[string]TypeUse{"a100-80gb": {Peak: 1, HoursMin: 1500.0 / 3600, HoursMax: 1500.0 / 3600}}
	if len(p.ByType) != 1 || p.ByType["a100-80gb"].Peak != 1 || math.Abs(p.ByType["a100-80gb"].HoursMax-p.GPUHours) > 1e-12 ||
		math.Abs(p.ByType["a100-80gb"].HoursMin-want["a100-80gb"].HoursMin) > 1e-12 {
		t.Errorf("by type %+v (GPU-hours %v), want %+v", p.ByType, p.GPUHours, want)
	}
}
