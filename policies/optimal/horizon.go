package optimal

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/optimize/convex/lp"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// HorizonConfig configures the horizon optimum (policy "optimal-horizon").
type HorizonConfig struct {
	// Backend and TimeLimit are those of the exact solver, for each
	// interval's packing (Config); 0 = no limit.
	Backend   string
	TimeLimit time.Duration
	// Starts is the relaxation: StartsArrival or StartsAny.
	Starts string
	// MIG partitions MIG-capable GPUs (the bound is then one for policies
	// that partition); false runs them whole, shared by fractions.
	MIG bool
}

// The two relaxations of the horizon optimum (see the package
// documentation, "Horizon optimum").
const (
	StartsArrival = "arrival"
	StartsAny     = "any"
)

// DefaultHorizonConfig is what "optimal-horizon" uses with no arguments.
func DefaultHorizonConfig() HorizonConfig {
	return HorizonConfig{Backend: "gophersat", TimeLimit: 60 * time.Second, Starts: StartsArrival, MIG: true}
}

// Validate reports every problem with c.
func (c HorizonConfig) Validate() error {
	var errs []error
	if _, ok := backends[c.Backend]; !ok {
		errs = append(errs, fmt.Errorf("backend %q is not available in this build; have %s%s", c.Backend, strings.Join(backendNames(), ", "), cbcHint))
	}
	if c.TimeLimit < 0 {
		errs = append(errs, fmt.Errorf("time limit %v; want >= 0 (0 = none)", c.TimeLimit))
	}
	if c.Starts != StartsArrival && c.Starts != StartsAny {
		errs = append(errs, fmt.Errorf("starts %q; want %s or %s", c.Starts, StartsArrival, StartsAny))
	}
	return errors.Join(errs...)
}

// Horizon is the offline optimum of GPU-hours over a window: a lower bound
// for every online policy run on the same window (snapshot.Offline).
type Horizon struct {
	cfg HorizonConfig
}

// NewHorizon checks cfg and returns the horizon optimum.
func NewHorizon(cfg HorizonConfig) (*Horizon, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Horizon{cfg: cfg}, nil
}

// Name implements snapshot.Policy.
func (h *Horizon) Name() string { return "optimal-horizon" }

// UsesMIG implements snapshot.MIGUser.
func (h *Horizon) UsesMIG() bool { return h.cfg.MIG }

// Schedule implements snapshot.Policy; an offline policy is never asked
// for a decision per snapshot, so it refuses.
func (h *Horizon) Schedule(*snapshot.Snapshot) (snapshot.Decision, error) {
	return snapshot.Decision{}, errors.New("optimal-horizon plans a whole window offline (snapshot.Offline): it takes no decision per snapshot")
}

// presence is the least time a task holds a GPU: from its arrival for its
// work at its fastest option.
type presence struct {
	start, end engine.Time
	shape      int
}

