package snapshot

import (
	"slices"

	"github.com/conspirator-sim/conspirator/engine"
)

// Cluster is what a Session starts from: every GPU and server of a
// replay, all idle. Its fields mean what the Snapshot's do; GPU.Instances
// is ignored (no instance exists yet).
type Cluster struct {
	GPUs     []GPU
	Servers  []Server
	GangSpan bool
}

// Incremental is the optional capability of a policy that can keep its
// view of the cluster between calls, so that a call costs what changed
// and what waits rather than the whole cluster (a snapshot is rebuilt
// from every running job and busy server at every call).
//
// Contract: a Session fed the same events decides exactly what Schedule
// decides on the snapshot of the same moment (the snapshot listing the
// same jobs in arrival order and, in Freed, the GPUs that lost a job
// since the previous call): the snapshot call is the policy's definition
// and the session its fast form. The simulator checks this at every call
// when cluster.verify_decisions is on.
type Incremental interface {
	Begin(c *Cluster) Session
}

// Session is one replay's policy state. The simulator tells it every job
// that arrives, finishes or holds a server's CPU, and asks it to decide at
// the same moments it would call Schedule. A session is used from one
// goroutine.
type Session interface {
	// Arrive adds a pending job. Jobs arrive in the order a snapshot lists
	// them (arrival); the tasks of a gang one after the other. The session
	// may keep j.Options (shared, read-only) but not j.Current.
	Arrive(j Job)
	// Finish takes a running job off its GPU (it completed) and forgets it.
	Finish(id int)
	// Hold sets what work the policy does not place (CPU-only pods) holds
	// of server id: Server.HeldCPUMilli and HeldMemoryMiB.
	Hold(server int, cpuMilli, memoryMiB int64)
	// Schedule decides at now, as Schedule would on the snapshot, and
	// returns what the decision changes. The changes are taken as applied:
	// a placed job runs there from now on.
	Schedule(now engine.Time) (Changes, error)
}

// Changes is a decision as a difference from the current assignment: the
// jobs not named keep their placement (running) or stay pending.
type Changes struct {
	// Placements holds the jobs newly placed or moved, by job ID.
	Placements []Placement
	// Preempted lists running jobs made pending, ascending.
	Preempted []int
}

// Diff returns d as changes to the current placements of s's jobs: what a
// Session returns for the same decision. It is how the simulator applies a
// snapshot decision and compares the two forms. A placement of a job that
// s does not list is ignored here (CheckDecision reports it).
func Diff(s *Snapshot, d *Decision) Changes {
	placed := make(map[int]Placement, len(d.Placements))
	for _, p := range d.Placements {
		placed[p.JobID] = p
	}
	var c Changes
	for k := range s.Jobs {
		j := &s.Jobs[k]
		p, ok := placed[j.ID]
		switch {
		case ok && (j.Current == nil || !SameInstance(*j.Current, p)):
			c.Placements = append(c.Placements, p)
		case !ok && j.Current != nil:
			c.Preempted = append(c.Preempted, j.ID)
		}
	}
	slices.SortFunc(c.Placements, func(a, b Placement) int { return a.JobID - b.JobID })
	slices.Sort(c.Preempted)
	return c
}
