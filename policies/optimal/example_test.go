package optimal_test

import (
	"fmt"

	"github.com/conspirator-sim/conspirator/policies/optimal"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// Three pending jobs of three tenants on two A100-40GB: a 4g and a 3g share
// one GPU (memory slices 0-3 and 4-7), the other 3g needs the second GPU.
// Which 3g goes where is a tie; the answer is deterministic.
func Example() {
	a100, _ := snapshot.LookupModel("a100-40gb")
	s := &snapshot.Snapshot{
		GPUs: []snapshot.GPU{{ID: 0, Model: a100}, {ID: 1, Model: a100}},
		Jobs: []snapshot.Job{
			{ID: 1, Tenant: "a", Options: []snapshot.Option{{Profile: "4g.20gb"}}},
			{ID: 2, Tenant: "b", Options: []snapshot.Option{{Profile: "3g.20gb"}}},
			{ID: 3, Tenant: "c", Options: []snapshot.Option{{Profile: "3g.20gb"}}},
		},
	}
	solver, _ := optimal.NewSolver(optimal.Config{E1: 1, E2: 0.1, Backend: "gophersat"})
	r, err := solver.Solve(s)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range r.Decision.Placements {
		fmt.Printf("job %d -> GPU %d %s@%d\n", p.JobID, p.GPU, p.Profile, p.Start)
	}
	fmt.Println("GPUs:", r.Decision.GPUsUsed(), "optimal:", r.Optimal)
	// Output:
	// job 1 -> GPU 0 4g.20gb@0
	// job 2 -> GPU 0 3g.20gb@4
	// job 3 -> GPU 1 3g.20gb@0
	// GPUs: 2 optimal: true
}
