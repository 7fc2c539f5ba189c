// Package conspirator provides the "conspirator" policy: a MIG-aware,
// heterogeneity-aware placement heuristic with consolidation by migration,
// designed from the ideas the Conspirator paper states (flexible MIG
// fraction sizes, tenant isolation, migration when it saves GPUs) for the
// same objective as its 0-1 program: e1 x GPUs in use + e2 x migration cost.
//
// # Algorithm (one call)
//
//  1. Keep every running job where it is.
//
//  2. Place pending jobs in snapshot order (arrival). For each job, every
//     GPU worth trying (the GPUs in use and the first empty GPU of each
//     model) and every option of the job that fits there is scored by the
//     GPU time it is expected to cost per unit of the job's work:
//
//     cost = share / speed             on a GPU already in use,
//     cost = (share + open_cost x (1 - share)) / speed   on an empty GPU,
//
//     where share is the part of the GPU the option takes (k/7 for a MIG
//     kg profile, the fraction otherwise) and speed is Option.Speed (the job's
//     throughput there relative to its reference; faster GPU types and more
//     efficient MIG sizes finish the same work in less GPU time). With
//     open_cost = 1 an empty GPU is charged whole: the job keeps it active
//     for its whole run unless others join. The job's work is common to all
//     candidates and cancels out, so the policy needs no run-time estimate.
//     Ties go to the smaller instance (room for later jobs), then to the
//     candidate leaving the least free share (best fit), then
//     the lower GPU ID and option index. A new MIG instance goes to the legal
//     start that leaves the layout most open (most (profile, start) slots
//     still free). Isolation is the snapshot's: MIG instances hold one job
//     each; a non-MIG GPU serves one tenant.
//
//  3. Consolidate (migrate=true), where room appeared: the GPUs that lost
//     a job since the previous call (Snapshot.Freed) are visited from the
//     least loaded (fewest jobs, then most free share, then position). If
//     at most max_moves jobs run on such a GPU and every one of them fits
//     on the other GPUs in use (each to its cheapest spot by the score
//     above, ties as in step 2, never on an empty GPU and never at a speed
//     below (1 - max_slowdown) x its current speed), the moves are kept when
//     they save the GPU for less than it is worth: e1 > e2 x (sum of the
//     moved running jobs' MigrationCost). Otherwise the GPU is restored.
//     This is underload-triggered consolidation, as in dynamic VM
//     consolidation (Beloglazov and Buyya, CCPE 2012: a host whose load
//     drops tries to migrate everything off it): a GPU's load only drops
//     when a job leaves it. Until issue 17 every GPU in use was visited at
//     every call, which cost O(GPUs in use) per event and was most of a
//     loaded replay's time (openb compressed 60x: 9.4 s of 9.5 s); on
//     paper/gpu-hours the rule changes the heuristic's GPU-hours by
//     +0.1% (docs/decisions/cluster.md).
//
// # Complexity
//
// With P pending jobs, F GPUs freed since the last call, T GPU models, O
// options per job and S <= 8 MIG starts per profile: a pending job's spot
// costs O(O T (log A + k) + S) through the free-capacity index
// (pack.View.CandidatesFor: per model and MIG profile, or per tenant, the
// GPUs in use ordered by free share, and per model the first server with
// an empty GPU and the CPU and memory asked), k being the GPUs the index
// offers that the job's server demands rule out; a consolidation costs
// O(F max_moves) such searches. Nothing is proportional to the cluster:
// run as a session (snapshot.Incremental) the policy keeps its view and
// index from call to call; on a snapshot, building them is O(GPUs + jobs)
// of the snapshot.
//
// # Arguments
//
// e1 (default 1), e2 (0.1): the program's weights (same defaults as the
// optimal policy). consolidate (freed): freed visits the GPUs a job left
// since the previous call (step 3); all visits every GPU in use at every
// call, the rule before issue 17, which costs O(GPUs in use) per call and
// is meant for small windows (on the 42 R6 windows it is closer to the
// per-snapshot optimum; docs/cluster.md). open_cost (1, in [0,1]): the charge for the unused part
// of an empty GPU. migrate (true). max_moves (4): the most jobs moved to
// empty one GPU. max_slowdown (0, in [0,1)): how much slower a moved job may
// run. mig (true): false runs every GPU whole, a job taking its fraction by
// time-sharing as naive-share does; with migrate=false it leaves only the
// GPU-type-aware, packing placement rule (the ablation ladder of
// paper/gpu-hours).
package conspirator
