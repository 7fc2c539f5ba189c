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
	sl.job, sl.seq = j, s.seq
	s.seq++
	v.jobs[j.ID] = sl
	v.arrive(sl)
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
		v.roomGained()
	}
	delete(v.jobs, id)
	if sl.queued {
		// Not expected (the simulator finishes running jobs), but a
		// pending job that leaves must leave the queue too, a gang with
		// it; its slot is not reused (the queue may still point to it).
		for _, t := range append([]*slot{sl}, sl.tasks...) {
			t.queued = false
		}
		if sl.lead != nil {
			sl.lead.tasks = slices.DeleteFunc(sl.lead.tasks, func(t *slot) bool { return t == sl })
		}
		if v.open == sl {
			v.open = nil
		}
		v.leftQueue(sl)
	}
	// The slot is not reused: a shape queue may still list it until its
	// departed entries are dropped.
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
		v.roomGained()
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
	for _, sl := range v.touched {
		sl.touched = false
		running := sl.job.Current != nil
		switch {
		case sl.placed && (!running || !snapshot.SameInstance(sl.cur, sl.pl)):
			c.Placements = append(c.Placements, sl.pl)
			sl.cur = sl.pl
			sl.job.Current = &sl.cur
			if sl.queued {
				sl.queued = false
				v.leftQueue(sl)
			}
		case !sl.placed && running:
			c.Preempted = append(c.Preempted, sl.job.ID)
			sl.job.Current = nil
			sl.queued = true
			if sl.lead == nil {
				v.enqueue(sl) // a gang's first task brings its tasks back
			}
		}
	}
	v.touched = v.touched[:0]
	v.freed = v.freed[:0]
	slices.SortFunc(c.Placements, func(a, b snapshot.Placement) int { return a.JobID - b.JobID })
	slices.Sort(c.Preempted)
	return c, err
}
