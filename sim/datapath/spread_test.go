package datapath

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/units"
)

func empirical(p, q []float64) Spread {
	return Spread{Distribution: SpreadEmpirical, P: p, ExcessUS: q}
}

// Bad spreads are refused naming the key and what is wrong.
func TestSpreadValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    Spread
		want string // "" for valid
	}{
		{"constant", ConstantSpread(), ""},
		{"empirical", empirical([]float64{0, 0.5, 1}, []float64{0, 1, 5}), ""},
		{"flat table", empirical([]float64{0, 1}, []float64{2, 2}), ""},
		{"unknown name", Spread{Distribution: "lognormal"}, `host.spread.copy.distribution: unknown distribution "lognormal"`},
		{"constant with a table", Spread{Distribution: SpreadConstant, P: []float64{0, 1}, ExcessUS: []float64{0, 1}}, "host.spread.copy.distribution: constant takes no table"},
		{"negative spread", empirical([]float64{0, 0.5, 1}, []float64{-1, 1, 5}), "host.spread.copy.excess_us[0]: -1 is a negative spread"},
		{"not monotone", empirical([]float64{0, 0.5, 1}, []float64{0, 3, 2}), "host.spread.copy.excess_us[2]: 2 is below excess_us[1] = 3"},
		{"p not ascending", empirical([]float64{0, 0.5, 0.5, 1}, []float64{0, 1, 2, 3}), "host.spread.copy.p[2]: 0.5 is not above p[1]"},
		{"p not to 1", empirical([]float64{0, 0.9}, []float64{0, 1}), "host.spread.copy.p: must run from 0 to 1"},
		{"lengths differ", empirical([]float64{0, 1}, []float64{0, 1, 2}), "host.spread.copy.p: an empirical table needs at least 2 probabilities and as many"},
		{"NaN", empirical([]float64{0, 1}, []float64{0, math.NaN()}), "host.spread.copy.excess_us[1]: NaN is a negative spread"},
		{"seconds as us", empirical([]float64{0, 1}, []float64{0, 2e7}), "host.spread.copy.excess_us[1]: 2e+07 us is above"},
		{"correlation above 1", ConstantSpread(), "host.spread.correlation: 1.5 is outside [0%, 100%]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Defaults()
			cfg.Host.Spread.Copy = tc.s
			if tc.name == "correlation above 1" {
				cfg.Host.Spread.Correlation = 1.5
			}
			err := cfg.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "datapath."+tc.want) {
				t.Fatalf("Validate() = %v, want it to contain %q", err, "datapath."+tc.want)
			}
		})
	}
}

// The inverse transform interpolates linearly between stored quantiles:
// the table (0, 0), (0.5, 2), (0.9, 4), (1, 14) gives 1 at u = 0.25, 3 at
// u = 0.7 and 9 at u = 0.95.
func TestSpreadInverseTransform(t *testing.T) {
	d := &spreadDraw{p: []float64{0, 0.5, 0.9, 1}, q: []float64{0, 2, 4, 14}}
	d.index()
	for _, tc := range []struct{ u, want float64 }{
		{0, 0}, {0.25, 1}, {0.5, 2}, {0.7, 3}, {0.9, 4}, {0.95, 9}, {1, 14}, {0.999, 13.9},
	} {
		if got := d.at(tc.u); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("at(%v) = %v, want %v", tc.u, got, tc.want)
		}
	}
	// The grid lookup agrees with a plain search on a table with many
	// fine tail points (the calibrated one: 1% steps, then 0.1%, 99.99%).
	var p, q []float64
	for i := range 100 {
		p, q = append(p, float64(i)/100), append(q, float64(i))
	}
	for i := 1; i <= 9; i++ {
		p, q = append(p, 0.99+float64(i)/1000), append(q, 100+float64(i))
	}
	p, q = append(p, 0.9999, 1), append(q, 200, 1000)
	d = &spreadDraw{p: p, q: q}
	d.index()
	for k := range 100000 {
		u := float64(k) / 100000
		j := 0
		for j+2 < len(p) && p[j+1] <= u {
			j++
		}
		want := q[j] + (u-p[j])/(p[j+1]-p[j])*(q[j+1]-q[j])
		if got := d.at(u); math.Abs(got-want) > 1e-9 {
			t.Fatalf("at(%v) = %v, want %v", u, got, want)
		}
	}
}

