package cluster

import (
	"github.com/conspirator-sim/conspirator/engine/stats"
	"github.com/conspirator-sim/conspirator/workloads"
)

// podState is one CPU-only pod: it holds CPU and memory of one server for
// its run time and never a GPU.
type podState struct {
	src    *workloads.Job
	srv    int // index into run.servers; -1 while waiting or done
	placed bool
	queueS float64
}

// PodStats sums up a run's CPU-only pods: how many arrived, the share that
// waited for a server, their mean wait, and how many never found one.
type PodStats struct {
	Pods      float64 `json:"pods"`
	QueuedPct float64 `json:"queued_pct"`
	QueueS    float64 `json:"queue_mean_s"`
	Unplaced  float64 `json:"unplaced"`
}

// podArrive admits the next pod, places what waits, and schedules the next
// arrival.
func (r *run) podArrive() {
	k := r.podNext
	r.podNext++
	if r.podNext < len(r.pods) {
		r.sim.MustAt(r.pods[r.podNext].src.Arrival, r.podArrive)
	}
	if r.pods[k].src.Duration <= 0 {
		r.pods[k].placed = true // nothing to run
		return
	}
	r.podWait = append(r.podWait, k)
	r.placePods()
}

// placePods places the waiting pods, in arrival order, each on the server
// that fits it with the most CPU and memory left, as Kubernetes' default
// NodeResourcesLeastAllocated score ranks nodes: the mean over CPU and
// memory of the share left after the pod (a resource not modelled counts
// as all left); ties go to the lowest server. A pod that fits nowhere
// waits; those behind it may pass it.
func (r *run) placePods() {
	if len(r.podWait) == 0 {
		return
	}
	left := r.podWait[:0]
	for _, k := range r.podWait {
		p := &r.pods[k]
		cpu, mem := int64(p.src.CPUMilli), p.src.MemoryMiB
		best, bestScore := -1, -1.0
		for si := range r.servers {
			sv := &r.servers[si]
			if !sv.fits(cpu, mem) {
				continue
			}
			if sc := share(sv.clusterServer.cpu, sv.cpu+sv.podCPU+cpu) + share(sv.clusterServer.mem, sv.mem+sv.podMem+mem); sc > bestScore {
				best, bestScore = si, sc
			}
		}
		if best < 0 {
			left = append(left, k)
			continue
		}
		sv := &r.servers[best]
		sv.podCPU += cpu
		sv.podMem += mem
		sv.pods++
		r.held(best)
		p.srv, p.placed = best, true
		p.queueS = (r.sim.Now() - p.src.Arrival).Seconds()
		r.sim.MustAfter(p.src.Duration, func() { r.podDone(k) })
	}
	r.podWait = left
}

// share is the part of capacity c left when u is taken; 1 when c is not
// modelled.
func share(c, u int64) float64 {
	if c == 0 {
		return 1
	}
	return float64(c-u) / float64(c)
}

// podDone frees pod k's server and lets waiting pods and jobs use it.
func (r *run) podDone(k int) {
	p := &r.pods[k]
	sv := &r.servers[p.srv]
	sv.podCPU -= int64(p.src.CPUMilli)
	sv.podMem -= p.src.MemoryMiB
	sv.pods--
	r.held(p.srv)
	p.srv = -1
	r.placePods()
	if len(r.alive) > 0 {
		r.request()
	}
}

// held tells a session what the pods hold of server si now.
func (r *run) held(si int) {
	if r.sess != nil {
		sv := &r.servers[si]
		r.sess.Hold(si, sv.podCPU, sv.podMem)
	}
}

// podStats sums up the pods of a finished run.
func (r *run) podStats() *PodStats {
	var q stats.Tally
	st := &PodStats{Pods: float64(len(r.pods))}
	queued := 0
	for k := range r.pods {
		p := &r.pods[k]
		if !p.placed {
			st.Unplaced++
			continue
		}
		q.Add(p.queueS)
		if p.queueS > 0 {
			queued++
		}
	}
	if len(r.pods) > 0 {
		st.QueuedPct = 100 * float64(queued) / float64(len(r.pods))
	}
	if q.Count() > 0 {
		st.QueueS = q.Mean()
	}
	return st
}
