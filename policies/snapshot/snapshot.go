package snapshot

import (
	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/mig"
)

// MIGProfile is one GPU-instance profile of a MIG-capable GPU model
// (hw/mig, the one place that knows MIG geometry): Compute compute slices
// and MemSlices consecutive memory slices starting at one of Starts.
type MIGProfile = mig.Profile

// GPUModel is one GPU type as the policies see it. For a MIG model (MIG not
// nil) all placements use its profiles; for a non-MIG model jobs share the
// whole GPU by fractions. MIG is shared with the catalog: read-only.
type GPUModel struct {
	Name string // catalog name, e.g. "a100-40gb"; Option.GPUType matches it
	MIG  *mig.Geometry
}

// IsMIG reports whether m is partitioned into MIG instances.
func (m *GPUModel) IsMIG() bool { return m.MIG != nil }

// Profile returns the named profile of m (nil, false on a non-MIG model).
// The pointer is into the shared geometry: do not change it.
func (m *GPUModel) Profile(name string) (*MIGProfile, bool) {
	if m.MIG == nil {
		return nil, false
	}
	return m.MIG.Profile(name)
}

// Instance is one existing MIG instance (or, on a non-MIG GPU, nothing: the
// current sharing is read from the jobs' Current placements).
type Instance = mig.Instance

// Server is one machine of the cluster: its GPUs name it (GPU.Server), and
// the jobs placed on them share its CPU and memory.
type Server struct {
	ID int // unique within the snapshot
	// CPUMilli and MemoryMiB are the server's capacity for jobs, in
	// thousandths of a core and MiB; 0 leaves that resource unmodelled.
	CPUMilli  int64
	MemoryMiB int64
	// HeldCPUMilli and HeldMemoryMiB are taken by work the policy does not
	// place (CPU-only pods): the jobs get the capacity less these.
	HeldCPUMilli  int64
	HeldMemoryMiB int64
}

// GPU is one device of the cluster at snapshot time.
type GPU struct {
	ID    int // unique within the snapshot
	Model GPUModel
	// Server is the ID of the server that holds the GPU; read only when
	// the snapshot lists Servers.
	Server int
	// Instances is the current MIG layout, idle instances included. Jobs'
	// Current placements must lie on instances listed here. Policies may
	// ignore it: a decision states the whole new layout through its
	// placements (see Decision.Layout).
	Instances []Instance
}

// Option is one way a job may run: one R_it of the paper's program.
type Option struct {
	// GPUType restricts the option to GPUs whose Model.Name equals it; ""
	// allows every GPU where the rest of the option fits.
	GPUType string
	// Profile is the MIG profile name on MIG GPUs; "" means a fraction of a
	// non-MIG GPU.
	Profile string
	// Fraction of a non-MIG GPU, in (0, 1]. On a MIG option it is the
	// share of the instance's compute the job needs, in [0, 1] (0: the
	// whole instance), read only where the snapshot shares instances
	// (Snapshot.ShareInstances; the paper's R_it / a_jw).
	Fraction float64
	// Speed is the job's relative throughput under this option (1 = its
	// reference speed); informational for heuristics, 0 when unknown. The
	// paper's objective does not use it.
	Speed float64
}

// Placement puts one job on one GPU with one of its options.
type Placement struct {
	JobID  int
	GPU    int // GPU.ID
	Option int // index into Job.Options
	// Profile and Start locate the MIG instance; Profile is "" and Start 0
	// on a non-MIG GPU.
	Profile string
	Start   int
	// Fraction is the share of a non-MIG GPU (copied from the option); 0 on
	// MIG GPUs.
	Fraction float64
}

// Job is a running or pending job at snapshot time.
type Job struct {
	ID      int // unique within the snapshot
	Tenant  string
	Options []Option
	// Current is where the job runs now; nil while it is pending.
	Current *Placement
	// MigrationCost is m_i: the cost of moving (or preempting) the job when
	// it is running. Ignored for pending jobs.
	MigrationCost float64
	// Gang, when not 0, names the gang the job belongs to: the tasks of one
	// multi-GPU job, listed consecutively. A gang runs only when all its
	// tasks are placed, and, when the snapshot lists Servers and GangSpan
	// is false, all on one server.
	Gang int
	// CPUMilli and MemoryMiB are what the job takes of its server's CPU
	// (thousandths of a core) and memory (MiB) while placed; read only when
	// the snapshot lists Servers.
	CPUMilli  int64
	MemoryMiB int64
}

