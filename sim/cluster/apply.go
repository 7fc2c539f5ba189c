package cluster

// Applying a decision to the GPUs: acquiring and releasing MIG instances
// and shares, migrations, and the checks a placement must pass.

import (
	"errors"
	"fmt"
	"slices"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/mig"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// release takes task id off its GPU (a MIG instance stays, idle).
func (r *run) release(id int) {
	ts := r.task(id)
	if ts.gpu < 0 {
		return
	}
	r.settle(ts)
	g := &r.gpus[ts.gpu]
	r.alloc -= g.share()
	g.tasks--
	if ts.pl.Profile != "" {
		if in := g.instanceAt(ts.pl.Profile, ts.pl.Start); in != nil && in.n > 0 {
			in.n--
			in.used -= r.instanceShare(id, ts.pl)
			if in.n == 0 {
				in.used, in.tenant = 0, ""
				m := r.model(g.typ)
				p, _ := m.Profile(ts.pl.Profile)
				g.compute -= p.Compute
			}
		}
	} else {
		g.used -= ts.pl.Fraction
	}
	if k := slices.Index(g.members, id); k >= 0 {
		g.members = slices.Delete(g.members, k, k+1)
	}
	if g.tasks == 0 {
		g.used, g.tenant = 0, ""
		r.active--
		r.activeBy[g.typ]--
		r.servers[g.srv].busy--
	}
	cpu, mem := r.job(ts.job).plan.taskCPUMem(id - r.job(ts.job).firstTask)
	r.servers[g.srv].cpu -= cpu
	r.servers[g.srv].mem -= mem
	r.alloc += g.share()
	ts.gpu = -1
}

// overlaps reports whether two instances of model m share a memory slice.
func overlaps(m *snapshot.GPUModel, a, b snapshot.Instance) bool {
	pa, _ := m.Profile(a.Profile)
	pb, _ := m.Profile(b.Profile)
	return mig.Mask(pa, a.Start)&mig.Mask(pb, b.Start) != 0
}

// acquire puts task id at p and returns the setup delay (MIG operations).
func (r *run) acquire(id int, p snapshot.Placement, tenant string) (engine.Time, error) {
	if p.GPU < 0 || p.GPU >= len(r.gpus) {
		return 0, fmt.Errorf("task %d placed on unknown GPU %d", id, p.GPU)
	}
	g := &r.gpus[p.GPU]
	m := r.model(g.typ)
	var delay engine.Time
	r.alloc -= g.share()
	if m.IsMIG() {
		want := snapshot.Instance{Profile: p.Profile, Start: p.Start}
		prof, ok := m.Profile(p.Profile)
		if !ok {
			return 0, fmt.Errorf("task %d: profile %q not on GPU %d (%s)", id, p.Profile, p.GPU, m.Name)
		}
		sh := r.instanceShare(id, p)
		in := g.instanceAt(want.Profile, want.Start)
		joins := in != nil && in.n > 0
		switch {
		case joins && !r.share:
			return 0, fmt.Errorf("task %d joins the busy MIG instance %s@%d of GPU %d; this policy runs one task per instance", id, want.Profile, want.Start, p.GPU)
		case joins && in.tenant != tenant:
			return 0, fmt.Errorf("task %d of tenant %q joins tenant %q on MIG instance %s@%d of GPU %d", id, tenant, in.tenant, want.Profile, want.Start, p.GPU)
		case joins && in.used+sh > 1+1e-9:
			return 0, fmt.Errorf("task %d: MIG instance %s@%d of GPU %d would hold shares summing to %v > 1", id, want.Profile, want.Start, p.GPU, in.used+sh)
		case in != nil:
			in.n++
			in.used += sh
			in.tenant = tenant
		}
		if in == nil {
			ops := 1 // create
			kept := g.instances[:0]
			for _, in := range g.instances {
				if overlaps(m, in.Instance, want) {
					if in.n > 0 {
						return 0, fmt.Errorf("task %d: instance %s@%d of GPU %d overlaps %s@%d, which runs %d task(s)", id, want.Profile, want.Start, p.GPU, in.Profile, in.Start, in.n)
					}
					ops++ // destroy the idle instance in the way
					continue
				}
				kept = append(kept, in)
			}
			g.instances = append(kept, instance{Instance: want, n: 1, used: sh, tenant: tenant})
			// Idle instances may still exceed the compute slices or a
			// profile's count: destroy them, lowest start first.
			for snapshot.CheckLayout(m, layout(g)) != nil {
				k := slices.IndexFunc(g.instances, func(in instance) bool { return in.n == 0 })
				if k < 0 {
					return 0, fmt.Errorf("GPU %d (%s): illegal MIG layout: %v", p.GPU, m.Name, snapshot.CheckLayout(m, layout(g)))
				}
				g.instances = slices.Delete(g.instances, k, k+1)
				ops++
			}
			slices.SortFunc(g.instances, func(a, b instance) int { return a.Start - b.Start })
			delay = engine.MulSat(int64(ops), r.cfg.MIGReconfigTime.Time())
		}
		if !joins {
			g.compute += prof.Compute
		}
		if r.share {
			g.members = append(g.members, id)
		}
	} else {
		if g.tasks > 0 && g.tenant != tenant {
			return 0, fmt.Errorf("task %d of tenant %q joins tenant %q on non-MIG GPU %d", id, tenant, g.tenant, p.GPU)
		}
		if g.used+p.Fraction > 1+1e-9 {
			return 0, fmt.Errorf("GPU %d: fractions sum to %v > 1", p.GPU, g.used+p.Fraction)
		}
		g.used += p.Fraction
		g.tenant = tenant
		g.members = append(g.members, id)
	}
	sv := &r.servers[g.srv]
	cpu, mem := r.job(r.task(id).job).plan.taskCPUMem(id - r.job(r.task(id).job).firstTask)
	if !sv.fits(cpu, mem) {
		return 0, fmt.Errorf("task %d on GPU %d: server %d would hold %d of %d milli-CPU and %d of %d MiB (CPU-only pods included)", id, p.GPU, g.srv,
			sv.cpu+sv.podCPU+cpu, sv.clusterServer.cpu, sv.mem+sv.podMem+mem, sv.clusterServer.mem)
	}
	sv.cpu += cpu
	sv.mem += mem
	if g.tasks == 0 {
		r.active++
		r.activeBy[g.typ]++
		sv.busy++
	}
	g.tasks++
	r.alloc += g.share()
	ts := r.task(id)
	ts.gpu, ts.pl = p.GPU, p
	ts.since, ts.share = r.sim.Now(), p.Fraction
	if p.Profile != "" {
		pr, _ := m.Profile(p.Profile)
		ts.share = float64(pr.Compute) / float64(m.MIG.ComputeSlices)
	}
	return delay, nil
}

// settle adds the GPU time task ts held since it was last settled to its
// job's held time.
func (r *run) settle(ts *taskState) {
	if ts.gpu < 0 {
		return
	}
	now := r.sim.Now()
	r.live[ts.job].held += ts.share * (now - ts.since).Seconds()
	ts.since = now
}

// instanceShare is the share of its MIG instance task id takes at p where
// the policy shares instances; 0 where it does not (nothing reads it then).
func (r *run) instanceShare(id int, p snapshot.Placement) float64 {
	if !r.share {
		return 0
	}
	return r.options(&r.job(r.task(id).job).plan)[p.Option].InstanceShare()
}

func layout(g *gpuState) []snapshot.Instance {
	out := make([]snapshot.Instance, len(g.instances))
	for k, in := range g.instances {
		out[k] = in.Instance
	}
	return out
}

// apply carries out the changes c (checkIDs has passed them). Jobs the
// snapshot hid are not in c and stay pending.
func (r *run) apply(c snapshot.Changes) error {
	if len(c.Placements) == 0 && len(c.Preempted) == 0 {
		return nil
	}
	// The jobs c touches, ascending, and where each of their tasks ends:
	// a placement of c, pending when preempted, else where it is.
	var affected []int
	for _, p := range c.Placements {
		affected = append(affected, r.task(p.JobID).job)
	}
	for _, id := range c.Preempted {
		if r.task(id) == nil {
			return fmt.Errorf("preemption of unknown job %d", id)
		}
		affected = append(affected, r.task(id).job)
	}
	slices.Sort(affected)
	affected = slices.Compact(affected)
	placed := make(map[int]snapshot.Placement, len(c.Placements))
	for _, k := range affected {
		js := r.job(k)
		for t := range js.plan.src.NumGPU {
			if ts := r.task(js.firstTask + t); ts.gpu >= 0 {
				placed[js.firstTask+t] = ts.pl
			}
		}
	}
	for _, id := range c.Preempted {
		delete(placed, id)
	}
	for _, p := range c.Placements {
		placed[p.JobID] = p
	}
	type change struct {
		job       int
		moved     int // tasks that leave or change place
		wasPlaced bool
	}
	var changes []change
	var news []int // tasks to acquire
	for _, k := range affected {
		js := r.job(k)
		n := js.plan.src.NumGPU
		got := 0
		for t := range n {
			if p, ok := placed[js.firstTask+t]; ok {
				got++
				opts := r.options(&js.plan)
				if p.Option < 0 || p.Option >= len(opts) {
					return fmt.Errorf("job %d: option %d of %d", p.JobID, p.Option, len(opts))
				}
			}
		}
		if got > 0 && got < n {
			// Part of a gang: applied as none of it.
			for t := range n {
				delete(placed, js.firstTask+t)
			}
		}
		if got == n && n > 1 && !r.cfg.GangSpan {
			srv := -1
			for t := range n {
				p := placed[js.firstTask+t]
				if p.GPU < 0 || p.GPU >= len(r.gpus) {
					continue // acquire reports it
				}
				g := r.gpus[p.GPU].srv
				if srv >= 0 && g != srv {
					return fmt.Errorf("job %s: its %d tasks span servers %d and %d; a gang stays on one server (cluster.gang_span: false)", js.plan.src.ID, n, srv, g)
				}
				srv = g
			}
		}
		c := change{job: k, wasPlaced: r.task(js.firstTask).gpu >= 0}
		for t := range n {
			id := js.firstTask + t
			p, ok := placed[id]
			cur := *r.task(id)
			if (cur.gpu >= 0 && ok && snapshot.SameInstance(cur.pl, p)) || (cur.gpu < 0 && !ok) {
				continue // stays where it is, or stays pending
			}
			c.moved++
			if ok {
				news = append(news, id)
			}
		}
		if c.moved > 0 {
			changes = append(changes, c)
		}
	}
	if len(changes) == 0 {
		return nil
	}
	r.advance()
	touched := r.touched[:0]
	for _, c := range changes {
		js := r.job(c.job)
		r.progress(js)
		for t := range js.plan.src.NumGPU {
			id := js.firstTask + t
			if p, ok := placed[id]; !ok || r.task(id).gpu < 0 || !snapshot.SameInstance(r.task(id).pl, p) {
				touched = append(touched, r.task(id).gpu)
				r.release(id)
			}
		}
	}
	for _, id := range news {
		touched = append(touched, placed[id].GPU)
	}
	defer func() { r.touched = touched }()
	delays := map[int]engine.Time{}
	for _, id := range news {
		k := r.task(id).job
		dl, err := r.acquire(id, placed[id], r.job(k).plan.tenant)
		if err != nil {
			return err
		}
		delays[k] = max(delays[k], dl)
	}
	r.noteActive()
	for _, c := range changes {
		k := c.job
		js := r.job(k)
		r.cancel(js)
		nowPlaced := r.task(js.firstTask).gpu >= 0
		if c.wasPlaced {
			r.migrations += c.moved
			js.rec.Migrations += c.moved
		}
		if !nowPlaced {
			if c.wasPlaced {
				js.state = statePending
				r.pendingTasks += js.plan.src.NumGPU
				r.preempted++
			}
			continue
		}
		js.speed = r.jobSpeed(js)
		if !js.plan.service && !js.plan.censored {
			if f := r.spreadSpeed(js); f != 1 {
				if !js.spanned {
					js.spanned = true
					r.spanned++
				}
				r.spanPlaced++
				r.spanSpeed += f
			}
		}
		if !c.wasPlaced {
			r.pendingTasks -= js.plan.src.NumGPU
		}
		if !js.placed {
			js.placed = true
			js.rec.QueueS = (r.sim.Now() - js.plan.src.Arrival).Seconds()
			r.queue.Add(js.rec.QueueS)
			r.kinds[btoi(js.plan.service)].queue.Add(js.rec.QueueS)
			if js.plan.llm > 0 {
				lt := &r.llm[js.plan.llm-1]
				lt.placed++
				lt.queue.Add(js.rec.QueueS)
			}
			if js.rec.QueueS > 0 {
				r.queued++
			}
			pl := r.task(js.firstTask).pl
			js.rec.GPUType, js.rec.Profile, js.rec.Speed = r.types[r.gpus[pl.GPU].typ].name, pl.Profile, js.speed
		}
		delay := delays[k]
		if c.wasPlaced {
			delay += r.cfg.MigrationTime.Time()
		}
		if delay == 0 {
			r.startRunning(k)
			continue
		}
		js.state = stateSetup
		js.ev, js.hasEv = r.sim.MustAfter(delay, func() {
			js.hasEv = false
			r.startRunning(k)
		}), true
	}
	r.respeed(touched)
	if r.pendingTasks < 0 {
		return errors.New("internal error: negative pending task count")
	}
	return nil
}
