package naiveshare

import (
	"testing"

	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// GPU 0 is a T4, GPU 1 a V100 (faster: naive-share does not care). Jobs
// in order: 0.5 (tenant a) -> GPU 0; 0.4 (a) -> GPU 0 (0.9); 0.3 (b) ->
// GPU 1 (GPU 0 serves tenant a); 0.2 (a) -> GPU 0 would reach 1.1, GPU 1
// serves b -> pending.
func TestFirstFitByFractionPerTenant(t *testing.T) {
	t4, _ := snapshot.LookupModel("t4")
	v100, _ := snapshot.LookupModel("v100")
	s := &snapshot.Snapshot{GPUs: []snapshot.GPU{{ID: 0, Model: t4}, {ID: 1, Model: v100}}}
	for k, c := range []struct {
		f      float64
		tenant string
	}{{0.5, "a"}, {0.4, "a"}, {0.3, "b"}, {0.2, "a"}} {
		s.Jobs = append(s.Jobs, snapshot.Job{ID: k, Tenant: c.tenant, Options: []snapshot.Option{
			{GPUType: "t4", Fraction: c.f, Speed: 0.5}, {GPUType: "v100", Fraction: c.f, Speed: 1}}})
	}
	p, _ := snapshot.New("naive-share", nil)
	d, err := p.Schedule(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := snapshot.CheckDecision(s, d); err != nil {
		t.Fatal(err)
	}
	want := map[int]int{0: 0, 1: 0, 2: 1}
	for _, pl := range d.Placements {
		if g, ok := want[pl.JobID]; !ok || g != pl.GPU {
			t.Errorf("job %d on GPU %d; want %v", pl.JobID, pl.GPU, want)
		}
	}
	if len(d.Placements) != 3 || len(d.Unscheduled) != 1 || d.Unscheduled[0] != 3 {
		t.Errorf("decision %+v; want job 3 pending", d)
	}
}
