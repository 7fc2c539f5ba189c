package optimal

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// Config selects the objective weights, the backend and its limits.
type Config struct {
	// E1 weighs each GPU in use, E2 each unit of migration cost (the e1, e2
	// of the paper). Both >= 0.
	E1, E2 float64
	// Backend is "gophersat" (default, pure Go) or "cbc" (builds with -tags
	// cbc only).
	Backend string
	// TimeLimit bounds the wall-clock solve time; 0 means none (policy
	// argument time_limit: none; a written limit must be positive) (the solve
	// then always ends with a proof of optimality, and its result depends on
	// the snapshot alone). When the limit cuts a solve short the best
	// decision found so far is returned with its proven gap.
	TimeLimit time.Duration
	// Strict keeps constraint (a) as "= 1": a snapshot whose jobs cannot all
	// be placed is an error instead of a decision with pending jobs.
	Strict bool
	// Homogeneous adds the paper's (g)-(h) read with t as the option
	// (profile): every MIG instance of a GPU has the same profile.
	Homogeneous bool
	// TenantPerGPU adds (g)-(h) read with t as the tenant: a GPU serves one
	// tenant, MIG GPUs included (A_jk >= x_ijw for tenant k's jobs,
	// sum_k A_jk <= 1), so tenants are isolated by whole GPUs, not by MIG
	// instances. Non-MIG GPUs serve one tenant in every reading.
	TenantPerGPU bool
	// InstanceSharing reads the paper's (c) literally: one MIG instance
	// may hold several jobs of one tenant while their demands (R_it, the
	// options' instance shares, Option.InstanceShare) sum to at most the
	// instance. It needs snapshots that allow it
	// (Snapshot.ShareInstances): the simulator sets that for this policy
	// (SharesInstances).
	InstanceSharing bool
}

// maxWeight keeps every quantised objective weight, and their sum, far from
// int64 (and gophersat's int) overflow.
const maxWeight = 1e6

// DefaultConfig is what the "optimal" policy uses when given no arguments.
func DefaultConfig() Config {
	return Config{E1: 1, E2: 0.1, Backend: "gophersat", TimeLimit: 60 * time.Second}
}

