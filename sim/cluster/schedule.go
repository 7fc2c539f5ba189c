package cluster

// Asking the policy: the snapshot of the cluster it sees, the call (a
// decision, or a session's changes), and the checks on what it returns.

import (
	"fmt"
	"slices"
	"time"

	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

func (r *run) options(p *jobPlan) []snapshot.Option { return p.options(r.mig) }

func (r *run) model(t int) *snapshot.GPUModel { return r.types[t].model(r.mig) }

// options are the job's options as a policy that partitions MIG GPUs
// (mig) or runs them whole sees them.
func (p *jobPlan) options(mig bool) []snapshot.Option {
	if mig {
		return p.optsMIG
	}
	return p.optsWhole
}

// model is the type's model as a policy that partitions MIG GPUs (mig) or
// runs them whole sees it.
func (t *gpuType) model(mig bool) *snapshot.GPUModel {
	if mig && t.spec.MIG != nil {
		return &t.migModel
	}
	return &t.wholeModel
}

// snapshot builds the policy's view: alive tasks, the servers that hold a
// task (all their GPUs) and, of each class of interchangeable servers, as
// many of the lowest-index empty servers as there are pending tasks.
func (r *run) snapshot(hidden map[int]bool) *snapshot.Snapshot {
	s := &r.snap
	s.Now = r.sim.Now()
	s.GangSpan = r.cfg.GangSpan
	s.ShareInstances = r.share
	srvs := r.snapSrv[:0]
	for k := range r.servers {
		if r.servers[k].busy > 0 || r.servers[k].pods > 0 {
			srvs = append(srvs, k)
		}
	}
	if r.pendingTasks > 0 {
		for _, cl := range r.classes {
			n := 0
			for _, k := range cl {
				if n >= r.pendingTasks {
					break
				}
				if r.servers[k].busy == 0 && r.servers[k].pods == 0 {
					srvs = append(srvs, k)
					n++
				}
			}
		}
	}
	slices.Sort(srvs)
	r.snapSrv = srvs
	s.Servers = slices.Grow(s.Servers[:0], len(srvs))[:len(srvs)]
	ids := r.snapIDs[:0]
	for k, si := range srvs {
		sv := &r.servers[si]
		s.Servers[k] = snapshot.Server{ID: si, CPUMilli: sv.clusterServer.cpu, MemoryMiB: sv.clusterServer.mem,
			HeldCPUMilli: sv.podCPU, HeldMemoryMiB: sv.podMem}
		for g := sv.first; g < sv.first+sv.n; g++ {
			ids = append(ids, g)
		}
	}
	r.snapIDs = ids
	s.GPUs = slices.Grow(s.GPUs[:0], len(ids))[:len(ids)]
	ins := r.snapIns[:0]
	for k, g := range ids {
		gs := &r.gpus[g]
		s.GPUs[k] = snapshot.GPU{ID: g, Model: *r.model(gs.typ), Server: gs.srv}
		if s.GPUs[k].Model.IsMIG() && len(gs.instances) > 0 {
			start := len(ins)
			for _, in := range gs.instances {
				ins = append(ins, in.Instance)
			}
			// Full slice expression: a policy appending to one GPU's
			// instances cannot write into the next GPU's.
			s.GPUs[k].Instances = ins[start:len(ins):len(ins)]
		}
	}
	r.snapIns = ins
	s.Jobs = s.Jobs[:0]
	cur := r.snapCur[:0]
	for _, j := range r.alive {
		if hidden[j] {
			continue
		}
		js := r.job(j)
		for t := range js.plan.src.NumGPU {
			if ts := r.task(js.firstTask + t); ts.gpu >= 0 {
				cur = append(cur, ts.pl)
			}
			s.Jobs = append(s.Jobs, r.taskJob(js, t))
		}
	}
	// Point Current at the placements only now: cur may have moved while
	// it grew.
	c := 0
	for k := range s.Jobs {
		if ts := r.task(s.Jobs[k].ID); ts.gpu >= 0 {
			s.Jobs[k].Current = &cur[c]
			c++
		}
	}
	r.snapCur = cur
	s.Freed = append(s.Freed[:0], r.freed...)
	slices.Sort(s.Freed)
	s.Freed = slices.Compact(s.Freed)
	return s
}

// schedule calls the policy and applies its decision. Snapshots name the
// gangs, and the built-in policies place a gang whole or not at all; for
// any other policy, when a decision places only part of a pending gang,
// the policy is asked again without that gang (it stays pending until a
// later event), so a gang that does not fit never holds GPUs that other
// jobs could use. A policy with a session decides there instead, from
// what it was told; with verify_decisions the snapshot call is made too
// and must give the same changes.
func (r *run) schedule() {
	r.scheduled = false
	r.placePods() // pods first: they wait in the same queue, and arrived earlier
	if len(r.alive) == 0 {
		return
	}
	if r.sess != nil {
		r.scheduleSession()
		return
	}
	var hidden map[int]bool
	for {
		s := r.snapshot(hidden)
		var begin time.Time
		if r.now != nil {
			begin = r.now()
		}
		d, err := r.pol.Schedule(s)
		r.timeCall(begin, len(s.Jobs), len(s.GPUs))
		if err != nil {
			r.fail(fmt.Errorf("policy %s: %w", r.pol.Name(), err))
			return
		}
		if r.cfg.VerifyDecisions {
			if err := verify(s, &d); err != nil {
				r.fail(fmt.Errorf("policy %s: %w", r.pol.Name(), err))
				return
			}
		}
		if partial := r.partialPendingGangs(d.Placements); len(partial) > 0 {
			if hidden == nil {
				hidden = map[int]bool{}
			}
			for _, k := range partial {
				hidden[k] = true
			}
			continue
		}
		if err := r.checkIDs(d.Placements); err != nil {
			r.fail(fmt.Errorf("policy %s: %w", r.pol.Name(), err))
			return
		}
		r.freed = r.freed[:0]
		if err := r.apply(snapshot.Diff(s, &d)); err != nil {
			r.fail(fmt.Errorf("policy %s: %w", r.pol.Name(), err))
		}
		return
	}
}

// scheduleSession asks the policy's session for its changes and applies
// them.
func (r *run) scheduleSession() {
	var want *snapshot.Changes
	if r.cfg.VerifyDecisions {
		// The snapshot call first: the session's changes count as applied.
		s := r.snapshot(nil)
		d, err := r.pol.Schedule(s)
		if err == nil {
			err = verify(s, &d)
		}
		if err != nil {
			r.fail(fmt.Errorf("policy %s: %w", r.pol.Name(), err))
			return
		}
		c := snapshot.Diff(s, &d)
		want = &c
	}
	var begin time.Time
	if r.now != nil {
		begin = r.now()
	}
	c, err := r.sess.Schedule(r.sim.Now())
	r.timeCall(begin, r.aliveTasks, r.active)
	if err != nil {
		r.fail(fmt.Errorf("policy %s: %w", r.pol.Name(), err))
		return
	}
	if want != nil && !sameChanges(*want, c) {
		r.fail(fmt.Errorf("policy %s: its session decided %v, its snapshot call %v (the two must agree)", r.pol.Name(), c, *want))
		return
	}
	if partial := r.partialPendingGangs(c.Placements); len(partial) > 0 {
		r.fail(fmt.Errorf("policy %s: its session placed part of gang %s; a session places a gang whole or not at all", r.pol.Name(), r.job(partial[0]).job.ID))
		return
	}
	if err := r.checkIDs(c.Placements); err != nil {
		r.fail(fmt.Errorf("policy %s: %w", r.pol.Name(), err))
		return
	}
	r.freed = r.freed[:0]
	if err := r.apply(c); err != nil {
		r.fail(fmt.Errorf("policy %s: %w", r.pol.Name(), err))
	}
}

// timeCall records one policy call's wall-clock time (when timed).
func (r *run) timeCall(begin time.Time, jobs, gpus int) {
	var el time.Duration
	if r.now != nil {
		el = r.now().Sub(begin)
	}
	r.decisionTotal += el
	us := float64(el.Nanoseconds()) / 1e3
	r.decisions.Add(us)
	r.timing.add(Call{Jobs: jobs, GPUs: gpus, US: us})
}

// verify checks a snapshot the simulator built and a decision on it.
func verify(s *snapshot.Snapshot, d *snapshot.Decision) error {
	if err := snapshot.CheckSnapshot(s); err != nil {
		return fmt.Errorf("simulator built an invalid snapshot: %w", err)
	}
	if err := snapshot.CheckDecision(s, *d); err != nil {
		return fmt.Errorf("broke a rule: %w", err)
	}
	return nil
}

// sameChanges reports whether a and b change the same jobs the same way.
func sameChanges(a, b snapshot.Changes) bool {
	return slices.Equal(a.Placements, b.Placements) && slices.Equal(a.Preempted, b.Preempted)
}

// checkIDs refuses placements that name a task twice or no task at all.
func (r *run) checkIDs(ps []snapshot.Placement) error {
	seen := make(map[int]bool, len(ps))
	for _, p := range ps {
		if seen[p.JobID] {
			return fmt.Errorf("job %d placed twice", p.JobID)
		}
		if r.task(p.JobID) == nil {
			return fmt.Errorf("placement for unknown job %d", p.JobID)
		}
		seen[p.JobID] = true
	}
	return nil
}

// partialPendingGangs returns the pending multi-GPU jobs that d places in
// part.
func (r *run) partialPendingGangs(ps []snapshot.Placement) []int {
	var out []int
	count := map[int]int{}
	for _, p := range ps {
		if r.task(p.JobID) == nil {
			continue // apply reports it
		}
		k := r.task(p.JobID).job
		if r.job(k).plan.src.NumGPU > 1 && r.task(r.job(k).firstTask).gpu < 0 {
			count[k]++
		}
	}
	for k, n := range count {
		if n < r.job(k).plan.src.NumGPU {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
