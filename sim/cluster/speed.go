package cluster

// How fast a running job goes: its GPUs' speed, time-sharing and the
// communication of a gang spread over servers.

import (
	"fmt"
	"math"
	"slices"
)

// jobSpeed is a placed job's speed: the slowest of its tasks, each at its
// option's speed, slowed on a time-shared GPU by its co-runners
// (timeshare_slowdown x the share of the GPU they hold, at most 1). A MIG
// instance is isolated from the others: only the tasks sharing it (where
// the policy shares instances) slow a task, by the same rule with shares
// of the instance.
func (r *run) jobSpeed(js *jobState) float64 {
	if js.plan.service || js.plan.censored {
		// It holds its placement for a time, not a quantity of work: its
		// co-runners slow its requests, not its end (how much latency it
		// loses is not modelled).
		return 1
	}
	opts := r.options(&js.plan)
	speed := math.Inf(1)
	for t := range js.plan.src.NumGPU {
		ts := r.task(js.firstTask + t)
		v := opts[ts.pl.Option].Speed
		if sl := r.cfg.TimeshareSlowdown; sl > 0 && ts.pl.Profile == "" && ts.gpu >= 0 {
			others := min(1, max(0, r.gpus[ts.gpu].used-ts.pl.Fraction))
			v *= 1 - sl*others
		} else if sl > 0 && r.share && ts.gpu >= 0 {
			if in := r.gpus[ts.gpu].instanceAt(ts.pl.Profile, ts.pl.Start); in != nil {
				v *= 1 - sl*min(1, max(0, in.used-opts[ts.pl.Option].InstanceShare()))
			}
		}
		speed = min(speed, v)
	}
	// A gang spread over servers synchronises over their NICs.
	return speed * r.spreadSpeed(js)
}

// spreadSpeed is the speed factor of job js's communication where its
// tasks are: 1 on one server (or not placed yet), else GangComm's.
func (r *run) spreadSpeed(js *jobState) float64 {
	n := js.plan.src.NumGPU
	if n < 2 || r.comm == nil || r.comm.off {
		return 1
	}
	var srv, on []int
	typ := -1
	for t := range n {
		ts := r.task(js.firstTask + t)
		if ts.gpu < 0 {
			return 1
		}
		g := &r.gpus[ts.gpu]
		if typ < 0 {
			typ = g.typ
		}
		if i := slices.Index(srv, g.srv); i >= 0 {
			on[i]++
		} else {
			srv, on = append(srv, g.srv), append(on, 1)
		}
	}
	if len(srv) < 2 {
		return 1
	}
	v, err := r.comm.speed(r.types[typ].name, on)
	if err != nil {
		r.fail(fmt.Errorf("job %s: %w", js.plan.src.ID, err))
		return 1
	}
	return v
}

// respeed brings the jobs time-sharing the given GPUs to their new speed
// after tasks joined or left them: work done so far at the old speed,
// completion moved to the new one.
func (r *run) respeed(gpus []int) {
	if r.cfg.TimeshareSlowdown == 0 {
		return
	}
	for _, gi := range gpus {
		if gi < 0 {
			continue
		}
		for _, id := range r.gpus[gi].members {
			k := r.task(id).job
			js := r.job(k)
			if js.state != stateRunning && js.state != stateSetup {
				continue
			}
			v := r.jobSpeed(js)
			if v == js.speed {
				continue
			}
			if js.state == stateSetup {
				js.speed = v // used when it starts
				continue
			}
			r.progress(js) // at the old speed, up to now
			js.speed = v
			r.cancel(js)
			r.startRunning(k)
		}
	}
}
