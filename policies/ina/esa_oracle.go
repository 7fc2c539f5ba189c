package ina

import "slices"

// esaOracle is a central dealer: whenever a job enters or leaves its
// synchronisation, it deals the pool to the synchronising jobs in order of
// their exact remaining work (or arrival, fifo), each up to the slots it
// has in flight (Demand.Need), preempting at once. No switch can do this
// (it knows neither the remaining work nor the other jobs' needs); it is
// kept as the oracle ablation of esa, the bound a data-plane scheduler
// could approach.
type esaOracle struct {
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

func newESAOracle(slots int, fifo bool) *esaOracle { return &esaOracle{slots: slots, fifo: fifo} }

func (*esaOracle) Name() string { return "esa-oracle" }
func (*esaOracle) Start(int)    {}
func (*esaOracle) End(int)      {}

// before orders the active jobs: priority (or arrival, fifo), then
// arrival, then job.
func (e *esaOracle) before(a, b Demand) bool {
	if !e.fifo && a.Work != b.Work {
		return a.Work < b.Work
	}
	if a.Arrival != b.Arrival {
		return a.Arrival < b.Arrival
	}
	return a.Job < b.Job
}

// deal gives each active job, in order, up to its need of what is left,
// and returns the grants that changed (first the job first, if given).
func (e *esaOracle) deal(first int) []Grant {
	left := e.slots
	out := e.out[:0]
	var lead Grant
	hasLead := false
	for i := range e.active {
		a := &e.active[i]
		n := min(a.Need, left)
		left -= n
		changed := !a.dealt || a.slots != n
		g := Grant{Job: a.Job, Slots: n}
		if a.dealt {
			g.Evicted = max(0, a.slots-n) // preempted: partial aggregates lost
		}
		a.slots, a.dealt = n, true
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

func (e *esaOracle) Peek(d Demand) Grant {
	left := e.slots
	for _, a := range e.active {
		if e.before(a.Demand, d) {
			left -= a.slots
		}
	}
	n := min(d.Need, max(left, 0))
	g := Grant{Job: d.Job, Slots: n}
	if n == 0 {
		g.PSFraction = 1
	}
	return g
}

func (e *esaOracle) Enter(d Demand) []Grant {
	// Kept in deal order: inserted after every job before it.
	i := len(e.active)
	for i > 0 && e.before(d, e.active[i-1].Demand) {
		i--
	}
	e.active = slices.Insert(e.active, i, esaJob{Demand: d})
	return e.deal(d.Job)
}

func (e *esaOracle) Leave(job int) []Grant {
	e.active = slices.DeleteFunc(e.active, func(a esaJob) bool { return a.Job == job })
	return e.deal(-1)
}
