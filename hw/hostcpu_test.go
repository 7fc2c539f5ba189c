package hw

import (
	"math"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
)

// Share and Stretch, by hand:
//
//	per-core: share = 1 - u/2; stretch = (1 + alpha u) / share
//	threads:  share = min(1, N / (uN + 1))
func TestHostCPUShareStretch(t *testing.T) {
	cases := []struct {
		cfg            HostCPUConfig
		share, stretch float64
	}{
		{HostCPUConfig{Cores: 80, Background: 0, Model: BackgroundPerCore, Interference: 0.1}, 1, 1},
		{HostCPUConfig{Cores: 80, Background: 0.8, Model: BackgroundPerCore, Interference: 0.1}, 0.6, 1.08 / 0.6}, // 1.8
		{HostCPUConfig{Cores: 80, Background: 0.5, Model: BackgroundPerCore, Interference: 0}, 0.75, 1 / 0.75},    // 1.333
		{HostCPUConfig{Cores: 80, Background: 0.5, Model: BackgroundThreads, Interference: 0.1}, 1, 1.05},         // 40 + 1 <= 80
		{HostCPUConfig{Cores: 4, Background: 0.9, Model: BackgroundThreads, Interference: 0}, 4 / 4.6, 4.6 / 4},   // 3.6 + 1 > 4
	}
	for _, c := range cases {
		if err := c.cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		if math.Abs(c.cfg.Share()-c.share) > 1e-12 || math.Abs(c.cfg.Stretch()-c.stretch) > 1e-12 {
			t.Errorf("%+v: share %.4f stretch %.4f, want %.4f %.4f", c.cfg, c.cfg.Share(), c.cfg.Stretch(), c.share, c.stretch)
		}
	}
}

func TestHostCPUValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  HostCPUConfig
		want string
	}{
		{HostCPUConfig{Cores: 0, Model: BackgroundPerCore}, "at least 1 core"},
		{HostCPUConfig{Cores: 8, Background: 1, Model: BackgroundPerCore}, "outside [0, 1)"},
		{HostCPUConfig{Cores: 8, Background: -0.1, Model: BackgroundPerCore}, "outside [0, 1)"},
		{HostCPUConfig{Cores: 8, Model: "magic"}, "unknown background model"},
		{HostCPUConfig{Cores: 8, Model: BackgroundPerCore, Interference: math.NaN()}, "interference"},
	} {
		_, err := NewHostCPU(engine.New(nil), tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want it to mention %q", tc.cfg, err, tc.want)
		}
	}
}

type jobSpec struct {
	at   engine.Time
	work engine.Time
}

