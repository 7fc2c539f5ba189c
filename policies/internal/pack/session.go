package pack

import (
	"slices"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// Decide runs decide on a view of s and returns the decision it built: a
// pack policy's Schedule. decide is the policy's whole rule, shared with
// its Session.
func Decide(s *snapshot.Snapshot, decide func(v *View) error) (snapshot.Decision, error) {
	v := New(s)
	defer v.Release()
	if err := decide(v); err != nil {
		return snapshot.Decision{}, err
	}
	return v.Decision(), nil
}

// Session is a view kept for a whole replay (snapshot.Session): the
// simulator's events keep it up to date, and the policy's decide runs on
// it at every call, as Decide runs it on a fresh view of the snapshot. A
// call costs the pending jobs and what the policy looks at, not the
// cluster: nothing is rebuilt.
type Session struct {
	v      *View
	decide func(v *View) error
	seq    int // arrivals so far: a job's place in the pending order
}

var _ snapshot.Session = (*Session)(nil)

// NewSession starts a session on c, every GPU idle.
func NewSession(c *snapshot.Cluster, decide func(v *View) error) *Session {
	v := newView()
	// The view points into its GPUs' models: keep a copy of its own.
	v.setCluster(slices.Clone(c.GPUs), c.Servers, c.GangSpan)
	return &Session{v: v, decide: decide}
}

// Arrive implements snapshot.Session.
func (s *Session) Arrive(j snapshot.Job) {
	v := s.v
	sl := v.newSlot()
	j.Current = nil
	sl.job, sl.queued, sl.seq = j, true, s.seq
	s.seq++
	v.jobs[j.ID] = sl
	v.pending = append(v.pending, sl)
}

// Finish implements snapshot.Session.
func (s *Session) Finish(id int) {
	v := s.v
	sl := v.jobs[id]
	if sl == nil {
		return
	}
	if sl.placed {
		gi := v.gpuPos[sl.pl.GPU]
		v.unplace(sl)
		v.freed = append(v.freed, gi)
		clear(v.noRoom) // room appeared
	}
	delete(v.jobs, id)
	if sl.queued {
		// Not expected (the simulator finishes running jobs), but a
		// pending job that leaves must leave the queue too.
		sl.queued = false
		v.pending = slices.DeleteFunc(v.pending, func(p *slot) bool { return p == sl })
	}
	sl.job = snapshot.Job{}
	v.spare = append(v.spare, sl)
}

// Hold implements snapshot.Session.
func (s *Session) Hold(server int, cpuMilli, memoryMiB int64) {
	v := s.v
	k, ok := v.srvPos[server]
	if !ok {
		return
	}
	sv := &v.srvs[k]
	if cpuMilli < sv.heldCPU || memoryMiB < sv.heldMem {
		clear(v.noRoom) // room appeared
	}
	sv.cpu += cpuMilli - sv.heldCPU
	sv.mem += memoryMiB - sv.heldMem
	sv.heldCPU, sv.heldMem = cpuMilli, memoryMiB
	if v.idx != nil && v.idx.bySrv {
		v.idx.server(v, k)
	}
}

// Schedule implements snapshot.Session.
func (s *Session) Schedule(now engine.Time) (snapshot.Changes, error) {
	v := s.v
	slices.Sort(v.freed)
	v.freed = slices.Compact(v.freed)
	v.inCall = true
	err := s.decide(v)
	v.inCall = false
	var c snapshot.Changes
	requeue := false
	for _, sl := range v.touched {
		sl.touched = false
		running := sl.job.Current != nil
		switch {
		case sl.placed && (!running || !snapshot.SameInstance(sl.cur, sl.pl)):
			c.Placements = append(c.Placements, sl.pl)
			sl.cur = sl.pl
			sl.job.Current = &sl.cur
			sl.queued = false
		case !sl.placed && running:
			c.Preempted = append(c.Preempted, sl.job.ID)
			sl.job.Current = nil
			sl.queued, requeue = true, true
		}
	}
	v.touched = v.touched[:0]
	v.freed = v.freed[:0]
	// The queue keeps the jobs still pending, in arrival order.
	q := v.pending[:0]
	for _, sl := range v.pending {
		if sl.queued {
			q = append(q, sl)
		}
	}
	clear(v.pending[len(q):])
	v.pending = q
	if requeue {
		for _, id := range c.Preempted {
			sl := v.jobs[id]
			k, _ := slices.BinarySearchFunc(v.pending, sl.seq, func(p *slot, seq int) int { return p.seq - seq })
			v.pending = slices.Insert(v.pending, k, sl)
		}
	}
	slices.SortFunc(c.Placements, func(a, b snapshot.Placement) int { return a.JobID - b.JobID })
	slices.Sort(c.Preempted)
	return c, err
}
