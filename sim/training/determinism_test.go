package training

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/workloads/train"
)

// pressured is a small rack under memory pressure, where every policy's
// rules matter: 8 jobs of 2 to 4 GPUs on 8 single-GPU servers, a pool
// of two windows.
func pressured() Config {
	c := Defaults()
	c.Cluster.Servers = 8
	c.Jobs.Synthetic.Jobs = 8
	c.Jobs.Synthetic.GPUs = []int{2, 3, 4}
	c.Jobs.Synthetic.Rate = units.Rate(1.0 / 20)
	c.Jobs.Synthetic.MinIterations, c.Jobs.Synthetic.MaxIterations = 20, 120
	c.INA.Device = "tofino-atp"
	c.INA.Slots = 5600
	c.Seeds = 3
	return c
}

func snapshot(t *testing.T, r *Result) string {
	t.Helper()
	type full struct {
		PolicyResult
		Jobs []JobRecord
		Occ  []OccupancyPoint
	}
	var all []full
	for _, p := range r.Policies {
		all = append(all, full{p, p.JobRecords, p.Occupancy})
	}
	b, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The same config and seed give the same result, jobs and occupancy, on
// one core or many (seeds run in parallel).
func TestDeterministicAtAnyParallelism(t *testing.T) {
	c := pressured()
	prev := runtime.GOMAXPROCS(1)
	one := snapshot(t, mustRun(t, c, Env{}))
	runtime.GOMAXPROCS(max(prev, 4))
	many := snapshot(t, mustRun(t, c, Env{}))
	again := snapshot(t, mustRun(t, c, Env{}))
	runtime.GOMAXPROCS(prev)
	if one != many || many != again {
		t.Fatal("results differ between runs or with parallelism")
	}
	// A progress function watching changes nothing; it is told of the
	// replays as their jobs finish: growing, fractional within a
	// replay, ending at seeds x policies (here at 4 CPUs: seeds side by
	// side, the lock orders the calls).
	runtime.GOMAXPROCS(max(prev, 4))
	defer runtime.GOMAXPROCS(prev)
	var told []float64
	total := c.Seeds * len(c.Policies)
	watched := snapshot(t, mustRun(t, c, Env{Progress: func(done float64, n int) {
		if n != total {
			t.Errorf("progress total %d, want %d", n, total)
		}
		told = append(told, done)
	}}))
	if watched != many {
		t.Error("a progress function changed the results")
	}
	fractional := 0
	for k, d := range told {
		if k > 0 && d <= told[k-1] {
			t.Fatalf("progress went from %g to %g", told[k-1], d)
		}
		if math.Abs(d-math.Round(d)) > 1e-9 {
			fractional++
		}
	}
	if len(told) == 0 || math.Abs(told[len(told)-1]-float64(total)) > 1e-9 || fractional == 0 {
		t.Errorf("progress told %v; want growing values with fractions, ending at %d", told, total)
	}
}

// Permuting the jobs of one arrival changes nothing: placement is first
// come, first served and atp hashes by position, so the replay orders
// jobs of equal arrival by what they are. Jobs come in three bursts of
// equal arrival; the list is shuffled within each burst 20 times, and
// every policy's summary and every job's times (by job content) stay the
// same.
func TestPermutingEqualArrivalsChangesNothing(t *testing.T) {
	var jobs []train.Job
	models := []string{"resnet50", "vgg16", "bert-large"}
	for burst, at := range []float64{0, 40, 90} {
		for i := range 5 {
			jobs = append(jobs, train.Job{ID: "j", Arrival: engine.Seconds(at), GPUs: 2 + (i+burst)%3,
				Iterations: 30 + 17*i, Model: models[(i+2*burst)%3]})
		}
	}
	run := func(js []train.Job) string {
		c, env := listed(js...)
		c.Cluster.Servers = 8
		c.INA.Device = "tofino-atp"
		c.INA.Slots = 5600
		c.Seeds = 2
		r := mustRun(t, c, env)
		// IDs follow the list's order; the rest must not.
		for k := range r.Policies {
			for i := range r.Policies[k].JobRecords {
				r.Policies[k].JobRecords[i].ID = ""
			}
		}
		return snapshot(t, r)
	}
	want := run(jobs)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		p := append([]train.Job(nil), jobs...)
		for lo := 0; lo < len(p); lo += 5 {
			rng.Shuffle(5, func(a, b int) { p[lo+a], p[lo+b] = p[lo+b], p[lo+a] })
		}
		if got := run(p); got != want {
			t.Fatal("a permutation of jobs of equal arrival changed the result")
		}
	}
}

// Another seed draws other jobs and hashing: the results differ (the
// seeds are used), and the per-seed results are those of single-seed
// runs from that seed (seed s of a multi-seed run is the run of seed s).
func TestSeedsAreRunsOfTheirOwn(t *testing.T) {
	c := pressured()
	multi := mustRun(t, c, Env{})
	c.Seeds = 1
	for s := range 3 {
		r, err := Run(c, 1+uint64(s), Env{})
		if err != nil {
			t.Fatal(err)
		}
		for k := range r.Policies {
			got, want := multi.PerSeed[s][k], r.PerSeed[0][k]
			got.JobRecords, want.JobRecords, got.Occupancy, want.Occupancy = nil, nil, nil, nil
			if !reflect.DeepEqual(got, want) {
				t.Errorf("seed %d policy %s: in a run of 3 seeds %+v, alone %+v", 1+s, want.Name, got, want)
			}
		}
	}
	if reflect.DeepEqual(multi.PerSeed[0][1].JCT, multi.PerSeed[1][1].JCT) {
		t.Error("seeds 1 and 2 gave the same atp JCT: the seed is not used")
	}
}
