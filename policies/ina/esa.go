package ina

import "slices"

// esa deals the pool to the synchronising jobs by priority, preempting.
type esa struct {
	slots  int
	fifo   bool
	active []esaJob // jobs in their synchronisation phase, in deal order
	out    []Grant  // the grants returned, reused (valid until the next call)
}

// esaJob is a job in its synchronisation phase and the slots it holds.
type esaJob struct {
	Demand
	slots int
	dealt bool // it has been dealt slots since it entered
}

func newESA(slots int, fifo bool) *esa { return &esa{slots: slots, fifo: fifo} }

func (*esa) Name() string { return "esa" }
func (*esa) Start(int)    {}
func (*esa) End(int)      {}

// before orders the active jobs: priority (or arrival, fifo), then
// arrival, then job.
func (e *esa) before(a, b Demand) bool {
	if !e.fifo && a.Priority != b.Priority {
		return a.Priority < b.Priority
	}
	if a.Arrival != b.Arrival {
		return a.Arrival < b.Arrival
	}
	return a.Job < b.Job
}

// deal gives each active job, in order, up to its window of what is left,
// and returns the grants that changed (first the job first, if given).
func (e *esa) deal(first int) []Grant {
	left := e.slots
	out := e.out[:0]
	var lead Grant
	hasLead := false
	for i := range e.active {
		a := &e.active[i]
		n := min(a.Window, left)
		left -= n
		changed := !a.dealt || a.slots != n
		a.slots, a.dealt = n, true
		g := Grant{Job: a.Job, Slots: n}
		if n == 0 {
			g.PSFraction = 1 // nothing to aggregate in: its parameter server
		}
		switch {
		case a.Job == first:
			lead, hasLead = g, true
		case changed:
			out = append(out, g)
		}
	}
	if hasLead {
		out = append(out, Grant{})
		copy(out[1:], out)
		out[0] = lead
	}
	e.out = out
	return out
}

func (e *esa) Peek(d Demand) Grant {
	left := e.slots
	for _, a := range e.active {
		if e.before(a.Demand, d) {
			left -= a.slots
		}
	}
	n := min(d.Window, max(left, 0))
	g := Grant{Job: d.Job, Slots: n}
	if n == 0 {
		g.PSFraction = 1
	}
	return g
}

func (e *esa) Enter(d Demand) []Grant {
	// Kept in deal order: inserted after every job before it.
	i := len(e.active)
	for i > 0 && e.before(d, e.active[i-1].Demand) {
		i--
	}
	e.active = slices.Insert(e.active, i, esaJob{Demand: d})
	return e.deal(d.Job)
}

func (e *esa) Leave(job int) []Grant {
	e.active = slices.DeleteFunc(e.active, func(a esaJob) bool { return a.Job == job })
	return e.deal(-1)
}