// Snapshot is everything a policy may read.
type Snapshot struct {
	Now  engine.Time
	GPUs []GPU
	Jobs []Job // running and pending
	// Servers, when not empty, hold the GPUs (GPU.Server): the jobs on one
	// server share its CPU and memory, and a gang stays on one server
	// unless GangSpan. Empty: GPUs stand alone, CPU and memory unmodelled.
	Servers  []Server
	GangSpan bool
	// ShareInstances lets one MIG instance hold several jobs of one tenant
	// whose options' instance shares (Option.InstanceShare) sum to at most
	// 1: the paper's constraint (c) read literally. The simulator sets it
	// for a policy that asks for it (InstanceSharer); false: one job per
	// instance.
	ShareInstances bool
	// Freed lists the GPUs (IDs) that lost a job since the previous call
	// (a job finished there), ascending: where room appeared. A policy
	// that consolidates on departures reads it; the others ignore it.
	Freed []int
}

// OneServerGangs reports whether the tasks of a gang must share a server.
func (s *Snapshot) OneServerGangs() bool { return len(s.Servers) > 0 && !s.GangSpan }

// GPU returns the GPU with the given ID.
func (s *Snapshot) GPU(id int) (*GPU, bool) {
	for k := range s.GPUs {
		if s.GPUs[k].ID == id {
			return &s.GPUs[k], true
		}
	}
	return nil, false
}

// Job returns the job with the given ID.
func (s *Snapshot) Job(id int) (*Job, bool) {
	for k := range s.Jobs {
		if s.Jobs[k].ID == id {
			return &s.Jobs[k], true
		}
	}
	return nil, false
}

// Fits reports whether option o can be used on a GPU of model m: same type
// when the option names one, a MIG profile that m has (MIG models), or a
// fraction in (0,1] (non-MIG models).
func (o Option) Fits(m *GPUModel) bool {
	if o.GPUType != "" && o.GPUType != m.Name {
		return false
	}
	if m.MIG != nil {
		if o.Profile == "" {
			return false
		}
		_, ok := m.Profile(o.Profile)
		return ok
	}
	return o.Profile == "" && o.Fraction > 0 && o.Fraction <= 1
}

// InstanceShare is the share of a MIG instance option o takes when
// instances are shared: its Fraction, or the whole instance when that is 0.
func (o Option) InstanceShare() float64 {
	if o.Fraction > 0 {
		return o.Fraction
	}
	return 1
}

// Decision is what a policy returns: the complete new assignment.
type Decision struct {
	// Placements holds one entry per placed job; the GPU layouts follow
	// from them (one MIG instance per placement, or per distinct
	// (profile, start) where the snapshot shares instances).
	Placements []Placement
	// Unscheduled lists the jobs left pending (running jobs listed here are
	// preempted).
	Unscheduled []int
	// Cost is the objective value the policy claims for this decision in its
	// own units (the optimal policy: e1*GPUs + e2*migration cost + penalty
	// per unscheduled job); 0 when the policy has no objective.
	Cost float64
	// Bound is a proven lower bound on the optimal Cost (equal to Cost when
	// the policy proved optimality); 0 when unknown.
	Bound float64
}

// Layout returns the MIG instances that d creates on GPU gpuID, sorted by
// start; on a non-MIG GPU it returns one Instance{"" ,0} per sharing job.
func (d *Decision) Layout(gpuID int) []Instance {
	var out []Instance
	for _, p := range d.Placements {
		if p.GPU == gpuID {
			out = append(out, Instance{Profile: p.Profile, Start: p.Start})
		}
	}
	sortInstances(out)
	return out
}

// GPUsUsed returns how many distinct GPUs hold at least one placement: the
// sum_j Y_j of the paper's objective.
func (d *Decision) GPUsUsed() int {
	seen := map[int]bool{}
	for _, p := range d.Placements {
		seen[p.GPU] = true
	}
	return len(seen)
}

// Migrations returns how many running jobs of s the decision moves or
// preempts, and the sum of their MigrationCost (the sum_i m_i d_i of the
// paper's objective). A job stays in place when GPU, profile, start and
// fraction are unchanged.
func Migrations(s *Snapshot, d *Decision) (n int, cost float64) {
	placed := make(map[int]Placement, len(d.Placements))
	for _, p := range d.Placements {
		placed[p.JobID] = p
	}
	for _, j := range s.Jobs {
		if j.Current == nil {
			continue
		}
		p, ok := placed[j.ID]
		if ok && SameInstance(*j.Current, p) {
			continue
		}
		n++
		cost += j.MigrationCost
	}
	return n, cost
}

// SameInstance reports whether a and b put a job on the same GPU instance
// (MIG) or the same share of the same GPU (non-MIG).
func SameInstance(a, b Placement) bool {
	return a.GPU == b.GPU && a.Profile == b.Profile && a.Start == b.Start && a.Fraction == b.Fraction
}