func runJobs(t *testing.T, cfg HostCPUConfig, jobs []jobSpec) []engine.Time {
	t.Helper()
	sim := engine.New(nil)
	h, err := NewHostCPU(sim, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ends := make([]engine.Time, len(jobs))
	for i, j := range jobs {
		i, j := i, j
		sim.MustAt(j.at, func() { h.Execute(j.work, func() { ends[i] = sim.Now() }) })
	}
	sim.Run()
	if h.Active() != 0 {
		t.Errorf("%d jobs still active", h.Active())
	}
	return ends
}

// Jobs that start alone run at the lone-job share with a scheduled end;
// when they would share, they move into processor sharing. The times must
// be those of exact processor sharing, worked out by hand:
func TestHostCPUSharing(t *testing.T) {
	ms := engine.Millisecond
	cases := []struct {
		name string
		cfg  HostCPUConfig
		jobs []jobSpec
		want []engine.Time
	}{
		// 4 jobs of 1 ms on 2 idle cores: each gets 1/2 core, all end at 2 ms.
		{"four on two", HostCPUConfig{Cores: 2, Model: BackgroundPerCore},
			[]jobSpec{{0, ms}, {0, ms}, {0, ms}, {0, ms}}, []engine.Time{2 * ms, 2 * ms, 2 * ms, 2 * ms}},
		// A, B (1 ms) at 0 run alone until C arrives at 0.5 ms with 0.5 ms
		// left each; then three share two cores at 2/3: A and B end at
		// 0.5 + 0.5/(2/3) = 1.25 ms, C has done 0.75 x 2/3 = 0.5 ms and
		// finishes its last 0.5 ms alone at full speed: 1.75 ms.
		{"staggered", HostCPUConfig{Cores: 2, Model: BackgroundPerCore},
			[]jobSpec{{0, ms}, {0, ms}, {ms / 2, ms}}, []engine.Time{1250 * engine.Microsecond, 1250 * engine.Microsecond, 1750 * engine.Microsecond}},
		// Per-core stressors at u = 0.8 (share 0.6) and alpha = 0.25
		// (work x1.2): a lone 0.6 ms job takes 0.72/0.6 = 1.2 ms.
		{"loaded", HostCPUConfig{Cores: 4, Background: 0.8, Model: BackgroundPerCore, Interference: 0.25},
			[]jobSpec{{0, 600 * engine.Microsecond}}, []engine.Time{1200 * engine.Microsecond}},
		// Threads: one background thread on 2 cores. Alone, a job gets a
		// whole core; two jobs get 2/3 each: two 1 ms jobs end at 1.5 ms.
		{"threads", HostCPUConfig{Cores: 2, Background: 0.5, Model: BackgroundThreads},
			[]jobSpec{{0, ms}, {0, ms}}, []engine.Time{1500 * engine.Microsecond, 1500 * engine.Microsecond}},
		// Threads, staggered: A alone from 0 (rate 1) until B at 0.5 ms;
		// then 2/3 each: A's last 0.5 ms ends at 1.25 ms; B has 0.5 ms
		// done and ends alone at 1.75 ms.
		{"threads staggered", HostCPUConfig{Cores: 2, Background: 0.5, Model: BackgroundThreads},
			[]jobSpec{{0, ms}, {ms / 2, ms}}, []engine.Time{1250 * engine.Microsecond, 1750 * engine.Microsecond}},
	}
	for _, tc := range cases {
		got := runJobs(t, tc.cfg, tc.jobs)
		for i := range got {
			if d := got[i] - tc.want[i]; d < -2 || d > 2 {
				t.Errorf("%s: job %d ends at %v, want %v", tc.name, i, got[i], tc.want[i])
			}
		}
	}
}

// CPU time counts the work and interference, not the time-sharing.
func TestHostCPUSeconds(t *testing.T) {
	sim := engine.New(nil)
	h, _ := NewHostCPU(sim, HostCPUConfig{Cores: 1, Background: 0.5, Model: BackgroundPerCore, Interference: 0.2})
	h.Execute(engine.Millisecond, nil)
	h.Execute(engine.Millisecond, nil)
	sim.Run()
	// 2 ms x (1 + 0.2 x 0.5) = 2.2 ms.
	if math.Abs(h.CPUSeconds()-2.2e-3) > 1e-12 {
		t.Errorf("CPU seconds %v, want 2.2e-3", h.CPUSeconds())
	}
}

// BackgroundSlice: a wake-up waits with probability u*m for a time
// uniform in [0, S), so over n wake-ups about n*u*m wait, with mean S/2;
// work itself runs at full speed times 1 + alpha*u. The bounds are five
// standard deviations of the binomial count and of the mean of a
// uniform, so a correct model fails about once in a million seeds.
func TestSliceWakeupsClosedForm(t *testing.T) {
	const (
		n     = 20000
		u     = 0.6
		m     = 0.1
		slice = 3 * engine.Millisecond
		work  = 10 * engine.Microsecond
	)
	sim := engine.New(nil)
	h, err := NewHostCPU(sim, HostCPUConfig{Cores: 1, Background: u, Model: BackgroundSlice, Interference: 0.5,
		Slice: slice, WakeupMiss: m, Rand: engine.NewStream(7, "test")})
	if err != nil {
		t.Fatal(err)
	}
	var lat []engine.Time
	var issue func(i int)
	issue = func(i int) {
		if i == n {
			return
		}
		start := sim.Now()
		h.Wake(work, func() { lat = append(lat, sim.Now()-start); issue(i + 1) })
	}
	sim.MustAt(0, func() { issue(0) })
	sim.Run()
	waits, total := h.WakeWaits()
	p := u * m
	if sd := math.Sqrt(n * p * (1 - p)); math.Abs(float64(waits)-n*p) > 5*sd {
		t.Errorf("%d of %d wake-ups waited, want %v +- %v", waits, n, n*p, 5*sd)
	}
	mean := total.Seconds() / float64(waits)
	if sd := slice.Seconds() / math.Sqrt(12*float64(waits)); math.Abs(mean-slice.Seconds()/2) > 5*sd {
		t.Errorf("mean wait %v s, want %v +- %v", mean, slice.Seconds()/2, 5*sd)
	}
	// Every request that did not wait took exactly work * (1 + 0.5*0.6):
	// the foreground preempts the stressor, only interference stretches.
	want := engine.Time(math.Ceil(work.Seconds() * 1.3 * 1e9))
	fast := 0
	for _, l := range lat {
		if l == want {
			fast++
		} else if l < want {
			t.Fatalf("a request took %v, less than its work %v", l, want)
		}
	}
	if fast+waits != n {
		t.Errorf("%d requests at full speed + %d waits, want %d in all", fast, waits, n)
	}
	// Under the other models Wake is Execute: no draws, no waits.
	sim2 := engine.New(nil)
	h2, _ := NewHostCPU(sim2, HostCPUConfig{Cores: 1, Background: u, Model: BackgroundPerCore})
	var end engine.Time
	h2.Wake(work, func() { end = sim2.Now() })
	sim2.Run()
	if w, _ := h2.WakeWaits(); w != 0 || end != engine.Time(math.Ceil(work.Seconds()/(1-u/2)*1e9)) {
		t.Errorf("per-core Wake: %d waits, end %v; want 0 and the per-core stretch", w, end)
	}
}

func TestSliceConfigErrors(t *testing.T) {
	r := engine.NewStream(1, "x")
	for _, tc := range []struct {
		cfg  HostCPUConfig
		want string
	}{
		{HostCPUConfig{Cores: 1, Model: BackgroundSlice, WakeupMiss: 0.1, Rand: r}, "slice > 0"},
		{HostCPUConfig{Cores: 1, Model: BackgroundSlice, Slice: 1, WakeupMiss: 1.5, Rand: r}, "[0, 1]"},
		{HostCPUConfig{Cores: 1, Model: BackgroundSlice, Slice: 1, WakeupMiss: 0.1}, "random stream"},
		{HostCPUConfig{Cores: 1, Model: BackgroundSlice, Slice: 1, WakeupMissFloor: -0.1, Rand: r}, "floor -0.1 must be in [0, 1]"},
		{HostCPUConfig{Cores: 1, Model: "cfs"}, "unknown background model"},
	} {
		if err := tc.cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one containing %q", tc.cfg, err, tc.want)
		}
	}
}