// loopbackConfig is one client alone on one unloaded core: every stage is
// its fixed cost plus its spread, nothing queues.
func loopbackConfig() Config {
	c := Defaults()
	c.Paths = []string{PathLoopback}
	c.Clients.Count, c.Clients.ThinkTime, c.Clients.Requests = 1, 0, 20000
	c.WarmupRequests = 0
	c.Request.Batch, c.Request.InputBytesPerItem, c.Request.OutputBytesPerItem = 1, 1000, 1000
	c.Request.ComputeTime = units.Duration(5 * engine.Microsecond)
	c.Host.Cores = 1
	return c
}

func stageTimes(t *testing.T, c Config, seed uint64, stage string) []float64 {
	t.Helper()
	res, err := Run(c, seed)
	if err != nil {
		t.Fatal(err)
	}
	p := res.Path(PathLoopback)
	k := slices.Index(p.StageOrder, stage)
	if k < 0 {
		t.Fatalf("no stage %q in %v", stage, p.StageOrder)
	}
	var xs []float64
	for _, r := range p.Records() {
		xs = append(xs, r.Stages[k])
	}
	slices.Sort(xs)
	return xs
}

// A stage with an empirical spread takes its fixed cost plus a draw from
// the table: with compute 5 us and the table (0, 0), (0.5, 2), (1, 10) us,
// the compute stage's quantiles are 5 + the table's (p25 6, p50 7, p75
// 11 us), within sampling error of 20,000 draws; the constant default
// keeps it at 5 us exactly.
func TestSpreadDrawsFromTable(t *testing.T) {
	c := loopbackConfig()
	if xs := stageTimes(t, c, 1, "compute"); xs[0] != 5 || xs[len(xs)-1] != 5 {
		t.Fatalf("constant compute stage spans %v..%v us, want 5 exactly", xs[0], xs[len(xs)-1])
	}
	c.Host.Spread.CPUWork = empirical([]float64{0, 0.5, 1}, []float64{0, 2, 10})
	xs := stageTimes(t, c, 1, "compute")
	q := func(p float64) float64 { return xs[int(p*float64(len(xs)-1))] }
	for _, tc := range []struct{ p, want float64 }{{0.25, 6}, {0.5, 7}, {0.75, 11}, {0.99, 14.84}} {
		// The sample quantile's standard error is sqrt(p(1-p)/n)/f(q): at
		// most 0.02 us here (density 0.25/us below 2 us, 0.0625/us above).
		if got := q(tc.p); math.Abs(got-tc.want) > 0.1 {
			t.Errorf("compute p%.0f = %.3f us, want %.2f", 100*tc.p, got, tc.want)
		}
	}
	if xs[0] < 5 || xs[len(xs)-1] > 15 {
		t.Errorf("compute spans %v..%v us, want within [5, 15]", xs[0], xs[len(xs)-1])
	}
}

// Each kind draws from its own stream: the same seed gives the same draws,
// and adding a spread to one kind leaves another kind's draws as they were.
func TestSpreadStreamsIndependent(t *testing.T) {
	c := loopbackConfig()
	c.Clients.Requests = 2000
	c.Host.Spread.CPUWork = empirical([]float64{0, 1}, []float64{0, 4})
	base := stageTimes(t, c, 7, "compute")
	if again := stageTimes(t, c, 7, "compute"); !slices.Equal(base, again) {
		t.Fatal("the same seed gave different compute times")
	}
	c.Host.Spread.Copy = empirical([]float64{0, 1}, []float64{0, 3})
	if with := stageTimes(t, c, 7, "compute"); !slices.Equal(base, with) {
		t.Error("adding a copy spread changed the compute stage's draws")
	}
	if other := stageTimes(t, c, 8, "compute"); slices.Equal(base, other) {
		t.Error("seeds 7 and 8 gave the same compute times")
	}
}

