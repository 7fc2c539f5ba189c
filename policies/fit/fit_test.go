package fit

import (
	"testing"

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
