package cluster

// A job's life on the cluster: its progress, start, completion and end.

import (
	"slices"

	"github.com/conspirator-sim/conspirator/engine"
)

// progress brings a running job's remaining work up to now.
func (r *run) progress(js *jobState) {
	if js.state != stateRunning {
		return
	}
	dt := r.sim.Now() - js.last
	done := dt
	if js.speed != 1 {
		done = engine.Time(float64(dt) * js.speed)
	}
	js.remaining = max(0, js.remaining-done)
	js.last = r.sim.Now()
}

func (r *run) cancel(js *jobState) {
	if js.hasEv {
		r.sim.Cancel(js.ev)
		js.hasEv = false
	}
}

// startRunning runs a placed job from now and schedules its completion.
func (r *run) startRunning(k int) {
	js := r.job(k)
	js.state, js.last = stateRunning, r.sim.Now()
	left := js.remaining
	if js.speed != 1 {
		left = engine.CeilNanos(float64(js.remaining) / js.speed) // saturates: the engine refuses it past its horizon
	}
	js.ev, js.hasEv = r.sim.MustAfter(left, func() { r.complete(k) }), true
}

// complete finishes job k: its work is done, or a service's (or a
// censored job's) time is up. A censored job has no completion time: the
// trace stopped recording it while it ran, so it is counted as censored
// and left out of JCT.
func (r *run) complete(k int) {
	js := r.job(k)
	js.hasEv = false
	js.remaining = 0
	r.finish(k)
	kt := &r.kinds[btoi(js.plan.service)]
	if js.plan.censored {
		r.censored++
		kt.censored++
	} else {
		js.rec.JCTS = (r.sim.Now() - js.plan.src.Arrival).Seconds()
		r.jct.Add(js.rec.JCTS)
		kt.completed++
		kt.jct.Add(js.rec.JCTS)
	}
	if r.cfg.RecordJobs {
		r.records[k] = js.rec
	}
}

// finish takes job k, which has finished, off its GPUs and drops it.
func (r *run) finish(k int) {
	js := r.job(k)
	js.state = stateDone
	r.advance()
	touched := r.touched[:0]
	for t := range js.plan.src.NumGPU {
		id := js.firstTask + t
		if g := r.task(id).gpu; g >= 0 {
			touched = append(touched, g)
			if r.sess == nil || r.cfg.VerifyDecisions {
				r.freed = append(r.freed, g) // for the snapshot's Freed
			}
		}
		if r.sess != nil {
			r.sess.Finish(id)
		}
		r.release(id)
	}
	r.aliveTasks -= js.plan.src.NumGPU
	r.respeed(touched)
	r.touched = touched
	r.noteActive()
	r.gpuEnd = r.sim.Now()
	r.heavy.add(js.held, &r.kinds[btoi(js.plan.service)])
	r.llmHeld(js)
	delete(r.live, k) // finished: only its record and the tallies remain
	i, _ := slices.BinarySearch(r.alive, k)
	r.alive = slices.Delete(r.alive, i, i+1)
	r.request()
}
