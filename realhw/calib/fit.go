package calib

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/conspirator-sim/conspirator/realhw"
	"gonum.org/v1/gonum/stat"
)

// Fit quality thresholds: a stage fit with fewer distinct sizes, or whose
// line misses a size's median by more than MaxRelResidual of it, is
// reported but not applied. The test is relative, as the fit is: a line
// through a 2 B to 8 MiB sweep is judged at 2 B as much as at 8 MiB.
const (
	MinSizes       = 3
	MaxRelResidual = 0.25
)

// LinearFit is latency = Fixed + bytes * PerByte for one stage, fitted by
// weighted least squares (gonum stat.LinearRegression) on the median
// latency of each distinct size, each weighted by 1/median^2: the fit
// minimises relative, not absolute, errors. An unweighted fit over a
// perftest -a sweep (2 B to 8 MiB) is all about the largest sizes, whose
// microseconds of noise outweigh the whole small-message latency, and can
// put the fixed cost below zero; relative weights let the small sizes fix
// the latency and the large ones the bandwidth. Fitting medians, not every
// sample, keeps a few scheduler-delayed samples from dragging the line;
// the spread around the median is what the residual distributions carry.
type LinearFit struct {
	Stage     string
	Fixed     float64   // seconds
	PerByte   float64   // seconds per byte (1/bandwidth)
	RSquared  float64   // of the per-size medians, weighted as the fit (reported, not a gate)
	Sizes     []int64   // distinct sizes, ascending
	Medians   []float64 // median latency per size, seconds
	Residuals []float64 // median - fit per size, seconds
	Samples   int
	Applied   bool
	Reason    string // why not applied; empty when applied
	// Method is "weighted" (the line through every size) or "two-regime"
	// (see twoRegime); Note says what a two-regime fit leaves out.
	Method string
	Note   string
}

// Fit methods.
const (
	MethodWeighted  = "weighted"
	MethodTwoRegime = "two-regime"
)

// Bounds of the two regimes of a wide sweep: the fixed latency from the
// sizes up to smallRegime bytes (a cache line, below every ConnectX's
// inline limit of 220-236 B, past which a DMA read of the payload adds a
// step), the bandwidth from those from largeRegime on; a sweep is wide
// when its largest size is wideSweep times its smallest (perftest -a: 2 B
// to 8 MiB).
const (
	smallRegime = 64
	largeRegime = 64 << 10
	wideSweep   = 4096
)

// regimes are the bounds of a two-regime fit: the fixed cost from the
// sizes up to small bytes, the bandwidth from large on, for a sweep whose
// largest size is at least wide times its smallest; between says what
// the sizes in between have that the line does not.
type regimes struct {
	small, large, wide int64
	between            string
	// netOfBytes takes the fixed cost as the small sizes' median less
	// their bytes at the fitted rate (a copy of 1 KiB is mostly bytes),
	// and at least 0; a NIC's small messages are all fixed cost.
	netOfBytes bool
}

// regimesOf gives a stage its regimes. A host copy (memcpy, the TCP
// path's copy into its buffer) has two of its own: sizes that stay in the
// core's L1/L2 cache copy at cache speed, larger ones at memory speed, so
// that on the 16-core GPU machine one line through 1, 16, 64 and 256 KiB
// missed the 16 KiB median by 42% and the copy fits were refused (and the
// model fell back to the catalog's rate). The fixed cost comes from the
// sizes up to 4 KiB (one page, in L1 everywhere), the rate from 64 KiB on
// (past the L1 of every x86 and Arm core, where a copy streams); the sweep
// need only span 64x (calibrate's 1 to 256 KiB). Every other stage takes
// the NIC's regimes (perftest -a).
func regimesOf(stage string) regimes {
	switch stage {
	case "host-memcpy", "tcp-copy":
		return regimes{small: 4 << 10, large: 64 << 10, wide: 64, netOfBytes: true,
			between: "sizes the core's caches hold copy faster than the memory-speed rate; the model carries one rate"}
	}
	return regimes{small: smallRegime, large: largeRegime, wide: wideSweep, between: "per-message NIC steps the model does not carry"}
}

// Bandwidth is 1/PerByte in bytes per second (+Inf when PerByte <= 0).
func (f LinearFit) Bandwidth() float64 {
	if f.PerByte <= 0 {
		return math.Inf(1)
	}
	return 1 / f.PerByte
}

