// Package optimal provides the exact GPU scheduler: it solves the
// Conspirator paper's 0-1 program (minimise e1 x GPUs in use + e2 x
// migration cost) for a snapshot with a real solver and reports the proven
// gap, registered as policy "optimal".
//
// # Reading of the paper's program (conspirator.md, "The scheduling problem")
//
// Slots w of GPU j are the legal MIG placements (profile, start) of its
// model, restricted to profiles some job may use there. x_ijw = 1 puts job i
// in slot w of GPU j with the option whose profile is that slot's profile,
// so the option index t is carried by w and x_ijwt collapses to x_ijw (a job
// lists an option once per profile and GPU type). On a non-MIG GPU there is
// one "slot" per job option: a fraction of the whole GPU.
//
//   - (a) every job is placed exactly once. Strict mode keeps "= 1" and fails
//     when capacity is short; the default adds u_i (job left pending) with
//     penalty P = (sum of every other objective weight) + 1, so the solver
//     first places as many jobs as possible, then minimises the paper's
//     objective among those placements.
//   - (b) options respected: x only exists where the option fits the GPU.
//   - (c) has two readings. Default: one job per MIG instance, y_jw =
//     sum_i x_ijw (y is substituted): a job's option is a profile, so its
//     demand R_it is the whole instance. instance_sharing=true reads (c)
//     literally: R_i is the share of the instance job i's option asks for
//     (Option.InstanceShare: its Fraction on a MIG option, 0 meaning the
//     whole instance; the simulator derives it from the trace's GPU
//     share), and one instance holds several jobs while their R_i sum to
//     at most 1. It adds a variable I_jw per slot and the rows
//     sum_i R_i x_ijw <= I_jw (in 1e-6 units; written only where the R_i
//     could exceed 1), x_ijw <= I_jw for each x (single implications),
//     and one tenant per instance (S_jwk per tenant k with jobs there,
//     x_ijw <= S_jwk for tenant k's x, sum_k S_jwk <= 1); I_jw then takes
//     x's place in (d), (e) and (g)-(h)'s homogeneous rows. Jobs sharing an
//     instance slow each other in the simulator (cluster.timeshare_slowdown),
//     which the paper's objective does not see, so the greedy incumbent
//     shares an instance only where no new one fits on a GPU in use. It
//     needs snapshots with ShareInstances (the simulator sets it for this
//     policy), and the horizon bound does not cover it.
//   - (d) capacity: no memory slice is covered by two slots (for each GPU and
//     memory slice m: sum of slots covering m <= Y_j), compute slices <=
//     ComputeSlices, and each profile at most MaxCount times. The memory
//     rows also tie x to Y_j, which is (e) in its strongest form.
//   - (f) d_i = 1 - x_{i,current slot}: a running job pays m_i unless it stays
//     on the same GPU, profile and start. Pending jobs have no current
//     placement; their constant d_i = 1 of the literal formula is dropped.
//   - (g)-(h) "one option per GPU" has two readings, both optional. With t
//     the option (the profile name), homogeneous=true allows only
//     homogeneous layouts (every instance of a GPU the same profile), which
//     contradicts MIG's flexible sizes. With t the tenant,
//     tenant_per_gpu=true adds a variable A_jk per MIG GPU j and tenant k
//     with jobs fitting there, x_ijw <= A_jk for each of tenant k's x (single
//     implications) and sum_k A_jk <= 1: a GPU serves one tenant, MIG
//     included. Both are off by default (docs/decisions/cluster.md says why).
//   - isolation: a MIG instance holds one job (one tenant's jobs under
//     instance_sharing); a non-MIG GPU serves one tenant (variables T_jk
//     with sum_k T_jk <= 1) and fractions sum <= 1.
//
// Costs are quantised to multiples of CostQuantum and non-MIG fractions to
// 1e-6 of a GPU so that both backends solve the same integer program.
//
// Redundant rows that make the solver faster and do not change the optimum:
// identical GPUs with no running job are used in index order (Y_j >=
// Y_j+1); of two pending jobs of one tenant with equal options the first is
// pending only if the second is; and two counting cuts say the GPUs in use
// offer at least the compute and the memory the placed jobs need at the
// least (840 sum_j Y_j + sum_i need_i u_i >= sum_i need_i, in 1/840 GPU;
// under instance_sharing a job needs R_i of its instance, rounded down, or
// the whole instance where no other job of its tenant takes a share small
// enough to join it: an instance of two or more jobs holds only jobs with
// such a partner, so the charges still sum to at most the instance).
//
// # Backends
//
//   - "gophersat" (default, pure Go): github.com/crillab/gophersat v1.4.0
//     PB solving, driven as a linear search from above: start from a greedy
//     incumbent, ask for a model cheaper by one quantum, repeat; UNSAT
//     proves the last model optimal, and an incumbent that meets the
//     counting bound stops the search at once. A single SAT call cannot be
//     interrupted, and gophersat keeps a buffer of its conflict analysis in
//     a package-level variable, so two solves in one process must take
//     turns. Hence the workers: where the assembly sets StartWorker (the
//     conspirator binary does), a solve with a time limit runs in a worker
//     process (Serve, a line of JSON per problem and per improved model),
//     and at the limit the worker is killed: the best model it reported is
//     the decision, unproven, and nothing of the cut search outlives the
//     limit to delay the next solve. Workers whose search ended in time are
//     reused. Without StartWorker (tests, library use) the search runs in
//     this process: one gophersat solve at a time, and a SAT call cut by
//     the limit finishes in the background, holding that turn until it
//     ends. Its CuttingPlanes mode is not used: on this program it
//     panicked and returned non-optimal "optimal" answers.
//   - "cbc": COIN-OR CBC 2.10 through cgo (coin/Cbc_C_Interface.h), only in
//     builds with -tags cbc (Debian: coinor-libcbc-dev). It honours the time
//     limit itself and reports its LP-based best bound.
//
// # Gap
//
// Decision.Bound is a proven lower bound on the optimum: equal to Cost when
// a backend proved optimality; otherwise the larger of CBC's best bound and
// the counting bound (computed here, valid for both backends): at least
// kmin jobs must stay pending when the least needs exceed J x 840 units
// (dropping the largest needs first gives the fewest), and the rest need
// ceil(need/840) GPUs. Result.Gap = (Cost - Bound) / Cost.
//
// # Horizon optimum (policy "optimal-horizon")
//
// The per-snapshot optimum above is myopic, so a heuristic can beat it in
// GPU-hours. Horizon is the offline bound instead: it reads the whole
// window (snapshot.Window: every job's arrival, work and options) and
// returns a proven lower bound on the GPU-hours of every run it covers
// (snapshot.Bound). The simulator calls it once per seed instead of
// replaying it. To bound every policy, the program relaxes what the
// simulator charges:
//
//   - migration and MIG reconfiguration are free and instant: the packing
//     may change at any instant;
//   - a task holds a GPU for Work / (its fastest option's speed), rounded
//     down: time-sharing slowdowns and pauses only lengthen a run;
//   - the servers' CPU and memory, and gangs' one-server rule, are dropped
//     (a gang's tasks are independent tasks);
//   - start times: see the two readings below.
//
// starts=arrival (default): every task holds a GPU from its arrival for
// its least run time. The window splits into intervals between
// consecutive starts and ends; each distinct set of tasks present is
// packed on the fewest GPUs by this package's program (E1 = 1, E2 = 0,
// strict, every task pending on the empty cluster). That program is
// closed without a solver when the greedy packing meets the larger of the
// counting bound and the configuration LP bound of the set (below), rounded
// up; otherwise the backend solves it within time_limit, and a cut solve
// keeps its proven bound (reported unproven). The bound is the sum of
// the sets' lower bounds times their intervals' lengths, or the starts=any
// bound where that is higher (slow options cost more than an interval
// charges). It holds for runs in which every job ran from its arrival:
// none waited and none was preempted. A window where some instant's tasks
// fit no packing has no such run; the bound is then the starts=any one,
// and Bound.Note says so.
//
// starts=any: jobs may wait and be preempted; only the GPU time each
// needs counts. It is the configuration LP (fractional bin packing over
// time; Gilmore and Gomory 1961) solved by gonum's simplex: y_io hours of
// class i on option o do speed_o x y_io of its work; z_mc hours of one
// GPU of MIG model m in maximal layout c (hw/mig's Layouts) supply n_cp
// instance-hours of profile p; one hour of a non-MIG GPU supplies one
// GPU-hour of fractions (tenants relaxed); minimise sum z. The LP value
// is scaled by 1 - 1e-9 so that float error never lifts it above the
// relaxation's optimum. It holds for every run that finishes its jobs.
//
// mig selects the MIG mode (true: partitioned, as conspirator and the
// optimum; false: whole GPUs shared by fractions, as exclusive,
// naive-share and fgd); a bound covers only policies of its mode. The
// sizes it proves: on identical A100s the greedy packing meets the LP or
// counting bound for most sets (BenchmarkHorizon: 100 jobs on 16 GPUs, 194
// sets, all proven in 8 s with CBC; the R6 windows in at most 1.2 s).
// Before the solver, bounds also pass between nested neighbouring sets (a
// set's optimum is at least that of a set it contains and at most that of
// one containing it). On heterogeneous clusters many sets stay open and
// each costs the solver up to time_limit (paper/gpu-hours' 61-GPU sample,
// 120 jobs: 78 of 130 sets cut at 2 s, 117 s): a tool for windows, not
// whole traces.
//
// # Determinism
//
// With TimeLimit 0 both backends give a result that depends on the
// snapshot alone. With a limit the result depends on the wall clock only
// when the limit actually stops the search (Result.Optimal is then false).
package optimal
