package fit

import (
	"reflect"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/policies/internal/pack"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// Two A100-40GB: GPU 0 runs a 1g.5gb (6 compute slices free), GPU 1 a
// 4g.20gb (3 free). A pending job accepting 3g.20gb or 4g.20gb: first-fit
// takes GPU 0 (lowest ID) with its first option 3g; best-fit takes GPU 1,
// where the 3g leaves 0 compute slices free instead of 3.
func TestFirstFitAndBestFit(t *testing.T) {
	a100, _ := snapshot.LookupModel("a100-40gb")
	c0 := snapshot.Placement{JobID: 0, GPU: 0, Profile: "1g.5gb", Start: 6}
	c1 := snapshot.Placement{JobID: 1, GPU: 1, Profile: "4g.20gb", Start: 0}
	s := &snapshot.Snapshot{
		GPUs: []snapshot.GPU{
			{ID: 0, Model: a100, Instances: []snapshot.Instance{{Profile: "1g.5gb", Start: 6}}},
			{ID: 1, Model: a100, Instances: []snapshot.Instance{{Profile: "4g.20gb", Start: 0}}},
		},
		Jobs: []snapshot.Job{
			{ID: 0, Options: []snapshot.Option{{Profile: "1g.5gb"}}, Current: &c0},
			{ID: 1, Options: []snapshot.Option{{Profile: "4g.20gb"}}, Current: &c1},
			{ID: 2, Options: []snapshot.Option{{Profile: "3g.20gb"}, {Profile: "4g.20gb"}}},
		},
	}
	for _, c := range []struct {
		name    string
		gpu     int
		profile string
	}{{"first-fit", 0, "3g.20gb"}, {"best-fit", 1, "3g.20gb"}} {
		p, err := snapshot.New(c.name, map[string]string{"mig": "true"})
		if err != nil {
			t.Fatal(err)
		}
		d, err := p.Schedule(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := snapshot.CheckDecision(s, d); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := d.Placements[2]
		if got.GPU != c.gpu || got.Profile != c.profile {
			t.Errorf("%s placed job 2 on GPU %d %s; want GPU %d %s", c.name, got.GPU, got.Profile, c.gpu, c.profile)
		}
	}
	if _, err := snapshot.New("best-fit", map[string]string{"mig": "maybe"}); err == nil {
		t.Error("mig=maybe accepted")
	}
}

// Best-fit remembers the legal starts of its best GPU while it looks at
// the others. GPU 0 runs a 4g.20gb@0, so a 2g.10gb fits there only at
// start 4; GPU 1 is empty (starts 0, 2, 4). Best-fit picks the fuller GPU
// 0, and its placement must be 2g.10gb@4: a start read from GPU 1's list
// (0) would overlap the running 4g.
func TestBestFitKeepsItsGPUsStarts(t *testing.T) {
	a100, _ := snapshot.LookupModel("a100-40gb")
	c0 := snapshot.Placement{JobID: 0, GPU: 0, Profile: "4g.20gb", Start: 0}
	s := &snapshot.Snapshot{
		GPUs: []snapshot.GPU{
			{ID: 0, Model: a100, Instances: []snapshot.Instance{{Profile: "4g.20gb", Start: 0}}},
			{ID: 1, Model: a100},
		},
		Jobs: []snapshot.Job{
			{ID: 0, Options: []snapshot.Option{{Profile: "4g.20gb"}}, Current: &c0},
			{ID: 1, Options: []snapshot.Option{{Profile: "2g.10gb"}}},
		},
	}
	p, err := snapshot.New("best-fit", map[string]string{"mig": "true"})
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
	for _, pl := range d.Placements {
		if pl.JobID == 1 && (pl.GPU != 0 || pl.Start != 4) {
			t.Errorf("job 1 placed on GPU %d at start %d; want GPU 0 at 4", pl.GPU, pl.Start)
		}
	}
}

// PlacePending skips a pending job whose shape (tenant and shared options
// slice) already found no room in the call. Room only shrinks while jobs
// are placed, so the skip must never change a decision: checked against
// the same placement rules offered every pending job (the loop before
// PlacePending), on random loaded snapshots of mixed MIG and whole GPUs
// whose pending jobs share a few option slices, as the simulator's do.
func TestPlacePendingChangesNoDecision(t *testing.T) {
	rng := engine.NewStream(7, "place-pending")
	skipped := 0
	for round := range 300 {
		s := &snapshot.Snapshot{GPUs: mixedGPUs(1 + rng.IntN(5))}
		for k := range 5 + rng.IntN(40) {
			tenant := []string{"", "t1"}[rng.IntN(2)]
			s.Jobs = append(s.Jobs, snapshot.Job{ID: k, Tenant: tenant, Options: pendingShapes[rng.IntN(len(pendingShapes))]})
		}
		for _, best := range []bool{false, true} {
			p := Policy{Best: best, MIG: true}
			got, err := p.Schedule(s)
			if err != nil {
				t.Fatal(err)
			}
			want, placed := everyJob(s, best)
			skipped += len(s.Jobs) - placed
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d best=%v: with PlacePending %+v, offering every job %+v", round, best, got, want)
			}
		}
	}
	if skipped == 0 {
		t.Fatal("no job was left unplaced: the snapshots do not exercise the skip")
	}
}

// pendingShapes are the option sets of the pending jobs in
// TestPlacePendingChangesNoDecision and BenchmarkPlacePending: MIG
// profiles, fractions, and options restricted to one GPU type.
var pendingShapes = [][]snapshot.Option{
	{{Profile: "1g.5gb"}, {Profile: "2g.10gb"}, {Fraction: 0.3}},
	{{Profile: "3g.20gb"}, {Fraction: 0.6}},
	{{Profile: "7g.40gb"}, {Fraction: 1}},
	{{Profile: "4g.20gb", GPUType: "a100-40gb"}},
	{{Fraction: 0.5, GPUType: "v100"}},
}

// mixedGPUs returns n GPUs, IDs 0..n-1: A100-40GB (MIG) at even IDs,
// V100 at odd ones.
func mixedGPUs(n int) []snapshot.GPU {
	a100, _ := snapshot.LookupModel("a100-40gb")
	out := make([]snapshot.GPU, n)
	for g := range out {
		out[g] = snapshot.GPU{ID: g, Model: a100}
		if g%2 == 1 {
			out[g].Model = snapshot.GPUModel{Name: "v100"}
		}
	}
	return out
}

// everyJob is the decision before PlacePending: every pending job offered
// to first-fit's or best-fit's rule, none skipped; it also returns how
// many jobs were placed.
func everyJob(s *snapshot.Snapshot, best bool) (snapshot.Decision, int) {
	v := pack.New(s)
	placed := 0
	for k := range s.Jobs {
		if s.Jobs[k].Current != nil {
			continue
		}
		ok := false
		if best {
			ok = bestFit(v, &s.Jobs[k])
		} else {
			ok = firstFit(v, &s.Jobs[k])
		}
		if ok {
			placed++
		}
	}
	return v.Decision(), placed
}
