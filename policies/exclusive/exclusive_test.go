package exclusive

import (
	"testing"

	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// Two V100s, one running job on GPU 0 and three pending ones: only GPU 1 is
// free, so the first pending job (ID 2) takes it and the others wait.
func TestOneJobPerGPU(t *testing.T) {
	v100, _ := snapshot.LookupModel("v100")
	cur := snapshot.Placement{JobID: 1, GPU: 0, Fraction: 0.2}
	s := &snapshot.Snapshot{GPUs: []snapshot.GPU{{ID: 0, Model: v100}, {ID: 1, Model: v100}}}
	s.Jobs = append(s.Jobs, snapshot.Job{ID: 1, Options: []snapshot.Option{{Fraction: 0.2}}, Current: &cur})
	for id := 2; id <= 4; id++ {
		s.Jobs = append(s.Jobs, snapshot.Job{ID: id, Options: []snapshot.Option{{Fraction: 0.1}}})
	}
	p, err := snapshot.New("exclusive", nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := p.Schedule(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := snapshot.CheckDecision(s, d); err != nil {
		t.Fatal(err)
	}
	if len(d.Placements) != 2 || d.Placements[1].JobID != 2 || d.Placements[1].GPU != 1 || len(d.Unscheduled) != 2 {
		t.Errorf("decision %+v; want job 1 kept on GPU 0, job 2 on GPU 1, jobs 3 and 4 pending", d)
	}
	if _, err := snapshot.New("exclusive", map[string]string{"x": "1"}); err == nil {
		t.Error("unknown argument accepted")
	}
}
