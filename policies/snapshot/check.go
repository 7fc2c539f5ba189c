package snapshot

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// fractionSlack absorbs float rounding when fractions are summed: 1/3+1/3+1/3
// must fit on one GPU.
const fractionSlack = 1e-9

func sortInstances(in []Instance) {
	slices.SortFunc(in, func(a, b Instance) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return strings.Compare(a.Profile, b.Profile)
	})
}

// CheckSnapshot verifies that s is well formed: unique GPU and job IDs, sane
// GPU models, options that fit at least the shape of some model, current
// instances that form a legal layout, and current placements that obey every
// rule of CheckDecision. It returns all problems found, joined.
func CheckSnapshot(s *Snapshot) error {
	var errs []error
	srvIDs := map[int]bool{}
	for k, sv := range s.Servers {
		if srvIDs[sv.ID] {
			errs = append(errs, fmt.Errorf("snapshot server [%d]: duplicate server ID %d", k, sv.ID))
		}
		srvIDs[sv.ID] = true
		if sv.CPUMilli < 0 || sv.MemoryMiB < 0 || sv.HeldCPUMilli < 0 || sv.HeldMemoryMiB < 0 {
			errs = append(errs, fmt.Errorf("snapshot server [%d] (ID %d): CPU %d milli (%d held), memory %d MiB (%d held); want >= 0 (capacity 0: not modelled)", k, sv.ID, sv.CPUMilli, sv.HeldCPUMilli, sv.MemoryMiB, sv.HeldMemoryMiB))
		}
	}
	gpuIDs := map[int]bool{}
	for k := range s.GPUs {
		g := &s.GPUs[k]
		if gpuIDs[g.ID] {
			errs = append(errs, fmt.Errorf("GPUs[%d]: duplicate GPU ID %d", k, g.ID))
		}
		gpuIDs[g.ID] = true
		if len(s.Servers) > 0 && !srvIDs[g.Server] {
			errs = append(errs, fmt.Errorf("GPUs[%d] (ID %d): server %d is not in Servers", k, g.ID, g.Server))
		}
		if err := checkModel(&g.Model); err != nil {
			errs = append(errs, fmt.Errorf("GPUs[%d] (ID %d): %w", k, g.ID, err))
			continue
		}
		if len(g.Instances) > 0 {
			if g.Model.MIG == nil {
				errs = append(errs, fmt.Errorf("GPUs[%d] (ID %d): non-MIG model %q lists MIG instances", k, g.ID, g.Model.Name))
			} else if err := CheckLayout(&g.Model, g.Instances); err != nil {
				errs = append(errs, fmt.Errorf("GPUs[%d] (ID %d) current layout: %w", k, g.ID, err))
			}
		}
	}
	jobIDs := map[int]bool{}
	var current Decision
	for k := range s.Jobs {
		j := &s.Jobs[k]
		if jobIDs[j.ID] {
			errs = append(errs, fmt.Errorf("snapshot job [%d]: duplicate job ID %d", k, j.ID))
		}
		jobIDs[j.ID] = true
		if len(j.Options) == 0 {
			errs = append(errs, fmt.Errorf("snapshot job [%d] (ID %d): no resource options; a job needs at least one", k, j.ID))
		}
		for t, o := range j.Options {
			if o.Profile == "" && (o.Fraction <= 0 || o.Fraction > 1 || math.IsNaN(o.Fraction)) {
				errs = append(errs, fmt.Errorf("snapshot job [%d] (ID %d) option %d: fraction %v outside (0,1] and no MIG profile", k, j.ID, t, o.Fraction))
			}
			if o.Profile != "" && !(o.Fraction >= 0 && o.Fraction <= 1) {
				errs = append(errs, fmt.Errorf("snapshot job [%d] (ID %d) option %d: MIG profile %q with instance share %v; want a share in [0, 1] (0: the whole instance)", k, j.ID, t, o.Profile, o.Fraction))
			}
		}
		if j.CPUMilli < 0 || j.MemoryMiB < 0 {
			errs = append(errs, fmt.Errorf("snapshot job [%d] (ID %d): CPU %d milli, memory %d MiB; want >= 0", k, j.ID, j.CPUMilli, j.MemoryMiB))
		}
		if j.MigrationCost < 0 || math.IsNaN(j.MigrationCost) || math.IsInf(j.MigrationCost, 0) {
			errs = append(errs, fmt.Errorf("snapshot job [%d] (ID %d): migration cost %v; want a finite value >= 0", k, j.ID, j.MigrationCost))
		}
		if j.Current == nil {
			current.Unscheduled = append(current.Unscheduled, j.ID)
			continue
		}
		if j.Current.JobID != j.ID {
			errs = append(errs, fmt.Errorf("snapshot job [%d] (ID %d): current placement names job %d", k, j.ID, j.Current.JobID))
		}
		current.Placements = append(current.Placements, *j.Current)
		if g, ok := s.GPU(j.Current.GPU); ok && g.Model.MIG != nil {
			in := Instance{Profile: j.Current.Profile, Start: j.Current.Start}
			if !slices.Contains(g.Instances, in) {
				errs = append(errs, fmt.Errorf("snapshot job [%d] (ID %d): runs on %s@%d of GPU %d, which is not in that GPU's Instances", k, j.ID, in.Profile, in.Start, g.ID))
			}
		}
	}
	if len(errs) == 0 {
		if err := CheckDecision(s, current); err != nil {
			errs = append(errs, fmt.Errorf("current placements: %w", err))
		}
	}
	return errors.Join(errs...)
}

