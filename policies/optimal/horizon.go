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
}

// windowShapes turns w's jobs into shapes and their tasks' presence.
func windowShapes(w *snapshot.Window) (shapes []shape, spans []presence, skipped int, err error) {
	idx := map[string]int{}
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
		key := j.Tenant + "\x00" + fmt.Sprint(j.Options)
		s, ok := idx[key]
		if !ok {
			s = len(shapes)
			idx[key] = s
			shapes = append(shapes, shape{tenant: j.Tenant, options: j.Options, speed: fast})
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
	// First the LP bound of every set, which also finds a window with no
	// schedule from arrival before any solver runs; then the packings.
	for k := range sets {
		lower, infeas, err := lpLower(w, shapes, sets[k].active)
		if err != nil {
			return b, "", fmt.Errorf("optimal-horizon: interval from %.0f s: %w", sets[k].at.Seconds(), err)
		}
		if infeas {
			tasks := 0
			for _, c := range sets[k].active {
				tasks += c
			}
			return b, fmt.Sprintf("%d tasks at %.0f s", tasks, sets[k].at.Seconds()), nil
		}
		sets[k].lower = lower
	}
	cfg := Config{E1: 1, Backend: h.cfg.Backend, TimeLimit: h.cfg.TimeLimit, Strict: true}
	for k := range sets {
		st := &sets[k]
		lower, upper, proven, gap, infeas, err := packInterval(w, shapes, st.active, st.lower, cfg)
		if err != nil {
			return b, "", fmt.Errorf("optimal-horizon: interval from %.0f s: %w", st.at.Seconds(), err)
		}
		if infeas {
			return b, fmt.Sprintf("the tasks at %.0f s", st.at.Seconds()), nil
		}
		st.lower, st.upper, st.proven, st.gap = lower, upper, proven, gap
		b.Solves.Total++
		if proven {
			b.Solves.Proven++
		} else {
			b.Solves.Unproven++
			b.Solves.WorstGap = max(b.Solves.WorstGap, gap)
		}
	}
	b.Intervals, b.Distinct = len(ivs), len(sets)
	for _, iv := range ivs {
		b.GPUHours += float64(sets[iv.set].lower) * iv.hours
		b.Upper += float64(sets[iv.set].upper) * iv.hours
	}
	return b, "", nil
}

// intervalSnapshot is the packing problem of one interval: every active
// task pending on an empty cluster (no servers, no gangs: both relaxed).
func intervalSnapshot(w *snapshot.Window, shapes []shape, active []int) *snapshot.Snapshot {
	s := &snapshot.Snapshot{GPUs: make([]snapshot.GPU, len(w.GPUs))}
	for g := range w.GPUs {
		s.GPUs[g] = snapshot.GPU{ID: w.GPUs[g].ID, Model: w.GPUs[g].Model}
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
	items := make([]lpItem, len(shapes))
	for sh, n := range active {
		items[sh] = lpItem{need: float64(n), options: shapes[sh].options, rate: make([]float64, len(shapes[sh].options))}
		for o := range items[sh].rate {
			items[sh].rate[o] = 1
		}
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

// packInterval returns the least number of GPUs that hold the active
// tasks of one interval (lower, proven) and the best packing found
// (upper), given a proven lower bound; gap is (upper - lower) / upper.
// infeas: no packing holds them. The solver runs only when the greedy
// packing does not meet the larger of lower and the program's counting
// bound.
func packInterval(w *snapshot.Window, shapes []shape, active []int, lower int, cfg Config) (_, upper int, proven bool, gap float64, infeas bool, err error) {
	p, err := build(intervalSnapshot(w, shapes, active), cfg)
	if err != nil {
		return 0, 0, false, 0, false, err
	}
	perGPU := p.e1
	gpus := func(q int64) int { return int((q + perGPU - 1) / perGPU) }
	lower = max(lower, gpus(p.bound))
	if inc := p.incumbent; inc != nil && gpus(p.value(inc)) <= lower {
		// The greedy packing meets the bound: no solver needed.
		return lower, lower, true, 0, false, nil
	}
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
	lower = max(lower, gpus(out.bound))
	if x == nil {
		// Cut before any packing was found: the bound stands, unproven,
		// and every GPU of the cluster is the only upper value known.
		upper = len(w.GPUs)
		return lower, upper, false, float64(upper-lower) / float64(upper), false, nil
	}
	upper = gpus(p.value(x))
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