// The paper's paths take the spreads on their host work: with a CPU-work
// spread the host-rdma path's poll+decide stage spreads, and the
// conspirator path's SoC stage does not (the SoC's spread is not measured).
func TestSpreadOnPaperPaths(t *testing.T) {
	c := Defaults()
	c.Paths = []string{PathHostRDMA, PathConspirator}
	c.Clients.Requests = 300
	c.Host.Spread.CPUWork = empirical([]float64{0, 1}, []float64{0, 10})
	res, err := Run(c, 3)
	if err != nil {
		t.Fatal(err)
	}
	spans := func(path, stage string) (lo, hi float64) {
		p := res.Path(path)
		k := slices.Index(p.StageOrder, stage)
		lo, hi = math.Inf(1), math.Inf(-1)
		for _, r := range p.Records() {
			lo, hi = math.Min(lo, r.Stages[k]), math.Max(hi, r.Stages[k])
		}
		return lo, hi
	}
	if lo, hi := spans(PathHostRDMA, "poll+decide"); hi-lo < 5 {
		t.Errorf("host-rdma poll+decide spans %v..%v us with a 0-10 us spread", lo, hi)
	}
	if lo, hi := spans(PathConspirator, "soc-decide"); hi != lo {
		t.Errorf("conspirator soc-decide spans %v..%v us: the SoC took the host's spread", lo, hi)
	}
}

// The copula couples one request's draws: at correlation 100% the copy
// and compute stages (the same table) draw the same excess in every
// request; at 0% they agree in none; at 50% the rank correlation of the
// two lies between (the Gaussian copula's Spearman rho at 0.5 is
// 6/pi asin(0.25) = 0.483).
func TestSpreadCorrelation(t *testing.T) {
	table := empirical([]float64{0, 0.5, 1}, []float64{0, 2, 10})
	pairs := func(rho float64) (cp, comp []float64) {
		c := loopbackConfig()
		c.Clients.Requests = 4000
		c.Request.InputBytesPerItem = 1 // copy is its excess (and 1 B at the memcpy rate)
		c.Request.ComputeTime = 0
		c.Host.Spread.Copy, c.Host.Spread.CPUWork, c.Host.Spread.Correlation = table, table, units.Fraction(rho)
		res, err := Run(c, 5)
		if err != nil {
			t.Fatal(err)
		}
		p := res.Path(PathLoopback)
		kc, kp := slices.Index(p.StageOrder, "copy"), slices.Index(p.StageOrder, "compute")
		for _, r := range p.Records() {
			cp, comp = append(cp, r.Stages[kc]), append(comp, r.Stages[kp])
		}
		return cp, comp
	}
	same := func(a, b []float64) (n int) {
		for i := range a {
			if math.Abs(a[i]-b[i]) < 0.001 {
				n++
			}
		}
		return n
	}
	if a, b := pairs(1); same(a, b) != len(a) {
		t.Errorf("correlation 100%%: %d of %d requests drew the same copy and compute excess", same(a, b), len(a))
	}
	if a, b := pairs(0); same(a, b) > 10 {
		t.Errorf("correlation 0%%: %d of %d requests drew the same excess", same(a, b), len(a))
	}
	a, b := pairs(0.5)
	if r := spearman(a, b); math.Abs(r-0.483) > 0.05 {
		t.Errorf("correlation 50%%: Spearman %.3f, want 0.483 +- 0.05 (4000 requests: standard error about 0.012)", r)
	}
}

func spearman(a, b []float64) float64 {
	rank := func(xs []float64) []float64 {
		idx := make([]int, len(xs))
		for i := range idx {
			idx[i] = i
		}
		slices.SortFunc(idx, func(i, j int) int { return cmpFloat(xs[i], xs[j]) })
		r := make([]float64, len(xs))
		for k, i := range idx {
			r[i] = float64(k)
		}
		return r
	}
	ra, rb := rank(a), rank(b)
	n := float64(len(a))
	var d2 float64
	for i := range ra {
		d2 += (ra[i] - rb[i]) * (ra[i] - rb[i])
	}
	return 1 - 6*d2/(n*(n*n-1))
}

func cmpFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
