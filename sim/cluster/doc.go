// Package cluster provides the job-level cluster scheduling simulation: it
// replays a job trace on a cluster of heterogeneous, MIG-capable GPUs under
// each named placement policy and reports GPU-hours, queueing and completion
// times, migrations and decision times per policy.
//
// # Model
//
// A trace job (workloads.Job) needs NumGPU GPUs, each to the share
// GPUMilli/1000, as a gang: the simulator splits it into NumGPU tasks (one
// snapshot job each, consecutive IDs, one snapshot.Job.Gang) and runs the
// job only when every task is placed; a decision that places part of a
// gang is applied as if it placed none of it.
//
// Servers. The cluster is servers, each with GPUs of one model, CPU
// (milli-cores) and memory (MiB): a node list's rows (openb's sn,
// cpu_milli, memory_mib, gpu, model), or Config.GPUs cut into servers of
// GPUGroup.PerServer GPUs (default 8, CPU and memory not modelled unless
// given). A job's CPUMilli and MemoryMiB (openb's cpu_milli, memory_mib)
// are split evenly over its tasks; the tasks on a server's GPUs must fit
// its CPU and memory. A gang's tasks share one server unless
// Config.GangSpan; a batch gang spread over servers then synchronises its
// gradients over their NICs every iteration and runs at (C + T_1)/(C +
// T_k) of its speed (Config.GangComm: one model stands for every
// multi-GPU job, as the trace names none; a service holds its time
// wherever it runs). The simulator refuses a decision that breaks these
// rules (an error, not a silent fix); the policies keep them through
// policies/internal/pack (the exact policy through rows of its program). A
// gang larger than every server never runs and counts as unscheduled.
// CPU-only pods. With Config.CPUPods (default) a trace's CPU-only pods
// hold CPU and memory of a server for their run time. The simulator places
// them, not the policy (policies place GPU jobs): at arrival and after any
// event, waiting pods first, each on the server that fits it with the most
// left (the mean over CPU and memory of the share left: Kubernetes' default
// NodeResourcesLeastAllocated score), ties to the lowest server; a pod that
// fits nowhere waits. Policies see what pods hold as Server.Held*. Pods
// are not jobs: GPU-hours, JCT, queueing and jobs.csv count GPU jobs; the
// pods have their own summary (PodStats). A window keeps the pods arriving
// between its first and last GPU job; synthetic jobs have none.
//
// Work and speed. The trace's Duration is the job's run time on its
// reference GPU R with its requested share: R is the trace's GPU type when
// the job is constrained (the allowed type with the most GPUs in the
// cluster), else Config.ReferenceGPU (default: the cluster's most common
// type). The job's demand is D = GPUMilli/1000 x RelSpeed(R) (hw/gpu
// RelSpeed of Config.SpeedModel, whole-GPU throughput relative to an
// A100-80GB). A placement gives capacity C = f x RelSpeed(G) for a fraction f
// of a non-MIG GPU G, or SpeedFraction(G, k) x RelSpeed(G) for a MIG instance
// of k compute slices; with Config.MIGCompute sms (the default) k is the
// instance's SM share x 7 where the geometry knows SMs (the H200's, measured;
// imported geometries), because SMs are what computes and they are not
// proportional to slices there (4g.71gb: 64 of 132 SMs, 48%, not 4/7);
// packing still counts slices. The job's speed there is C/D and its remaining work
// (reference nanoseconds) drains at that speed. A gang runs at its slowest
// task's speed.
//
// Kinds of job (Config.JobKind). What is above is a batch job: fixed
// work. A service holds its placement for its Duration whatever GPU it
// gets (speed 1 on every option, no interference on its time: what its
// requests lose to co-runners is not modelled). It serves the load it
// served on R with its share there, so it needs the capacity
// D = GPUMilli/1000 x RelSpeed(R) and the memory GPUMilli/1000 x
// Memory(R): on a GPU run whole the fraction max(D / RelSpeed(G),
// memory / Memory(G)), an option only where that is at most 1; on a MIG
// GPU the profiles whose slices give D (SpeedFraction x RelSpeed(G)) and
// whose memory holds it. by-qos (the default) makes LS, Guaranteed and
// Burstable pods services and BE pods (and jobs without a QoS) batch jobs;
// all-batch and all-service make every job one kind. A censored job
// (still running when the trace ended; Config.Censored "recorded") holds
// its placement for the time the trace recorded, at speed 1, and has no
// completion time; "kind" runs it as its kind with that duration. The
// policies, the exact program and the horizon bound see a job only
// through its options, which carry all of this.
//
// LLM services (Config.LLMServices). Each service (a model served at a
// request rate within an SLO, from its arrival for its duration, in
// count copies) is resolved once, before the replay and for every seed
// and policy alike, by the configuration search Env.LLMServices gives
// (sim/llmcap's, which imports this package): the cheapest configuration
// meeting the SLO on the cluster's GPU types it may use. Each replica of
// each copy is then a service job of the copy's own tenant (whatever
// Tenants and JobKind say) on the chosen type only: a gang of tp whole
// GPUs, or, for a MIG slice, one job whose MIG option is that very profile
// (the instance whole, as the search served it) and whose option on a GPU
// run whole is the slice's share (the larger of its compute and memory
// slice shares), time-shared as any service. They arrive at their own
// times, after the trace's window, bootstrap and compression, are never
// left out by leave_out_longest, and are reported per service and policy
// (PolicyResult.LLMServices: replicas placed, waiting, GPU time held). A
// service no configuration serves is reported (Result.LLMServices, Met
// false) and left out of the replay; never silently. With services, the
// trace may be empty: the services alone.
//
// Options (the R_it of the paper's program). On a non-MIG GPU (or a MIG GPU
// under a policy that does not use MIG, which then runs it whole) a task
// takes the fraction GPUMilli/1000 of whichever GPU it lands on, the
// trace's own semantics. On a MIG GPU a task with share s may use a profile
// of k compute and m memory slices when k/7 >= s and m/8 >= s (the share
// covers both compute time and memory, as the trace defines it):
// Config.MIGOptions "smallest" offers the smallest such profile, "fitting"
// (default) every such profile, smallest first. GPU-type constraints keep
// only the allowed types.
//
// Interference. Tasks time-sharing a GPU without MIG slow each other: a
// task whose co-runners hold the share u of the GPU (fraction sum of the
// others, at most 1) runs at its option's speed x (1 -
// Config.TimeshareSlowdown x u). The default 0.343 is Gavel's measurement
// (OSDI'20): single-GPU training jobs co-located in pairs on a V100 each
// kept 0.657 of their isolated throughput (mean of 636 pairs); linear in
// u is this model's assumption, exact at u = 0 and u = 1. When a task
// joins or leaves, the others on that GPU are brought up to date and
// their completions moved. MIG instances are isolated from each other.
// Where a policy shares instances (snapshot.InstanceSharer: the optimal
// policy's instance_sharing, the paper's (c) read literally), the tasks of
// one instance are of one tenant, each takes the share of the instance its
// MIG option gives (the larger of s x 7/k and s x 8/m, at most 1), the
// shares sum to at most 1, and they slow each other by the same rule with
// u their co-runners' share of the instance. GPU-hours count the GPU once,
// as for any instance.
//
// Cluster and seeds. The cluster is Config.GPUs or a node list; of a node
// list, Config.NodeOrder "seeded" orders the servers by a permutation
// drawn from the seed (after sorting by name), so that policies that take
// the lowest-numbered GPU do not read the file's row order, and
// Config.NodeFraction keeps the first share of each model's servers in
// that order (a cluster sized to the trace). Config.Seeds runs every
// policy under that many seeds, in parallel, and reports means with 95%
// CIs; Config.Baseline names the policy the others are compared with, seed
// by seed.
//
// Tenants. Config.Tenants "trace" uses the trace's tenant ("" is one shared
// tenant), "per-job" makes every job its own tenant (isolation between
// every pair of jobs, the reading of the paper's hard isolation requirement
// when a trace names no owners), "single" puts every job in one tenant.
// Without MIG a GPU serves one tenant (snapshot rule); MIG instances isolate.
//
// MIG reconfiguration. Instances stay after their job leaves (idle). A
// placement on an instance that does not exist destroys the idle instances
// in its way and creates it, each operation taking Config.MIGReconfigTime;
// the task starts after them. Only idle instances are touched, so other jobs
// on the GPU keep running.
//
// Migration. A running job whose task moves pauses for Config.MigrationTime
// (checkpoint, transfer, restore) plus any reconfiguration at the
// destination, then continues with its remaining work; its old place is
// freed at once, its new one held during the pause. Each moved task counts as
// one migration and carries MigrationCost (m_i) in the snapshot.
//
// # Loop
//
// Events: arrivals, completions, ends of setup (reconfiguration,
// migration). Any event asks for one policy invocation at now +
// Config.BatchWindow (coalesced). The policy sees a Snapshot of the alive
// tasks (running and pending, by ID = arrival order) and of the servers
// that hold a task (all their GPUs) plus, of each class of identical
// servers (GPU model and count, CPU, memory), the lowest-index empty
// servers, as many as there are pending tasks: empty servers of one class
// are interchangeable, so nothing is lost and each call costs O(alive
// jobs), not O(cluster).
//
// # Metrics
//
//   - gpu_hours: integral over time of the number of GPUs holding at least
//     one task (running, in setup or migrating): the paper's GPU-hours.
//   - gpu_hours_fractional: integral of the allocated share (non-MIG:
//     fraction sum; MIG: compute slices of busy instances / 7).
//   - utilization: gpu_hours_fractional / gpu_hours.
//   - jct_s: completion - arrival; queue_s: first placement - arrival (MIG
//     setup counts in jct_s, not in queue_s); over completed jobs, 0 when
//     none completed.
//   - capacity_used: gpu_hours / (cluster GPUs x hours from the first
//     arrival to the last completion); peak_active_gpus: the most GPUs
//     held at once; jobs_queued_pct: jobs that waited before their first
//     placement.
//   - migrations: moved or preempted tasks; unscheduled: jobs never
//     completed (no GPU type or capacity ever fitted them).
//   - decision_us: wall-clock microseconds per policy call (mean, p99),
//     measured around Schedule but kept out of the deterministic result:
//     Result.Policies[i].DecisionUS is always zero, the measurement is in
//     Result.Timing, and Result.WithTiming fills it in for display.
//     Timing also splits the calls by snapshot size (BySize; LargeUS for
//     snapshots of at least LargeJobs jobs, where an exact solver's cost
//     shows) and keeps each call's size and time (Calls, written by
//     DecisionsCSV as decisions.csv).
//   - optimality_gap: (gpu_hours - gpu_hours of "optimal") / gpu_hours of
//     "optimal" when the optimal policy is among those run, else null.
package cluster