// Predict returns the fitted latency in seconds for n bytes.
func (f LinearFit) Predict(n int64) float64 { return f.Fixed + f.PerByte*float64(n) }

// FitLinear fits one stage's samples (all must share the stage; their
// background load is ignored: pass unloaded samples). It flags, and does
// not apply, a fit with fewer than MinSizes sizes, an R-squared below
// MaxRelResidual, a negative fixed cost or a non-positive per-byte cost.
func FitLinear(stage string, samples []realhw.Sample) LinearFit {
	f := LinearFit{Stage: stage, Samples: len(samples)}
	by := map[int64][]float64{}
	for _, s := range samples {
		by[s.Bytes] = append(by[s.Bytes], s.Latency.Seconds())
	}
	for n := range by {
		f.Sizes = append(f.Sizes, n)
	}
	slices.Sort(f.Sizes)
	x := make([]float64, len(f.Sizes))
	for i, n := range f.Sizes {
		x[i] = float64(n)
		f.Medians = append(f.Medians, median(by[n]))
	}
	switch len(f.Sizes) {
	case 0:
		f.Reason = "no samples"
		return f
	case 1:
		// One size fixes no slope; report its median as the fixed cost.
		f.Fixed = f.Medians[0]
		f.Residuals = []float64{0}
		f.Reason = fmt.Sprintf("too few points: 1 size, need at least %d", MinSizes)
		return f
	}
	w := make([]float64, len(f.Medians))
	for i, m := range f.Medians {
		if m > 0 {
			w[i] = 1 / (m * m)
		}
	}
	f.Method = MethodWeighted
	f.Fixed, f.PerByte = stat.LinearRegression(x, f.Medians, w, false)
	f.RSquared = stat.RSquared(x, f.Medians, w, f.Fixed, f.PerByte)
	worst, at := f.residuals(nil)
	if (worst > MaxRelResidual || f.Fixed < 0) && f.twoRegime() {
		// Judged on the sizes it claims: the small and the large ones.
		rg := regimesOf(f.Stage)
		worst, at = f.residuals(func(n int64) bool { return n <= rg.small || n >= rg.large })
		f.RSquared = stat.RSquared(x, f.Medians, w, f.Fixed, f.PerByte)
	}
	switch {
	case len(f.Sizes) < MinSizes:
		f.Reason = fmt.Sprintf("too few points: %d sizes, need at least %d", len(f.Sizes), MinSizes)
	case f.PerByte <= 0:
		f.Reason = fmt.Sprintf("latency does not grow with size (slope %.3g s/B): no bandwidth to fit", f.PerByte)
	case math.IsNaN(worst) || worst > MaxRelResidual:
		f.Reason = fmt.Sprintf("poor fit: the line misses the %d B median (%.3g s) by %.0f%%, more than %.0f%% (R-squared %.3f)",
			f.Sizes[at], f.Medians[at], 100*worst, 100*MaxRelResidual, f.RSquared)
	case f.Fixed < 0:
		f.Reason = fmt.Sprintf("negative fixed cost %.3g s: the latencies do not lie on one line in the message size (the smallest, %d B, takes %.3g s)", f.Fixed, f.Sizes[0], f.Medians[0])
	default:
		f.Applied = true
	}
	return f
}

// residuals fills f.Residuals and returns the worst relative miss and its
// index over the sizes judge accepts (all when nil).
func (f *LinearFit) residuals(judge func(n int64) bool) (worst float64, at int) {
	f.Residuals = f.Residuals[:0]
	for i, n := range f.Sizes {
		f.Residuals = append(f.Residuals, f.Medians[i]-f.Predict(n))
	}
	for i, r := range f.Residuals {
		if judge != nil && !judge(f.Sizes[i]) {
			continue
		}
		if rel := math.Abs(r) / f.Medians[i]; rel > worst || math.IsNaN(rel) {
			worst, at = rel, i
		}
	}
	return worst, at
}