func checkModel(m *GPUModel) error {
	if m.Name == "" {
		return errors.New("GPU model has no name")
	}
	if m.MIG == nil {
		return nil
	}
	if err := m.MIG.Check(); err != nil {
		return fmt.Errorf("GPU model %q: %w", m.Name, err)
	}
	return nil
}

// CheckLayout verifies that instances form a legal MIG layout of model m
// (mig.Geometry.Validate: known profiles at legal starts, no shared memory
// slice, compute slices and max counts within the GPU's).
func CheckLayout(m *GPUModel, instances []Instance) error {
	if m.MIG == nil {
		if len(instances) > 0 {
			return fmt.Errorf("non-MIG model %q cannot hold MIG instance %s", m.Name, instances[0])
		}
		return nil
	}
	return m.MIG.Validate(instances)
}

// CheckDecision verifies every rule of the package documentation for d
// against s and returns all violations found, joined (nil when d is valid).
// Every policy's tests should run it on every decision.
func CheckDecision(s *Snapshot, d Decision) error {
	var errs []error
	seen := map[int]string{}
	mark := func(id int, where string) bool {
		if _, ok := s.Job(id); !ok {
			errs = append(errs, fmt.Errorf("%s: job %d is not in the snapshot", where, id))
			return false
		}
		if prev, dup := seen[id]; dup {
			errs = append(errs, fmt.Errorf("%s: job %d already appears at %s; each job appears once", where, id, prev))
			return false
		}
		seen[id] = where
		return true
	}
	for k, id := range d.Unscheduled {
		mark(id, fmt.Sprintf("Unscheduled[%d]", k))
	}
	byGPU := map[int][]int{} // GPU ID -> indices into d.Placements
	for k, p := range d.Placements {
		where := fmt.Sprintf("Placements[%d] (job %d)", k, p.JobID)
		if !mark(p.JobID, where) {
			continue
		}
		j, _ := s.Job(p.JobID)
		g, ok := s.GPU(p.GPU)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: GPU %d is not in the snapshot", where, p.GPU))
			continue
		}
		if p.Option < 0 || p.Option >= len(j.Options) {
			errs = append(errs, fmt.Errorf("%s: option %d; the job has options 0..%d", where, p.Option, len(j.Options)-1))
			continue
		}
		o := j.Options[p.Option]
		if !o.Fits(&g.Model) {
			errs = append(errs, fmt.Errorf("%s: option %d (type %q, profile %q, fraction %v) does not fit GPU %d (%s)", where, p.Option, o.GPUType, o.Profile, o.Fraction, g.ID, g.Model.Name))
			continue
		}
		if g.Model.IsMIG() && p.Profile != o.Profile {
			errs = append(errs, fmt.Errorf("%s: profile %q differs from option %d's profile %q", where, p.Profile, p.Option, o.Profile))
			continue
		}
		if !g.Model.IsMIG() && (p.Profile != "" || p.Start != 0 || p.Fraction != o.Fraction) {
			errs = append(errs, fmt.Errorf("%s: on non-MIG GPU %d want profile \"\", start 0 and fraction %v (the option's); got %q, %d, %v", where, g.ID, o.Fraction, p.Profile, p.Start, p.Fraction))
			continue
		}
		byGPU[p.GPU] = append(byGPU[p.GPU], k)
	}
	for _, j := range s.Jobs {
		if _, ok := seen[j.ID]; !ok {
			errs = append(errs, fmt.Errorf("job %d is neither placed nor in Unscheduled", j.ID))
		}
	}
	ids := make([]int, 0, len(byGPU))
	for id := range byGPU {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		g, _ := s.GPU(id)
		ks := byGPU[id]
		if g.Model.IsMIG() {
			// One placement is one instance: two jobs on the same
			// (profile, start) overlap in memory and are reported so,
			// unless the snapshot shares instances.
			ins := make([]Instance, 0, len(ks))
			if s.ShareInstances {
				errs = append(errs, checkShared(s, d, id, ks)...)
			}
			for _, k := range ks {
				in := Instance{Profile: d.Placements[k].Profile, Start: d.Placements[k].Start}
				if !s.ShareInstances || !slices.Contains(ins, in) {
					ins = append(ins, in)
				}
			}
			if err := CheckLayout(&g.Model, ins); err != nil {
				errs = append(errs, fmt.Errorf("GPU %d (%s): jobs %v: %w", id, g.Model.Name, jobsOf(d, ks), err))
			}
			continue
		}
		sum := 0.0
		tenant := ""
		for n, k := range ks {
			j, _ := s.Job(d.Placements[k].JobID)
			sum += d.Placements[k].Fraction
			if n == 0 {
				tenant = j.Tenant
			} else if j.Tenant != tenant {
				errs = append(errs, fmt.Errorf("GPU %d (%s, no MIG): jobs of tenants %q and %q share it; without MIG one GPU serves one tenant", id, g.Model.Name, tenant, j.Tenant))
				break
			}
		}
		if sum > 1+fractionSlack {
			errs = append(errs, fmt.Errorf("GPU %d (%s, no MIG): jobs %v take fractions summing to %v > 1", id, g.Model.Name, jobsOf(d, ks), sum))
		}
	}
	if len(s.Servers) > 0 {
		errs = append(errs, checkServers(s, d)...)
	}
	if d.Bound != 0 && d.Cost != 0 && d.Bound > d.Cost*(1+1e-9)+1e-9 {
		errs = append(errs, fmt.Errorf("claimed lower bound %v exceeds the decision's own cost %v", d.Bound, d.Cost))
	}
	return errors.Join(errs...)
}

