package conspirator

import (
	"testing"

	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

func run(t *testing.T, args map[string]string, s *snapshot.Snapshot) snapshot.Decision {
	t.Helper()
	p, err := snapshot.New("conspirator", args)
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
	return d
}

// A whole-GPU job may run on a T4 (speed 0.16) or an A100 7g (speed 1):
// costs 1/0.16 and 1/1, so the A100 (GPU 1) wins although GPU 0 comes first.
func TestPrefersFasterGPU(t *testing.T) {
	t4, _ := snapshot.LookupModel("t4")
	a100, _ := snapshot.LookupModel("a100-40gb")
	s := &snapshot.Snapshot{GPUs: []snapshot.GPU{{ID: 0, Model: t4}, {ID: 1, Model: a100}},
		Jobs: []snapshot.Job{{ID: 0, Options: []snapshot.Option{{GPUType: "t4", Fraction: 1, Speed: 0.16}, {GPUType: "a100-40gb", Profile: "7g.40gb", Speed: 1}}}}}
	if d := run(t, nil, s); d.Placements[0].GPU != 1 {
		t.Errorf("placed on GPU %d, want 1 (A100)", d.Placements[0].GPU)
	}
}

// twoGPUs: GPU 0 runs A on 3g.20gb@4, GPU 1 runs B on 4g.20gb@0.
func twoGPUs() *snapshot.Snapshot {
	a100, _ := snapshot.LookupModel("a100-40gb")
	ca := snapshot.Placement{JobID: 0, GPU: 0, Profile: "3g.20gb", Start: 4}
	cb := snapshot.Placement{JobID: 1, GPU: 1, Profile: "4g.20gb", Start: 0}
	return &snapshot.Snapshot{
		GPUs: []snapshot.GPU{
			{ID: 0, Model: a100, Instances: []snapshot.Instance{{Profile: "3g.20gb", Start: 4}}},
			{ID: 1, Model: a100, Instances: []snapshot.Instance{{Profile: "4g.20gb", Start: 0}}},
		},
		Jobs: []snapshot.Job{
			{ID: 0, Tenant: "x", Options: []snapshot.Option{{Profile: "3g.20gb"}}, Current: &ca, MigrationCost: 1},
			{ID: 1, Tenant: "y", Options: []snapshot.Option{{Profile: "4g.20gb"}}, Current: &cb, MigrationCost: 1},
		},
	}
}

// Consolidation, where room appeared: with GPU 0 freed (a job left it),
// GPU 0 (one job, 4/7 free) is a source; A fits GPU 1 at 3g@4 next to
// another tenant's 4g (MIG isolates), saving a GPU worth e1 = 1 for
// e2 x m = 0.1. With GPU 1 freed instead, B moves to GPU 0 at 4g@0 (the
// memory slices A leaves free; 4g and 3g may share an A100-40GB). With no
// GPU freed nothing moves: nothing changed since the last call. With
// e2 = 2 the move costs more than the GPU, and with migrate=false there
// is no consolidation.
func TestConsolidatesWhenItSavesAGPU(t *testing.T) {
	s := twoGPUs()
	s.Freed = []int{0}
	d := run(t, nil, s)
	if n, _ := snapshot.Migrations(s, &d); n != 1 || d.GPUsUsed() != 1 || d.Placements[0].GPU != 1 || d.Placements[0].Start != 4 {
		t.Errorf("GPU 0 freed: decision %+v; want A moved to GPU 1 3g@4, 1 GPU in use", d)
	}
	s.Freed = []int{1}
	d = run(t, nil, s)
	if n, _ := snapshot.Migrations(s, &d); n != 1 || d.GPUsUsed() != 1 || d.Placements[1].GPU != 0 || d.Placements[1].Start != 0 {
		t.Errorf("GPU 1 freed: decision %+v; want B moved to GPU 0 4g@0, 1 GPU in use", d)
	}
	s.Freed = nil
	if d := run(t, nil, s); d.GPUsUsed() != 2 {
		t.Errorf("nothing freed: %d GPUs in use, want 2 (no move)", d.GPUsUsed())
	}
	// consolidate=all visits every GPU in use, least loaded first: GPU 0
	// (4/7 free) before GPU 1 (3/7), so A moves as with GPU 0 freed.
	if d := run(t, map[string]string{"consolidate": "all"}, s); d.GPUsUsed() != 1 || d.Placements[0].GPU != 1 || d.Placements[0].Start != 4 {
		t.Errorf("consolidate=all, nothing freed: decision %+v; want A moved to GPU 1 3g@4", d)
	}
	s.Freed = []int{0}
	for _, args := range []map[string]string{{"e2": "2"}, {"migrate": "false"}} {
		d := run(t, args, s)
		if n, _ := snapshot.Migrations(s, &d); n != 0 || d.GPUsUsed() != 2 {
			t.Errorf("%v: %d migrations, %d GPUs; want 0 and 2", args, n, d.GPUsUsed())
		}
	}
}

// A pending 3g job joins the busy GPU 1 at 3g@4 (cost 3/7) rather than
// opening the empty GPU 2 (cost 1); then a 4g job cannot join GPU 1 (no
// slice left) but fits GPU 0 at 4g@0 next to A (cost 4/7 < 1).
func TestJoinsBusyGPU(t *testing.T) {
	s := twoGPUs()
	a100, _ := snapshot.LookupModel("a100-40gb")
	s.GPUs = append(s.GPUs, snapshot.GPU{ID: 2, Model: a100})
	s.Jobs = append(s.Jobs,
		snapshot.Job{ID: 2, Options: []snapshot.Option{{Profile: "3g.20gb"}}},
		snapshot.Job{ID: 3, Options: []snapshot.Option{{Profile: "4g.20gb"}}})
	d := run(t, map[string]string{"migrate": "false"}, s)
	if d.Placements[2].GPU != 1 || d.Placements[3].GPU != 0 || d.GPUsUsed() != 2 {
		t.Errorf("placements %+v; want job 2 on GPU 1, job 3 on GPU 0, GPU 2 unused", d.Placements)
	}
}

func TestArgsValidated(t *testing.T) {
	for _, args := range []map[string]string{{"open_cost": "2"}, {"max_slowdown": "1"}, {"e1": "-1"}, {"moves": "3"}, {"consolidate": "some"}} {
		if _, err := snapshot.New("conspirator", args); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// mig=false runs every GPU whole (the ablation of paper/gpu-hours): the
// simulator then gives the policy fraction options only.
func TestMIGArgument(t *testing.T) {
	for args, want := range map[string]bool{"true": true, "false": false} {
		p, err := snapshot.New("conspirator", map[string]string{"mig": args})
		if err != nil {
			t.Fatal(err)
		}
		if got := snapshot.CapabilitiesOf(p).UsesMIG; got != want {
			t.Errorf("mig=%s: UsesMIG %v", args, got)
		}
	}
	if _, err := snapshot.New("conspirator", map[string]string{"mig": "sometimes"}); err == nil {
		t.Error("mig=sometimes accepted")
	}
}
