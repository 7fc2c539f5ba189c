package fgd

import (
	"math"
	"testing"

	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// Target workload: tasks of 0.5 GPU only. V100 GPU 0 has 0.5 free, GPU 1
// 0.7 free, GPU 2 is empty. A 0.2 task:
//
//	GPU 0: F before = 0 (0.5 free serves a 0.5 task); after, 0.3 free < 0.5
//	       is all fragment: Delta = +0.3.
//	GPU 1: 0.7 -> 0.5 free, both serve 0.5: Delta = 0.
//	GPU 2: 1 -> 0.8: Delta = 0; tie with GPU 1, lower ID wins: GPU 1.
//
// First fit would take GPU 0.
func TestFGDMinimisesFragmentationIncrease(t *testing.T) {
	v100, _ := snapshot.LookupModel("v100")
	c0 := snapshot.Placement{JobID: 0, GPU: 0, Fraction: 0.5}
	c1 := snapshot.Placement{JobID: 1, GPU: 1, Fraction: 0.3}
	s := &snapshot.Snapshot{
		GPUs: []snapshot.GPU{{ID: 0, Model: v100}, {ID: 1, Model: v100}, {ID: 2, Model: v100}},
		Jobs: []snapshot.Job{
			{ID: 0, Options: []snapshot.Option{{Fraction: 0.5}}, Current: &c0},
			{ID: 1, Options: []snapshot.Option{{Fraction: 0.3}}, Current: &c1},
			{ID: 2, Options: []snapshot.Option{{Fraction: 0.2}}},
		},
	}
	p := &Policy{}
	p.SetWorkload([]Class{{Demand: 0.5, Weight: 3}})
	d, err := p.Schedule(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := snapshot.CheckDecision(s, d); err != nil {
		t.Fatal(err)
	}
	if got := d.Placements[2]; got.GPU != 1 {
		t.Errorf("job 2 on GPU %d, want 1", got.GPU)
	}
}

// The fragment measure against its definition: classes 0.25 (weight 1),
// 0.75 (weight 3) and a T4-only class (weight 4), normalised to 1/8, 3/8,
// 4/8. On a V100 with 0.5 free: the 0.75 class cannot fit (3/8) and the
// T4 class cannot use a V100 (4/8): F = 0.5 x 7/8 = 0.4375. With 1.0 free
// only the T4 class: 0.5. With 0.2 free all: 0.2.
func TestFragmentMeasure(t *testing.T) {
	tab := buildTable("v100", []Class{{Demand: 0.25, Weight: 1}, {Demand: 0.75, Weight: 3}, {Demand: 0.1, Types: []string{"t4"}, Weight: 4}})
	for _, c := range []struct{ free, want float64 }{{0.5, 0.4375}, {1, 0.5}, {0.2, 0.2}, {0, 0}} {
		if got := tab.frag(c.free); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("F(free %v) = %v, want %v", c.free, got, c.want)
		}
	}
}