// Validate reports every problem with c.
func (c Config) Validate() error {
	var errs []error
	for name, v := range map[string]float64{"e1": c.E1, "e2": c.E2} {
		if v < 0 || math.IsNaN(v) || v > maxWeight {
			errs = append(errs, fmt.Errorf("%s = %v; want a weight in [0, %g]", name, v, maxWeight))
		}
	}
	if _, ok := backends[c.Backend]; !ok {
		errs = append(errs, fmt.Errorf("backend %q is not available in this build; have %s%s", c.Backend, strings.Join(backendNames(), ", "), cbcHint))
	}
	if c.TimeLimit < 0 {
		errs = append(errs, fmt.Errorf("time limit %v; want >= 0 (0 = none)", c.TimeLimit))
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}

// outcome is what a backend returns.
type outcome struct {
	x        []bool // best assignment found; nil when none
	optimal  bool   // the solver proved x optimal
	infeas   bool   // the solver proved the program infeasible
	bound    int64  // the solver's proven lower bound in quanta; math.MinInt64 when it has none
	improved int    // solutions found on the way (gophersat) or 0
}

// backend solves a program within a wall-clock limit (0 = none).
type backend func(p *program, limit time.Duration) (outcome, error)

var backends = map[string]backend{"gophersat": solveGophersat}

func backendNames() []string {
	out := make([]string, 0, len(backends))
	for n := range backends {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Result is a decision with what the solver knows about its quality.
type Result struct {
	Decision snapshot.Decision
	// Optimal is true when the solver proved Decision optimal.
	Optimal bool
	// Gap is (Cost - Bound) / Cost, 0 when optimal or Cost is 0.
	Gap float64
	// Vars and Constraints are the size of the 0-1 program.
	Vars, Constraints int
	// Improvements counts the incumbents gophersat found.
	Improvements int
	// Elapsed is the wall-clock solve time (informational only: never let
	// it into simulation results).
	Elapsed time.Duration
}

// Solver is the exact scheduler. It counts its solves (SolveStats) for the
// report: a decision cut by the time limit is never passed off as optimal.
type Solver struct {
	cfg   Config
	stats snapshot.SolveStats
}

// SolveStats implements snapshot.SolveReporter: the solves made by
// Schedule so far.
func (o *Solver) SolveStats() snapshot.SolveStats { return o.stats }

// NewSolver checks cfg and returns a solver.
func NewSolver(cfg Config) (*Solver, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Solver{cfg: cfg}, nil
}

// Name implements snapshot.Policy.
func (o *Solver) Name() string { return "optimal" }

// SharesInstances implements snapshot.InstanceSharer.
func (o *Solver) SharesInstances() bool { return o.cfg.InstanceSharing }

// Schedule implements snapshot.Policy.
func (o *Solver) Schedule(s *snapshot.Snapshot) (snapshot.Decision, error) {
	r, err := o.Solve(s)
	if err == nil {
		o.stats.Total++
		if r.Optimal {
			o.stats.Proven++
		} else {
			o.stats.Unproven++
			o.stats.WorstGap = max(o.stats.WorstGap, r.Gap)
		}
	}
	return r.Decision, err
}

// Solve formulates and solves s.
func (o *Solver) Solve(s *snapshot.Snapshot) (Result, error) {
	if err := snapshot.CheckSnapshot(s); err != nil {
		return Result{}, fmt.Errorf("optimal: invalid snapshot: %w", err)
	}
	if o.cfg.InstanceSharing && !s.ShareInstances {
		return Result{}, errors.New("optimal: instance_sharing=true needs a snapshot that lets jobs share MIG instances (Snapshot.ShareInstances); the simulator sets it for this policy")
	}
	p, err := build(s, o.cfg)
	if err != nil {
		return Result{}, fmt.Errorf("optimal: %w", err)
	}
	begin := time.Now()
	out, err := backends[o.cfg.Backend](p, o.cfg.TimeLimit)
	r := Result{Vars: len(p.vars), Constraints: len(p.cons), Improvements: out.improved, Elapsed: time.Since(begin)}
	if err != nil {
		return r, fmt.Errorf("optimal (%s): %w", o.cfg.Backend, err)
	}
	if out.infeas {
		return r, errors.New("optimal: the jobs cannot all be placed (strict mode); allow pending jobs with strict=false")
	}
	if inc := p.incumbent; inc != nil && (out.x == nil || (!out.optimal && p.value(inc) < p.value(out.x))) {
		out.x = inc
	}
	if out.x == nil {
		return r, fmt.Errorf("optimal (%s): no feasible decision found within %v", o.cfg.Backend, o.cfg.TimeLimit)
	}
	d := p.decision(out.x)
	cost := p.value(out.x)
	bound := max(p.bound, out.bound)
	if out.optimal || bound >= cost {
		bound, r.Optimal = cost, true
	}
	d.Cost = float64(cost) * CostQuantum
	d.Bound = float64(bound) * CostQuantum
	if cost > 0 {
		r.Gap = float64(cost-bound) / float64(cost)
	}
	if err := snapshot.CheckDecision(s, d); err != nil {
		return r, fmt.Errorf("optimal (%s): internal error, the solution breaks a rule: %w", o.cfg.Backend, err)
	}
	r.Decision = d
	return r, nil
}

func init() {
	snapshot.MustRegister("optimal", func(raw map[string]string) (snapshot.Policy, error) {
		def := DefaultConfig()
		raw, noLimit, err := timeLimitNone(raw)
		if err != nil {
			return nil, err
		}
		a := snapshot.NewArgs(raw)
		cfg := Config{
			E1:              a.Float("e1", def.E1, 0, maxWeight),
			E2:              a.Float("e2", def.E2, 0, maxWeight),
			Backend:         a.Choice("backend", def.Backend, "gophersat", "cbc"),
			TimeLimit:       a.Duration("time_limit", def.TimeLimit, time.Millisecond, 24*time.Hour),
			Strict:          a.Bool("strict", def.Strict),
			Homogeneous:     a.Bool("homogeneous", def.Homogeneous),
			TenantPerGPU:    a.Bool("tenant_per_gpu", def.TenantPerGPU),
			InstanceSharing: a.Bool("instance_sharing", def.InstanceSharing),
		}
		if err := a.Err(); err != nil {
			return nil, err
		}
		if noLimit {
			cfg.TimeLimit = 0
		}
		return NewSolver(cfg)
	})
}

// timeLimitNone reads the time_limit argument's special forms: "none" asks
// for a proof however long it takes (it is removed from the returned
// arguments, noLimit true); a written limit must be positive, so that "0s"
// (which reads like "no time at all") is never taken for "no limit".
func timeLimitNone(raw map[string]string) (out map[string]string, noLimit bool, err error) {
	v, ok := raw["time_limit"]
	if !ok {
		return raw, false, nil
	}
	switch d, perr := time.ParseDuration(strings.TrimSpace(v)); {
	case strings.TrimSpace(v) == "none":
		out = maps.Clone(raw)
		delete(out, "time_limit")
		return out, true, nil
	case perr == nil && d <= 0:
		return nil, false, fmt.Errorf("bad policy arguments: time_limit=%q: a limit must be positive, e.g. 10s; write none for no limit (then every solve ends with a proof)", v)
	}
	return raw, false, nil
}
