package snapshot

import "github.com/conspirator-sim/conspirator/engine"

// Window is everything an offline policy may read: the cluster and every
// job of a window with its arrival and its work, known in advance (an
// online policy sees only the present, through a Snapshot).
type Window struct {
	GPUs []GPU // IDs and models; Instances are ignored
	Jobs []WindowJob
}

// WindowJob is one job of a Window.
type WindowJob struct {
	ID      int
	Tenant  string
	Arrival engine.Time
	// Work is the job's run time at speed 1; under option o it runs for
	// Work / o.Speed at the least (co-runners and pauses only slow it).
	Work engine.Time
	// Tasks is the number of GPUs the job holds at once (a gang); each task
	// has the same Options.
	Tasks   int
	Options []Option
}

// Bound is an offline policy's answer: a proven lower bound on the
// GPU-hours of every run its Covers rule admits, with what the solver
// proved on the way.
type Bound struct {
	// GPUHours is the proven lower bound; Upper the GPU-hours of the best
	// schedule the solver found for the relaxed program (equal when every
	// solve was proven).
	GPUHours, Upper float64
	// Starts names the relaxation: "arrival" (every job runs from its
	// arrival to its end without waiting) or "any" (a job may wait and be
	// preempted).
	Starts string
	// Intervals counts the time intervals of the program and Distinct the
	// different sets of jobs among them (each solved once); Solves counts
	// those solves.
	Intervals, Distinct int
	Solves              SolveStats
	// Note says, in one sentence, when the bound is weaker than asked (a
	// window with no schedule under the asked relaxation, jobs that fit
	// nowhere); "" otherwise.
	Note string
}

// Covers reports whether the bound holds for a run in which waited jobs
// started after their arrival or were preempted at least once, and
// unfinished jobs never completed: a bound over schedules where every job
// runs from its arrival holds only for runs where none waited, and every
// bound assumes every job completes.
func (b Bound) Covers(waited, unfinished int) bool {
	if unfinished > 0 {
		return false
	}
	return b.Starts == "any" || waited == 0
}

// Offline is the capability of a policy that plans a whole window at once
// with the future known (the horizon optimum). The simulator calls Horizon
// instead of replaying it, and reports the bound beside the online
// policies; its Schedule is never called.
type Offline interface {
	Horizon(w *Window) (Bound, error)
}