// Horizon implements snapshot.Offline.
func (h *Horizon) Horizon(w *snapshot.Window) (snapshot.Bound, error) {
	if len(w.GPUs) == 0 {
		return snapshot.Bound{}, errors.New("optimal-horizon: the window has no GPU")
	}
	shapes, spans, skipped, err := windowShapes(w)
	if err != nil {
		return snapshot.Bound{}, err
	}
	var note string
	if skipped > 0 {
		note = fmt.Sprintf("%d jobs fit no GPU of the cluster and are left out (no policy runs them either)", skipped)
	}
	if h.cfg.Starts == StartsAny {
		b, err := anyStartBound(w, shapes, spans)
		b.Note = note
		return b, err
	}
	b, infeasible, err := h.arrivalBound(w, shapes, spans)
	if err != nil {
		return b, err
	}
	if infeasible != "" {
		// No schedule runs every job from its arrival: the weaker bound
		// that lets jobs wait is the only one that holds, and it says so.
		b, err = anyStartBound(w, shapes, spans)
		b.Note = join(note, "no schedule starts every job on arrival ("+infeasible+"); the bound lets jobs wait (starts=any)")
		return b, err
	}
	// The bound that lets jobs wait holds for these runs too, and it is
	// the higher one where slow options cost more GPU time than the
	// intervals charge (they hold a task only for its fastest run time).
	loose, err := anyStartBound(w, shapes, spans)
	if err != nil {
		return b, err
	}
	b.GPUHours = max(b.GPUHours, loose.GPUHours)
	b.Upper = max(b.Upper, b.GPUHours)
	b.Note = note
	return b, nil
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// shape is a class of tasks a packing cannot tell apart: same options and
// tenant.
type shape struct {
	tenant  string
	options []snapshot.Option
	speed   float64 // the fastest option's
	// class numbers the shapes with equal options (whatever the tenant):
	// the LP bounds, which relax tenants, count them as one.
	class int
	// leastC and leastM are the least shares of one GPU's compute and
	// memory a task of the shape takes, over its options and the GPU
	// models they fit (a fraction counts for both on a non-MIG GPU).
	leastC, leastM float64
}

// leastShares returns shape.leastC and leastM for options on the GPUs.
func leastShares(opts []snapshot.Option, gpus []snapshot.GPU) (c, m float64) {
	c, m = math.Inf(1), math.Inf(1)
	for _, o := range opts {
		for g := range gpus {
			md := &gpus[g].Model
			if !o.Fits(md) {
				continue
			}
			if !md.IsMIG() {
				c, m = min(c, o.Fraction), min(m, o.Fraction)
				continue
			}
			pr, _ := md.Profile(o.Profile)
			c = min(c, float64(pr.Compute)/float64(md.MIG.ComputeSlices))
			m = min(m, float64(pr.MemSlices)/float64(md.MIG.MemorySlices))
		}
	}
	return c, m
}

// oneJobPerInstance returns opts with the instance shares of MIG options
// cleared: the horizon packs one task per instance, so jobs that differ
// only in them are one shape. opts itself is returned when it has none.
func oneJobPerInstance(opts []snapshot.Option) []snapshot.Option {
	if !slices.ContainsFunc(opts, func(o snapshot.Option) bool { return o.Profile != "" && o.Fraction != 0 }) {
		return opts
	}
	out := slices.Clone(opts)
	for k := range out {
		if out[k].Profile != "" {
			out[k].Fraction = 0
		}
	}
	return out
}

// windowShapes turns w's jobs into shapes and their tasks' presence.
func windowShapes(w *snapshot.Window) (shapes []shape, spans []presence, skipped int, err error) {
	idx, classes := map[string]int{}, map[string]int{}
	for k := range w.Jobs {
		j := &w.Jobs[k]
		if j.Tasks < 1 {
			return nil, nil, 0, fmt.Errorf("optimal-horizon: job %d has %d tasks; want at least 1", j.ID, j.Tasks)
		}
		if j.Work < 0 || j.Arrival < 0 {
			return nil, nil, 0, fmt.Errorf("optimal-horizon: job %d has arrival %v and work %v; want both >= 0", j.ID, j.Arrival, j.Work)
		}
		fast := 0.0
		for t, o := range j.Options {
			if !(o.Speed > 0) || math.IsInf(o.Speed, 0) {
				return nil, nil, 0, fmt.Errorf("optimal-horizon: job %d option %d has speed %v; the horizon needs each option's speed (> 0) to know how long the job runs", j.ID, t, o.Speed)
			}
			fast = max(fast, o.Speed)
		}
		fits := false
		for _, o := range j.Options {
			for g := range w.GPUs {
				fits = fits || o.Fits(&w.GPUs[g].Model)
			}
		}
		if !fits {
			skipped++
			continue
		}
		// The least time the job can hold its GPUs: co-runners and pauses
		// only lengthen it, so rounding down keeps the bound a bound.
		d := engine.Time(math.Floor(float64(j.Work) / fast))
		if d <= 0 {
			continue
		}
		options := oneJobPerInstance(j.Options)
		opts := fmt.Sprint(options)
		key := j.Tenant + "\x00" + opts
		s, ok := idx[key]
		if !ok {
			s = len(shapes)
			idx[key] = s
			c, ok := classes[opts]
			if !ok {
				c = len(classes)
				classes[opts] = c
			}
			lc, lm := leastShares(options, w.GPUs)
			shapes = append(shapes, shape{tenant: j.Tenant, options: options, speed: fast, class: c, leastC: lc, leastM: lm})
		}
		for range j.Tasks {
			spans = append(spans, presence{j.Arrival, j.Arrival + d, s})
		}
	}
	return shapes, spans, skipped, nil
}

// arrivalBound is the optimum over schedules in which every task holds a
// GPU from its arrival for its least run time, migrating for free: the
// window splits into intervals between consecutive starts and ends, and
// each interval's least number of GPUs is one packing program. infeasible
// names an interval whose tasks fit no packing.
func (h *Horizon) arrivalBound(w *snapshot.Window, shapes []shape, spans []presence) (b snapshot.Bound, infeasible string, err error) {
	b.Starts = StartsArrival
	type event struct {
		t     engine.Time
		shape int
		delta int
	}
	evs := make([]event, 0, 2*len(spans))
	for _, sp := range spans {
		evs = append(evs, event{sp.start, sp.shape, +1}, event{sp.end, sp.shape, -1})
	}
	slices.SortStableFunc(evs, func(a, b event) int { return cmp.Compare(a.t, b.t) })
	// The intervals, and the distinct sets of tasks among them.
	type set struct {
		active       []int
		at           engine.Time // its first interval's start
		lower, upper int
		proven       bool
		gap          float64
	}
	type interval struct {
		set   int
		hours float64
	}
	var (
		sets []set
		ivs  []interval
	)
	index := map[string]int{}
	active := make([]int, len(shapes))
	n := 0
	var key strings.Builder
	for i := 0; i < len(evs); {
		t := evs[i].t
		for ; i < len(evs) && evs[i].t == t; i++ {
			active[evs[i].shape] += evs[i].delta
			n += evs[i].delta
		}
		if n == 0 || i == len(evs) {
			continue
		}
		key.Reset()
		for s, c := range active {
			if c > 0 {
				key.WriteString(strconv.Itoa(s))
				key.WriteByte(':')
				key.WriteString(strconv.Itoa(c))
				key.WriteByte(' ')
			}
		}
		k, ok := index[key.String()]
		if !ok {
			k = len(sets)
			index[key.String()] = k
			sets = append(sets, set{active: slices.Clone(active), at: t})
		}
		ivs = append(ivs, interval{k, (evs[i].t - t).Seconds() / 3600})
	}
	// A set whose least compute or memory exceeds the cluster's has no
	// packing: found before any program is built (an overloaded window
	// has many such sets).
	for k := range sets {
		needC, needM, tasks := 0.0, 0.0, 0
		for sh, c := range sets[k].active {
			needC += float64(c) * shapes[sh].leastC
			needM += float64(c) * shapes[sh].leastM
			tasks += c
		}
		if need := max(needC, needM); need > float64(len(w.GPUs))+1e-9 {
			return b, fmt.Sprintf("%d tasks at %.0f s need %.1f GPUs at the least", tasks, sets[k].at.Seconds(), need), nil
		}
	}
	// First every set that the greedy packing closes against the counting
	// bound, then, for the rest, the LP bound, which also finds a window
	// with no schedule from arrival before any solver runs; then the
	// solver for the sets still open.
	cfg := Config{E1: 1, Backend: h.cfg.Backend, TimeLimit: h.cfg.TimeLimit, Strict: true}
	open := make([]bool, len(sets))
	most := 0 // tasks of the largest set
	for k := range sets {
		c := 0
		for _, v := range sets[k].active {
			c += v
		}
		most = max(most, c)
	}
	for k := range sets {
		st := &sets[k]
		p, err := build(intervalSnapshot(w, shapes, st.active), cfg)
		if err != nil {
			return b, "", fmt.Errorf("optimal-horizon: interval from %.0f s: %w", st.at.Seconds(), err)
		}
		st.lower = p.gpus(p.bound)
		if inc := p.incumbent; inc != nil && p.gpus(p.value(inc)) <= st.lower {
			st.upper, st.proven = st.lower, true
			continue
		}
		lower, infeas, err := lpLower(w, shapes, st.active)
		if err != nil {
			return b, "", fmt.Errorf("optimal-horizon: interval from %.0f s: %w", st.at.Seconds(), err)
		}
		if infeas {
			tasks := 0
			for _, c := range st.active {
				tasks += c
			}
			return b, fmt.Sprintf("%d tasks at %.0f s", tasks, st.at.Seconds()), nil
		}
		st.lower = max(st.lower, lower)
		st.upper = most + 1 // no packing known (more GPUs than any packing uses)
		if inc := p.incumbent; inc != nil {
			st.upper = p.gpus(p.value(inc))
		}
		if st.upper <= st.lower {
			st.upper, st.proven = st.lower, true
			continue
		}
		open[k] = true
	}
	// Neighbouring intervals often hold nested sets (one arrives, one
	// leaves): a set's optimum is at least that of a set it contains (drop
	// tasks from a packing) and at most that of a set containing it (the
	// same packing, less those tasks). Passing the bounds along may close
	// open sets before any solver runs, and after each solve.
	relax := func() {
		for changed := true; changed; {
			changed = false
			for i := 1; i < len(ivs); i++ {
				a, c := &sets[ivs[i-1].set], &sets[ivs[i].set]
				for _, pr := range [2][2]*set{{a, c}, {c, a}} {
					small, big := pr[0], pr[1]
					if small == big || !contains(big.active, small.active) {
						continue
					}
					if small.lower > big.lower {
						big.lower, changed = small.lower, true
					}
					if big.upper < small.upper {
						small.upper, changed = big.upper, true
					}
				}
			}
		}
		for k := range sets {
			if st := &sets[k]; open[k] && st.lower >= st.upper {
				st.upper, st.proven, open[k] = st.lower, true, false
			}
		}
	}
	relax()
	for k := range sets {
		st := &sets[k]
		if open[k] {
			// Built again rather than kept: a window's open programs
			// together can take gigabytes.
			p, err := build(intervalSnapshot(w, shapes, st.active), cfg)
			if err != nil {
				return b, "", fmt.Errorf("optimal-horizon: interval from %.0f s: %w", st.at.Seconds(), err)
			}
			lower, upper, proven, gap, infeas, err := packInterval(p, st.lower, len(w.GPUs), cfg)
			if err != nil {
				return b, "", fmt.Errorf("optimal-horizon: interval from %.0f s: %w", st.at.Seconds(), err)
			}
			if infeas {
				return b, fmt.Sprintf("the tasks at %.0f s", st.at.Seconds()), nil
			}
			upper = min(upper, st.upper)
			if lower >= upper {
				proven, gap = true, 0
			} else if !proven {
				gap = float64(upper-lower) / float64(upper)
			}
			st.lower, st.upper, st.proven, st.gap = lower, upper, proven, gap
			open[k] = false
			relax()
		}
		b.Solves.Total++
		if st.proven {
			b.Solves.Proven++
		} else {
			b.Solves.Unproven++
			b.Solves.WorstGap = max(b.Solves.WorstGap, st.gap)
		}
	}
	b.Intervals, b.Distinct = len(ivs), len(sets)
	for _, iv := range ivs {
		b.GPUHours += float64(sets[iv.set].lower) * iv.hours
		b.Upper += float64(sets[iv.set].upper) * iv.hours
	}
	return b, "", nil
}

// contains reports whether set big holds every task of set small.
func contains(big, small []int) bool {
	for i := range small {
		if small[i] > big[i] {
			return false
		}
	}
	return true
}

// intervalSnapshot is the packing problem of one interval: every active
// task pending on an empty cluster (no servers, no gangs: both relaxed).
//
// GPUs of one model are interchangeable here, and n tasks use n GPUs at
// most, so each model lists at most n of its GPUs: the same optimum, and a
// program that grows with the tasks present, not with the cluster.
func intervalSnapshot(w *snapshot.Window, shapes []shape, active []int) *snapshot.Snapshot {
	n := 0
	for _, c := range active {
		n += c
	}
	s := &snapshot.Snapshot{}
	perModel := map[string]int{}
	for g := range w.GPUs {
		m := &w.GPUs[g].Model
		if perModel[m.Name] < n {
			perModel[m.Name]++
			s.GPUs = append(s.GPUs, snapshot.GPU{ID: w.GPUs[g].ID, Model: *m})
		}
	}
	for sh, c := range active {
		for range c {
			s.Jobs = append(s.Jobs, snapshot.Job{ID: len(s.Jobs), Tenant: shapes[sh].tenant, Options: shapes[sh].options})
		}
	}
	return s
}

// lpLower is the configuration LP's bound on the GPUs that hold one
// interval's active tasks, rounded up (bin packing's LP bound is rarely
// more than one below the optimum, and usually meets it); infeas: not even
// a fractional packing holds them.
func lpLower(w *snapshot.Window, shapes []shape, active []int) (lower int, infeas bool, err error) {
	items := make([]lpItem, len(shapes)) // by class; the tail stays empty
	for sh, n := range active {
		it := &items[shapes[sh].class]
		if it.options == nil {
			it.options, it.rate = shapes[sh].options, make([]float64, len(shapes[sh].options))
			for o := range it.rate {
				it.rate[o] = 1
			}
		}
		it.need += float64(n)
	}
	frac, err := configLP(w.GPUs, items, true)
	if errors.Is(err, lp.ErrInfeasible) {
		return 0, true, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("the LP bound: %w", err)
	}
	return int(math.Ceil(frac - 1e-6)), false, nil
}

// gpus is an objective value of the packing program (E1 = 1, nothing
// else charged) in GPUs, rounded up.
func (p *program) gpus(q int64) int { return int((q + p.e1 - 1) / p.e1) }

// packInterval solves one interval's packing program p, given a proven
// lower bound on its GPUs: it returns the least number of GPUs (lower,
// proven) and the best packing found (upper), on a cluster of n GPUs; gap
// is (upper - lower) / upper. infeas: no packing holds the tasks. A cut
// solve keeps the larger of lower and the solver's bound.
func packInterval(p *program, lower, n int, cfg Config) (_, upper int, proven bool, gap float64, infeas bool, err error) {
	out, err := backends[cfg.Backend](p, cfg.TimeLimit)
	if err != nil {
		return 0, 0, false, 0, false, fmt.Errorf("%s: %w", cfg.Backend, err)
	}
	if out.infeas {
		return 0, 0, false, 0, true, nil
	}
	x := out.x
	if inc := p.incumbent; inc != nil && (x == nil || p.value(inc) < p.value(x)) {
		x = inc
	}
	lower = max(lower, p.gpus(out.bound))
	if x == nil {
		// Cut before any packing was found: the bound stands, unproven,
		// and every GPU of the cluster is the only upper value known.
		upper = n
		return lower, upper, false, float64(upper-lower) / float64(upper), false, nil
	}
	upper = p.gpus(p.value(x))
	if out.optimal || lower >= upper {
		return upper, upper, true, 0, false, nil
	}
	return lower, upper, false, float64(upper-lower) / float64(upper), false, nil
}

func init() {
	snapshot.MustRegister("optimal-horizon", func(raw map[string]string) (snapshot.Policy, error) {
		def := DefaultHorizonConfig()
		raw, noLimit, err := timeLimitNone(raw)
		if err != nil {
			return nil, err
		}
		a := snapshot.NewArgs(raw)
		cfg := HorizonConfig{
			Backend:   a.Choice("backend", def.Backend, "gophersat", "cbc"),
			TimeLimit: a.Duration("time_limit", def.TimeLimit, time.Millisecond, 24*time.Hour),
			Starts:    a.Choice("starts", def.Starts, StartsArrival, StartsAny),
			MIG:       a.Bool("mig", def.MIG),
		}
		if err := a.Err(); err != nil {
			return nil, err
		}
		if noLimit {
			cfg.TimeLimit = 0
		}
		return NewHorizon(cfg)
	})
}