// The floor: under any load u > 0 a wake-up waits with probability
// floor + u*m, at u = 0 never (hand-derived: 0.02 + 0.1 x 0.1 = 3% of
// 20,000 wake-ups, 600 +- 5 standard deviations of the binomial count).
func TestSliceWakeupFloor(t *testing.T) {
	const n, floor, m = 20000, 0.02, 0.1
	for _, u := range []float64{0, 0.1} {
		sim := engine.New(nil)
		h, err := NewHostCPU(sim, HostCPUConfig{Cores: 1, Background: u, Model: BackgroundSlice,
			Slice: engine.Millisecond, WakeupMiss: m, WakeupMissFloor: floor, Rand: engine.NewStream(3, "test")})
		if err != nil {
			t.Fatal(err)
		}
		var issue func(i int)
		issue = func(i int) {
			if i < n {
				h.Wake(engine.Microsecond, func() { issue(i + 1) })
			}
		}
		sim.MustAt(0, func() { issue(0) })
		sim.Run()
		waits, _ := h.WakeWaits()
		p := 0.0
		if u > 0 {
			p = floor + u*m
		}
		if sd := math.Sqrt(n * p * (1 - p)); math.Abs(float64(waits)-n*p) > 5*sd {
			t.Errorf("load %v: %d of %d wake-ups waited, want %v +- %v", u, waits, n, n*p, 5*sd)
		}
	}
}

// IdleWake delays a wake-up by its value at no background load, under
// every model, and not at all under load; Execute never.
func TestIdleWake(t *testing.T) {
	const idle, work = 5 * engine.Microsecond, 10 * engine.Microsecond
	for _, c := range []struct {
		model BackgroundModel
		u     float64
		wake  bool
		want  engine.Time
	}{
		{BackgroundPerCore, 0, true, idle + work},
		{BackgroundSlice, 0, true, idle + work},
		{BackgroundPerCore, 0, false, work},
		{BackgroundSlice, 0.2, true, work}, // interference 0, miss 0: no wait
	} {
		sim := engine.New(nil)
		h, err := NewHostCPU(sim, HostCPUConfig{Cores: 1, Background: c.u, Model: c.model, Slice: engine.Millisecond,
			IdleWake: idle, Rand: engine.NewStream(1, "t")})
		if err != nil {
			t.Fatal(err)
		}
		var end engine.Time
		if c.wake {
			h.Wake(work, func() { end = sim.Now() })
		} else {
			h.Execute(work, func() { end = sim.Now() })
		}
		sim.Run()
		if end != c.want {
			t.Errorf("%s at %v (wake %v): done at %v, want %v", c.model, c.u, c.wake, end, c.want)
		}
	}
	if err := (HostCPUConfig{Cores: 1, Model: BackgroundPerCore, IdleWake: -1}).Validate(); err == nil || !strings.Contains(err.Error(), "idle wake-up delay") {
		t.Errorf("a negative idle wake-up: %v", err)
	}
}
