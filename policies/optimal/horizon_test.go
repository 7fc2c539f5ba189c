package optimal

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

func hours(h float64) engine.Time { return engine.Seconds(3600 * h) }

// wjob is a window job of one task with options at speed 1 unless given.
func wjob(id int, tenant string, arrival, work float64, opts ...snapshot.Option) snapshot.WindowJob {
	for k := range opts {
		if opts[k].Speed == 0 {
			opts[k].Speed = 1
		}
	}
	return snapshot.WindowJob{ID: id, Tenant: tenant, Arrival: hours(arrival), Work: hours(work), Tasks: 1, Options: opts}
}

func sevenSlow() []snapshot.WindowJob {
	var out []snapshot.WindowJob
	for k := range 7 {
		out = append(out, wjob(k, "a", 0, 1, snapshot.Option{Profile: "1g.5gb", Speed: 0.5}, inst("2g.10gb")))
	}
	return out
}

func inst(profile string) snapshot.Option { return snapshot.Option{Profile: profile} }

func frac(f float64) snapshot.Option { return snapshot.Option{Fraction: f} }

func horizonOf(t *testing.T, starts string, w *snapshot.Window) snapshot.Bound {
	t.Helper()
	cfg := DefaultHorizonConfig()
	cfg.Starts, cfg.TimeLimit = starts, 0
	h, err := NewHorizon(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.Horizon(w)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHorizonHandExamples checks bounds derived by hand on the A100-40GB
// MIG rules (7 compute and 8 memory slices: a 4g and a 3g share a GPU, two
// 4g do not) and on a V100 without MIG (one tenant per GPU).
func TestHorizonHandExamples(t *testing.T) {
	gang := wjob(1, "a", 0, 1, inst("7g.40gb"))
	gang.Tasks = 2
	for _, c := range []struct {
		name                string
		gpus                []snapshot.GPU
		jobs                []snapshot.WindowJob
		arrival, any        float64 // GPU-hours
		startsUsed, noteHas string  // the arrival run's relaxation, and its note
	}{
		{
			// From arrival: a 4g alone for an hour, then a 3g alone. Waiting,
			// the 3g shares the 4g's GPU: one GPU-hour.
			name: "waiting packs", gpus: gpus(t, "a100-40gb", 2),
			jobs:    []snapshot.WindowJob{wjob(1, "a", 0, 1, inst("4g.20gb")), wjob(2, "a", 1, 1, inst("3g.20gb"))},
			arrival: 2, any: 1, startsUsed: StartsArrival,
		},
		{
			// [0,1): 4g + 3g on one GPU; [1,2): two 4g need two; [2,3): one.
			// Any start: four 4g-hours need four GPU-hours (one 4g per GPU).
			name: "intervals", gpus: gpus(t, "a100-40gb", 2),
			jobs: []snapshot.WindowJob{wjob(1, "a", 0, 2, inst("4g.20gb")), wjob(2, "a", 1, 2, inst("4g.20gb")),
				wjob(3, "a", 0, 1, inst("3g.20gb"))},
			arrival: 4, any: 4, startsUsed: StartsArrival,
		},
		{
			// Two hours of work at speed 2 hold the GPU for one.
			name: "speed", gpus: gpus(t, "a100-40gb", 1),
			jobs:    []snapshot.WindowJob{wjob(1, "a", 0, 2, snapshot.Option{Profile: "7g.40gb", Speed: 2})},
			arrival: 1, any: 1, startsUsed: StartsArrival,
		},
		{
			// The fastest option sets the least time, whatever the packing
			// picks: 3g at speed 0.5 or 7g at speed 1 -> present for 1 h.
			name: "fastest option", gpus: gpus(t, "a100-40gb", 1),
			jobs: []snapshot.WindowJob{wjob(1, "a", 0, 1, snapshot.Option{Profile: "3g.20gb", Speed: 0.5}, inst("7g.40gb"))},
			// arrival: 1 GPU for 1 h; any: the LP runs 2 h of 3g at speed
			// 0.5 or 1 h of 7g: a 3g-hour costs at most 1/2 GPU-hour in
			// a layout of two 3g, so 2 h of 3g cost 1 GPU-hour either way.
			arrival: 1, any: 1, startsUsed: StartsArrival,
		},
		{
			// Seven jobs for an hour, each 1g at half speed or 2g at full:
			// the intervals hold each for an hour (its fastest) and pack
			// seven 1g on one GPU; but 1g at half speed needs two hours,
			// and a GPU-hour yields at most 3.5 hours of work (seven 1g at
			// 0.5, or three 2g and a 1g): 7 / 3.5 = 2 GPU-hours, the
			// larger bound, which holds for runs from arrival too.
			name: "slow options", gpus: gpus(t, "a100-40gb", 2),
			jobs:    sevenSlow(),
			arrival: 2, any: 2, startsUsed: StartsArrival,
		},
		{
			name: "gang", gpus: gpus(t, "a100-40gb", 2), jobs: []snapshot.WindowJob{gang},
			arrival: 2, any: 2, startsUsed: StartsArrival,
		},
		{
			// Without MIG two tenants never share a GPU; the any-start LP
			// relaxes that too: 0.3 + 0.3 of one GPU for an hour.
			name: "tenants without MIG", gpus: gpus(t, "v100", 2),
			jobs:    []snapshot.WindowJob{wjob(1, "a", 0, 1, frac(0.3)), wjob(2, "b", 0, 1, frac(0.3))},
			arrival: 2, any: 0.6, startsUsed: StartsArrival,
		},
		{
			// Two whole-GPU jobs at once on one GPU: no schedule runs both
			// from arrival, so the bound lets them wait, and says so.
			name: "no schedule from arrival", gpus: gpus(t, "a100-40gb", 1),
			jobs:    []snapshot.WindowJob{wjob(1, "a", 0, 1, inst("7g.40gb")), wjob(2, "a", 0, 1, inst("7g.40gb"))},
			arrival: 2, any: 2, startsUsed: StartsAny, noteHas: "no schedule starts every job on arrival",
		},
		{
			// A job that fits no GPU is left out and named.
			name: "fits nowhere", gpus: gpus(t, "a100-40gb", 1),
			jobs: []snapshot.WindowJob{wjob(1, "a", 0, 1, inst("7g.40gb")),
				wjob(2, "a", 0, 1, snapshot.Option{GPUType: "h100-80gb", Profile: "7g.80gb"})},
			arrival: 1, any: 1, startsUsed: StartsArrival, noteHas: "1 jobs fit no GPU",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := &snapshot.Window{GPUs: c.gpus, Jobs: c.jobs}
			a := horizonOf(t, StartsArrival, w)
			if math.Abs(a.GPUHours-c.arrival) > 1e-6 || a.Starts != c.startsUsed || !strings.Contains(a.Note, c.noteHas) {
				t.Errorf("starts=arrival: %v GPU-hours (%s, note %q); want %v (%s, note with %q)", a.GPUHours, a.Starts, a.Note, c.arrival, c.startsUsed, c.noteHas)
			}
			if a.Solves.Unproven > 0 || a.Upper < a.GPUHours-1e-9 {
				t.Errorf("starts=arrival: %+v; want every packing proven and upper >= bound", a)
			}
			y := horizonOf(t, StartsAny, w)
			if math.Abs(y.GPUHours-c.any) > 1e-6 || y.Starts != StartsAny {
				t.Errorf("starts=any: %v GPU-hours (%s); want %v", y.GPUHours, y.Starts, c.any)
			}
		})
	}
}

// TestHorizonAgainstBruteForce compares the arrival bound with a second
// implementation on random windows: every instant between two of the
// window's times, the tasks present then packed by bruteForce (exhaustive
// enumeration written from the snapshot rules, not the 0-1 program), times
// the instant's length. The reported bound is the larger of that and the
// bound that lets jobs wait.
func TestHorizonAgainstBruteForce(t *testing.T) {
	r := engine.NewStream(41, "optimal/horizon")
	compared := 0
	for trial := range 150 {
		s := randomSnapshot(r)
		w := &snapshot.Window{}
		for _, g := range s.GPUs {
			w.GPUs = append(w.GPUs, snapshot.GPU{ID: g.ID, Model: g.Model})
		}
		for k, j := range s.Jobs {
			opts := append([]snapshot.Option(nil), j.Options...)
			for o := range opts {
				opts[o].Speed = []float64{0.5, 1, 1.5}[r.IntN(3)]
			}
			w.Jobs = append(w.Jobs, snapshot.WindowJob{ID: k, Tenant: j.Tenant, Arrival: hours(float64(r.IntN(4))),
				Work: hours(float64(1 + r.IntN(3))), Tasks: 1, Options: opts})
		}
		for _, backend := range backendNames() {
			cfg := DefaultHorizonConfig()
			cfg.Backend, cfg.TimeLimit = backend, 0
			h, _ := NewHorizon(cfg)
			shapes, spans, _, err := windowShapes(w)
			if err != nil {
				t.Fatal(err)
			}
			got, infeasible, err := h.arrivalBound(w, shapes, spans)
			if err != nil {
				t.Fatalf("trial %d %s: %v", trial, backend, err)
			}
			all, err := h.Horizon(w)
			if err != nil {
				t.Fatalf("trial %d %s: %v", trial, backend, err)
			}
			want, feasible := bruteHorizon(w)
			if !feasible {
				if infeasible == "" || all.Starts != StartsAny {
					t.Errorf("trial %d %s: no packing from arrival exists, but the intervals say %q and the bound starts=%s", trial, backend, infeasible, all.Starts)
				}
				continue
			}
			compared++
			if infeasible != "" || math.Abs(got.GPUHours-want) > 1e-6 || got.Solves.Unproven > 0 {
				t.Errorf("trial %d %s: intervals give %v GPU-hours (%q, %+v); brute force %v", trial, backend, got.GPUHours, infeasible, got.Solves, want)
			}
			if all.Starts != StartsArrival || all.GPUHours < got.GPUHours-1e-9 || all.Upper < all.GPUHours {
				t.Errorf("trial %d %s: the bound %+v is below its intervals' %v", trial, backend, all, got.GPUHours)
			}
		}
	}
	if compared < 100 {
		t.Errorf("only %d windows had a schedule from arrival; the draw compares too few", compared)
	}
}

// bruteHorizon is the arrival bound computed instant by instant with
// bruteForce; feasible is false when some instant's tasks fit no packing.
func bruteHorizon(w *snapshot.Window) (gpuHours float64, feasible bool) {
	type span struct {
		from, to engine.Time
		job      int
	}
	var spans []span
	var times []engine.Time
	for k, j := range w.Jobs {
		fast := 0.0
		fits := false
		for _, o := range j.Options {
			fast = max(fast, o.Speed)
			for _, g := range w.GPUs {
				fits = fits || o.Fits(&g.Model)
			}
		}
		if !fits {
			continue
		}
		end := j.Arrival + engine.Time(math.Floor(float64(j.Work)/fast))
		spans = append(spans, span{j.Arrival, end, k})
		times = append(times, j.Arrival, end)
	}
	slices.Sort(times)
	times = slices.Compact(times)
	for _, a := range times {
		for _, b := range times {
			if b <= a {
				continue
			}
			next := true // b is the next time after a
			for _, c := range times {
				if c > a && c < b {
					next = false
				}
			}
			if !next {
				continue
			}
			s := &snapshot.Snapshot{GPUs: w.GPUs}
			for _, sp := range spans {
				if sp.from <= a && a < sp.to {
					j := w.Jobs[sp.job]
					s.Jobs = append(s.Jobs, snapshot.Job{ID: len(s.Jobs), Tenant: j.Tenant, Options: j.Options})
				}
			}
			if len(s.Jobs) == 0 {
				continue
			}
			n := bruteForce(s, Config{E1: 1, Strict: true})
			if math.IsInf(n, 1) {
				return 0, false
			}
			gpuHours += n * (b - a).Seconds() / 3600
		}
	}
	return gpuHours, true
}

func TestHorizonArguments(t *testing.T) {
	for _, c := range []struct {
		args map[string]string
		want string
	}{
		{map[string]string{"starts": "later"}, "starts"},
		{map[string]string{"time_limit": "0s"}, "must be positive"},
		{map[string]string{"backend": "glpk"}, "backend"},
		{map[string]string{"mig": "maybe"}, "mig"},
	} {
		if _, err := snapshot.New("optimal-horizon", c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v; want one naming %q", c.args, err, c.want)
		}
	}
	p, err := snapshot.New("optimal-horizon", map[string]string{"time_limit": "none", "starts": "any", "mig": "false"})
	if err != nil {
		t.Fatal(err)
	}
	if h := p.(*Horizon); h.cfg.TimeLimit != 0 || h.cfg.Starts != StartsAny || h.UsesMIG() {
		t.Errorf("config %+v; want no limit, starts=any, no MIG", h.cfg)
	}
	if _, err := p.Schedule(&snapshot.Snapshot{}); err == nil {
		t.Error("Schedule answered; an offline policy must refuse per-snapshot calls")
	}
	w := &snapshot.Window{GPUs: gpus(t, "a100-40gb", 1), Jobs: []snapshot.WindowJob{wjob(1, "a", 0, 1, snapshot.Option{Profile: "7g.40gb", Speed: -1})}}
	if _, err := p.(*Horizon).Horizon(w); err == nil || !strings.Contains(err.Error(), "speed") {
		t.Errorf("a job without a speed: err = %v; want one naming the speed", err)
	}
}
