package snapshot

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Policy decides where jobs run. Schedule must not keep or modify s; it must
// be deterministic for a given s unless a wall-clock limit documented by the
// policy cuts it short.
type Policy interface {
	Name() string
	Schedule(s *Snapshot) (Decision, error)
}

// MIGUser is the optional capability of a policy that says whether it
// partitions MIG-capable GPUs into instances (true) or runs them whole or
// shared by fractions (false). A policy without it partitions.
type MIGUser interface {
	UsesMIG() bool
}

// InstanceSharer is the optional capability of a policy that puts several
// jobs of one tenant on one MIG instance (Snapshot.ShareInstances) when
// SharesInstances returns true. A policy without it places one job per
// instance.
type InstanceSharer interface {
	SharesInstances() bool
}

// WorkloadClass is one kind of task in a target workload: its demand per
// task, the GPU types it may run on, and its weight.
type WorkloadClass struct {
	// Demand is the share of one GPU each task needs, in (0, 1].
	Demand float64
	// Types lists the GPU model names allowed; empty allows every type.
	Types []string
	// Weight is the class's popularity (any non-negative scale; the policy
	// normalises).
	Weight float64
}

// WorkloadAware is the optional capability of a policy that scores
// placements against the target workload (FGD): the simulator calls
// SetWorkload once, with the classes of the whole trace, before the first
// decision.
type WorkloadAware interface {
	SetWorkload(classes []WorkloadClass)
}

// SolveStats counts an exact policy's solves: how many ended proven
// optimal, how many were cut (by a time limit) with only a best-known
// decision, and the largest relative gap (cost - bound) / cost among those.
type SolveStats struct {
	Total    int     `json:"total"`
	Proven   int     `json:"proven"`
	Unproven int     `json:"unproven"`
	WorstGap float64 `json:"worst_gap"`
}

// Add returns the counts of s and o together (runs of several seeds).
func (s SolveStats) Add(o SolveStats) SolveStats {
	return SolveStats{Total: s.Total + o.Total, Proven: s.Proven + o.Proven, Unproven: s.Unproven + o.Unproven, WorstGap: max(s.WorstGap, o.WorstGap)}
}

// SolveReporter is the optional capability of an exact policy that says
// whether its decisions were proven optimal, so that a cut solve is never
// reported as the optimum.
type SolveReporter interface {
	SolveStats() SolveStats
}

// Capabilities are the optional interfaces a policy implements, read once
// (CapabilitiesOf) instead of by type assertions where the policy is used.
type Capabilities struct {
	UsesMIG bool // MIGUser's answer; true without MIGUser
	// SharesInstances is InstanceSharer's answer; false without it.
	SharesInstances bool
	Workload        WorkloadAware // nil unless the policy is WorkloadAware
	Solves          SolveReporter // nil unless the policy is exact (SolveReporter)
	// Incremental is nil unless the policy can keep a Session.
	Incremental Incremental
	// Offline is nil unless the policy plans whole windows (Offline).
	Offline Offline
}

// CapabilitiesOf reads p's optional capabilities.
func CapabilitiesOf(p Policy) Capabilities {
	c := Capabilities{UsesMIG: true}
	if m, ok := p.(MIGUser); ok {
		c.UsesMIG = m.UsesMIG()
	}
	if sh, ok := p.(InstanceSharer); ok {
		c.SharesInstances = sh.SharesInstances()
	}
	if w, ok := p.(WorkloadAware); ok {
		c.Workload = w
	}
	if s, ok := p.(SolveReporter); ok {
		c.Solves = s
	}
	if i, ok := p.(Incremental); ok {
		c.Incremental = i
	}
	if o, ok := p.(Offline); ok {
		c.Offline = o
	}
	return c
}

// Factory builds a policy from string arguments (as a scenario file gives
// them). It should read them through an Args and return Args.Err.
type Factory func(args map[string]string) (Policy, error)

var (
	regMu    sync.Mutex
	registry = map[string]Factory{}
)

// Register makes a policy available by name, after checking it once: the
// name is new and not empty, and the factory builds a policy from no
// arguments (every argument has a default) whose Name is the registered
// one. It returns what is wrong; init functions use MustRegister.
func Register(name string, f Factory) error {
	if name == "" || f == nil {
		return fmt.Errorf("snapshot: register %q: a policy needs a name and a factory", name)
	}
	p, err := f(nil)
	if err != nil {
		return fmt.Errorf("snapshot: register %q: the factory fails without arguments (every argument needs a default): %w", name, err)
	}
	if p.Name() != name {
		return fmt.Errorf("snapshot: register %q: the factory's policy calls itself %q", name, p.Name())
	}
	regMu.Lock()
	defer regMu.Unlock()
	if _, dup := registry[name]; dup {
		return fmt.Errorf("snapshot: policy %s registered twice", strconv.Quote(name))
	}
	registry[name] = f
	return nil
}