// checkShared verifies the shared MIG instances of GPU id (placements ks of
// d): the jobs of one instance belong to one tenant and their instance
// shares sum to at most 1.
func checkShared(s *Snapshot, d Decision, id int, ks []int) []error {
	var errs []error
	type inst struct {
		profile string
		start   int
	}
	sum := map[inst]float64{}
	tenant := map[inst]string{}
	var order []inst
	for _, k := range ks {
		p := d.Placements[k]
		j, _ := s.Job(p.JobID)
		in := inst{p.Profile, p.Start}
		if prev, ok := tenant[in]; !ok {
			order = append(order, in)
			tenant[in] = j.Tenant
		} else if prev != j.Tenant {
			errs = append(errs, fmt.Errorf("GPU %d: instance %s@%d holds jobs of tenants %q and %q; a shared instance serves one tenant", id, p.Profile, p.Start, prev, j.Tenant))
		}
		sum[in] += j.Options[p.Option].InstanceShare()
	}
	for _, in := range order {
		if sum[in] > 1+fractionSlack {
			errs = append(errs, fmt.Errorf("GPU %d: jobs on instance %s@%d need shares summing to %v > 1", id, in.profile, in.start, sum[in]))
		}
	}
	return errs
}

// checkServers verifies the server rules of d: the jobs on a server's GPUs
// fit its CPU and memory, and the placed tasks of a gang share one server
// unless the snapshot lets gangs span servers.
func checkServers(s *Snapshot, d Decision) []error {
	var errs []error
	type use struct{ cpu, mem int64 }
	used := map[int]use{}
	gangSrv := map[int]int{} // gang -> server of its first placed task
	gangJob := map[int]int{}
	for _, p := range d.Placements {
		j, ok1 := s.Job(p.JobID)
		g, ok2 := s.GPU(p.GPU)
		if !ok1 || !ok2 {
			continue // reported above
		}
		u := used[g.Server]
		u.cpu += j.CPUMilli
		u.mem += j.MemoryMiB
		used[g.Server] = u
		if j.Gang == 0 || !s.OneServerGangs() {
			continue
		}
		if srv, ok := gangSrv[j.Gang]; !ok {
			gangSrv[j.Gang], gangJob[j.Gang] = g.Server, j.ID
		} else if srv != g.Server {
			errs = append(errs, fmt.Errorf("gang %d: job %d on server %d, job %d on server %d; a gang's tasks share one server", j.Gang, gangJob[j.Gang], srv, j.ID, g.Server))
		}
	}
	for _, sv := range s.Servers {
		u := used[sv.ID]
		if sv.CPUMilli > 0 && u.cpu+sv.HeldCPUMilli > sv.CPUMilli {
			errs = append(errs, fmt.Errorf("server %d: jobs take %d milli-CPU of its %d (%d held)", sv.ID, u.cpu, sv.CPUMilli, sv.HeldCPUMilli))
		}
		if sv.MemoryMiB > 0 && u.mem+sv.HeldMemoryMiB > sv.MemoryMiB {
			errs = append(errs, fmt.Errorf("server %d: jobs take %d MiB of its %d MiB memory (%d held)", sv.ID, u.mem, sv.MemoryMiB, sv.HeldMemoryMiB))
		}
	}
	return errs
}

func jobsOf(d Decision, ks []int) []int {
	out := make([]int, len(ks))
	for n, k := range ks {
		out[n] = d.Placements[k].JobID
	}
	return out
}
