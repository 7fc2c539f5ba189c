// Package snapshot provides the input and output types shared by every GPU
// scheduling policy: a self-contained Snapshot of GPUs and jobs, the Decision
// a policy returns, CheckDecision that verifies every placement rule, and the
// registry that builds policies by name with validated arguments.
//
// Policies read a Snapshot and return a Decision; they never touch engine or
// hardware state. The simulator builds the snapshot (from hw/gpu specs and
// its own job table) and applies the decision. A policy may also keep a
// Session (the Incremental capability): the simulator then tells it every
// arrival, completion and CPU-only pod and asks it for the Changes at the
// same moments, so that a call costs what changed and what waits rather
// than the whole cluster. The snapshot call stays the definition: a
// session decides what Schedule decides on the snapshot of the same moment
// (Diff puts both in one form; the simulator compares them at every call
// with cluster.verify_decisions). ModelFromSpec and LookupModel
// turn a hw/gpu catalog entry into the GPUModel a snapshot carries, so the
// snapshot is self-contained and policies need no catalog of their own.
//
// # Model
//
// A GPU has a GPUModel: either MIG-capable, carrying its geometry from
// hw/mig (compute and memory slices, the legal MIG profiles with their
// start memory slices and max counts; hw/mig is the one place that knows
// the MIG rules), or a plain GPU shared by fractions. A job lists the
// resource options it may run with (the R_it of the paper's program): a MIG
// profile name, or a fraction of a non-MIG GPU, optionally restricted to one
// GPU type. Options subsume GPU-type constraints: an option with GPUType set
// applies only to GPUs of that type, so "job X needs 2g on an A100 but 1g on
// an H100" is two options.
//
// # Rules (checked by CheckDecision)
//
//   - every job of the snapshot appears exactly once, either placed or in
//     Unscheduled;
//   - a placement names an existing GPU and one of the job's options, and
//     the option fits that GPU (type, MIG-ness, profile);
//   - MIG: the instances on one GPU form a layout that the geometry's
//     Validate accepts (known profiles at legal starts, no shared memory
//     slice, compute slices and max counts within the GPU's), and one MIG instance
//     holds exactly one job (tenant isolation: different jobs, whatever their
//     tenant, never share an instance);
//   - non-MIG: the fractions on one GPU sum to at most 1 and all jobs on it
//     belong to one tenant (isolation without MIG means no co-tenancy).
//
// A running job is migrated when its new placement differs from its current
// one in GPU, profile or start (or it is preempted into Unscheduled); that is
// d_i = 1 of the paper's program.
package snapshot