// MustRegister is Register for init functions, where a failed registration
// is a programming error of the policy's package: it panics with the error.
func MustRegister(name string, f Factory) {
	if err := Register(name, f); err != nil {
		panic(err)
	}
}

// New builds the named policy with its arguments. A name may carry a
// variant label after a slash, "conspirator/no-mig": the registered policy
// before the slash is built, so that one run can compare the same policy
// under several arguments (each entry has its own policy_args).
func New(name string, args map[string]string) (Policy, error) {
	base, variant, hasVariant := strings.Cut(name, "/")
	if hasVariant && (variant == "" || strings.Contains(variant, "/")) {
		return nil, fmt.Errorf("policy %q: a variant is NAME/LABEL with one non-empty label, e.g. conspirator/no-mig", name)
	}
	regMu.Lock()
	f, ok := registry[base]
	regMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("unknown policy %q; known policies: %s (a variant adds /LABEL, e.g. conspirator/no-mig)", base, strings.Join(Names(), ", "))
	}
	p, err := f(args)
	if err != nil {
		return nil, fmt.Errorf("policy %q: %w", name, err)
	}
	return p, nil
}

// Names returns the registered policy names, sorted.
func Names() []string {
	regMu.Lock()
	defer regMu.Unlock()
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Args reads typed policy arguments and collects every problem: a malformed
// value, a value out of range, or a key the policy does not know. Use it as
//
//	a := snapshot.NewArgs(args)
//	limit := a.Duration("time_limit", 10*time.Second, 0, time.Hour)
//	e1 := a.Float("e1", 1, 0, math.Inf(1))
//	if err := a.Err(); err != nil { return nil, err }
type Args struct {
	raw  map[string]string
	used map[string]bool
	errs []string
}

// NewArgs wraps raw arguments (nil is fine).
func NewArgs(raw map[string]string) *Args {
	return &Args{raw: raw, used: map[string]bool{}}
}

func (a *Args) get(key string) (string, bool) {
	a.used[key] = true
	v, ok := a.raw[key]
	return strings.TrimSpace(v), ok
}

// Float returns key as a float in [lo, hi], or def when absent.
func (a *Args) Float(key string, def, lo, hi float64) float64 {
	v, ok := a.get(key)
	if !ok {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f != f || f < lo || f > hi {
		a.errs = append(a.errs, fmt.Sprintf("%s=%q: want a number in [%g, %g]", key, v, lo, hi))
		return def
	}
	return f
}

// Int returns key as an integer in [lo, hi], or def when absent.
func (a *Args) Int(key string, def, lo, hi int) int {
	v, ok := a.get(key)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		a.errs = append(a.errs, fmt.Sprintf("%s=%q: want an integer in [%d, %d]", key, v, lo, hi))
		return def
	}
	return n
}

// Bool returns key as a boolean (true/false/1/0), or def when absent.
func (a *Args) Bool(key string, def bool) bool {
	v, ok := a.get(key)
	if !ok {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		a.errs = append(a.errs, fmt.Sprintf("%s=%q: want true or false", key, v))
		return def
	}
	return b
}

// Duration returns key as a Go duration ("500ms", "10s") in [lo, hi], or def
// when absent.
func (a *Args) Duration(key string, def, lo, hi time.Duration) time.Duration {
	v, ok := a.get(key)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < lo || d > hi {
		a.errs = append(a.errs, fmt.Sprintf("%s=%q: want a duration such as 10s in [%v, %v]", key, v, lo, hi))
		return def
	}
	return d
}

// Choice returns key, which must be one of choices, or def when absent.
func (a *Args) Choice(key, def string, choices ...string) string {
	v, ok := a.get(key)
	if !ok {
		return def
	}
	if !slices.Contains(choices, v) {
		a.errs = append(a.errs, fmt.Sprintf("%s=%q: want one of %s", key, v, strings.Join(choices, ", ")))
		return def
	}
	return v
}

// Err reports every problem found so far plus every key that no getter
// asked for (a misspelt argument must not be silently ignored).
func (a *Args) Err() error {
	var unknown []string
	for k := range a.raw {
		if !a.used[k] {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	errs := slices.Clone(a.errs)
	if len(unknown) > 0 {
		known := make([]string, 0, len(a.used))
		for k := range a.used {
			known = append(known, k)
		}
		slices.Sort(known)
		errs = append(errs, fmt.Sprintf("unknown argument(s) %s; known: %s", strings.Join(unknown, ", "), strings.Join(known, ", ")))
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("bad policy arguments: %s", strings.Join(errs, "; "))
}
