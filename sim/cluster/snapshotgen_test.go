package cluster

import (
	"reflect"
	"testing"

	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// SyntheticSnapshot is deterministic, valid, and its options follow the
// fitting rule of the package documentation: a share s may use a profile
// of k compute and m memory slices when k/7 >= s and m/8 >= s. Hand-derived
// for A100-40GB: share 1.0 and 0.81 allow only 7g.40gb; 0.47 allows
// 4g.20gb (4/7 = 0.57, 4/8 = 0.5) and 7g.40gb; 0.32 allows 3g.20gb, 4g and
// 7g (2g.10gb has 2/7 = 0.29 < 0.32).
func TestSyntheticSnapshot(t *testing.T) {
	want := map[string][]string{"7g.40gb": {"7g.40gb"}, "4g.20gb": {"4g.20gb", "7g.40gb"}, "3g.20gb": {"3g.20gb", "4g.20gb", "7g.40gb"}}
	for _, size := range [][2]int{{0, 1}, {5, 2}, {20, 8}, {30, 8}} {
		a, err := SyntheticSnapshot(3, size[0], size[1])
		if err != nil {
			t.Fatal(err)
		}
		b, _ := SyntheticSnapshot(3, size[0], size[1])
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%v: two calls with the same seed differ", size)
		}
		if len(a.Jobs) != size[0] || len(a.GPUs) != size[1] {
			t.Errorf("%v: %d jobs on %d GPUs", size, len(a.Jobs), len(a.GPUs))
		}
		if err := snapshot.CheckSnapshot(a); err != nil {
			t.Errorf("%v: %v", size, err)
		}
		running := 0
		for _, j := range a.Jobs {
			if j.Current != nil {
				running++
			}
			if w, ok := want[j.Options[0].Profile]; ok {
				var got []string
				for _, o := range j.Options {
					got = append(got, o.Profile)
				}
				if !reflect.DeepEqual(got, w) {
					t.Errorf("%v job %d: options %v, want %v", size, j.ID, got, w)
				}
			}
		}
		if size[0] >= 20 && (running == 0 || running == size[0]) {
			t.Errorf("%v: %d running of %d; want some running and some pending", size, running, size[0])
		}
	}
	if _, err := SyntheticSnapshot(1, 5, 0); err == nil {
		t.Error("0 GPUs accepted")
	}
}