// twoRegime refits a wide sweep (perftest -a, 2 B to 8 MiB) whose one
// line misses some size by more than MaxRelResidual: latency is a fixed
// cost plus bytes over a bandwidth only at the two ends. Between them a
// real NIC adds per-message steps (the inline limit, a DMA read of the
// payload, one more MTU per packet) that no line through both ends
// follows: a ConnectX-3 sweep takes 0.98 us at 2 B, 3.18 us at 2 KiB and
// 2302 us at 8 MiB, and the weighted line misses 2 KiB by 45%. The model
// needs the two ends (a small notification, a 2.4 MB request), so the
// fixed cost is the median latency of the sizes up to smallRegime bytes
// and the bandwidth the slope over the sizes from largeRegime on, fitted
// through that fixed cost with relative weights. It reports false, and
// leaves f alone, when the sweep is not wide or a regime has too few
// sizes.
func (f *LinearFit) twoRegime() bool {
	rg := regimesOf(f.Stage)
	smallRegime, largeRegime, wideSweep := rg.small, rg.large, rg.wide
	if len(f.Sizes) < MinSizes || f.Sizes[len(f.Sizes)-1] < wideSweep*max(f.Sizes[0], 1) {
		return false
	}
	var small []float64
	var num, den float64
	large := 0
	for i, n := range f.Sizes {
		m := f.Medians[i]
		if n <= smallRegime {
			small = append(small, m)
		}
		if n >= largeRegime && m > 0 {
			large++
		}
	}
	if len(small) == 0 || large < 2 {
		return false
	}
	fixed := median(small)
	slope := func(fixed float64) float64 {
		num, den = 0, 0
		for i, n := range f.Sizes {
			if m := f.Medians[i]; n >= largeRegime && m > 0 {
				// Minimise sum ((m - fixed - b n) / m)^2 over b.
				x := float64(n) / m
				num += x * (m - fixed) / m
				den += x * x
			}
		}
		return num / den
	}
	b := slope(fixed)
	if rg.netOfBytes {
		// Fixed cost and rate depend on each other: iterate to the fixed
		// point (each round shrinks the change by the small sizes' share of
		// the large ones' time, a quarter or less: 100 rounds is far past
		// float precision).
		for range 100 {
			var net []float64
			for i, n := range f.Sizes {
				if n <= smallRegime {
					net = append(net, f.Medians[i]-b*float64(n))
				}
			}
			fixed = math.Max(0, median(net))
			b = slope(fixed)
		}
	}
	if !(den > 0) || !(b > 0) {
		return false
	}
	f.Fixed, f.PerByte, f.Method = fixed, b, MethodTwoRegime
	// The worst miss in between, for the note.
	worst, at := 0.0, -1
	for i, n := range f.Sizes {
		if n > smallRegime && n < largeRegime {
			if rel := math.Abs(f.Medians[i]-f.Predict(n)) / f.Medians[i]; rel > worst {
				worst, at = rel, i
			}
		}
	}
	net := ""
	if rg.netOfBytes {
		net = " less their bytes at that bandwidth"
	}
	f.Note = fmt.Sprintf("two-regime fit of a %d B to %d B sweep: fixed cost the median of the sizes up to %d B%s, bandwidth from the sizes from %d B on", f.Sizes[0], f.Sizes[len(f.Sizes)-1], smallRegime, net, largeRegime)
	if at >= 0 {
		f.Note += fmt.Sprintf("; between them the line misses the %d B median by %.0f%% (%s)", f.Sizes[at], 100*worst, rg.between)
	}
	return true
}

// median of xs (sorts a copy); NaN when empty.
func median(xs []float64) float64 { return quantile(xs, 0.5) }

// quantile returns the p-quantile of xs with linear interpolation between
// order statistics (Hyndman-Fan type 7, R's default); NaN when empty. Not
// gonum's stat.Quantile: its LinInterp is type 4 (it interpolates the
// empirical CDF, so the median of 1..4 is 2, not 2.5), and the stored
// calibration quantiles are type 7.
func quantile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return sortedQuantile(s, p)
}

func sortedQuantile(s []float64, p float64) float64 {
	if len(s) == 1 {
		return s[0]
	}
	h := p * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

// groupByStage splits samples by stage, stages sorted by name.
func groupByStage(samples []realhw.Sample) ([]string, map[string][]realhw.Sample) {
	by := map[string][]realhw.Sample{}
	for _, s := range samples {
		by[s.Stage] = append(by[s.Stage], s)
	}
	names := make([]string, 0, len(by))
	for k := range by {
		names = append(names, k)
	}
	slices.SortFunc(names, cmp.Compare)
	return names, by
}
