package calib

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw"
	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/realhw"
	"github.com/conspirator-sim/conspirator/sim/datapath"
	"gonum.org/v1/gonum/stat"
)

// CUDAStageError is the model's error on one GPU-side stage at one size
// of the held-out runs.
type CUDAStageError struct {
	Stage     string  `json:"stage"`
	Bytes     int64   `json:"bytes"`
	Samples   int     `json:"samples"`
	RealP50US float64 `json:"real_p50_us"`
	RealP99US float64 `json:"real_p99_us"`
	ModelUS   float64 `json:"model_us"` // the model's stage time (deterministic)
	P50Error  float64 `json:"p50_error"`
	P99Error  float64 `json:"p99_error"`
	Met       bool    `json:"met"` // |p50 error| <= P50Target
}

// CUDAValidation is validation.json of calibrate --backend cuda --validate
// (and of a validation against separate runs imported from a file): the
// data-path model's GPU-side stage times with the profile's values,
// against real runs the fit never saw.
type CUDAValidation struct {
	Model     string            `json:"model"`
	Values    map[string]string `json:"values"` // the scenario values the model used
	FitSizes  []int64           `json:"fit_sizes"`
	Held      string            `json:"held_out"` // what the real runs are
	Stages    []CUDAStageError  `json:"stages"`
	P50Target float64           `json:"p50_target"`
	Missed    int               `json:"missed"`
}

// cudaModelNote says how the model prices each stage.
const cudaModelNote = "sim/datapath's host-side GPU costs (hw.HostCosts.CopyWork toward the GPU, CopyBackWork back): a pinned copy memcpy_issue + bytes / pinned_h2d either way, a pageable H2D one memcpy_issue + bytes / (pinned_h2d x pageable_factor), a pageable D2H one memcpy_issue + bytes / (pinned_h2d x pageable_d2h_factor, which is pageable_factor where the profile proposes none); a launch with synchronize kernel_launch + sync_wait"

// ValidateCUDA compares the data-path model, with the GPU-side values p
// proposes, against held-out real samples (copies timed one by one, or
// means of separate runs; launches with synchronize): per stage and size,
// the p50 and p99 of the real times against the model's time. held says
// what the samples are, for the report.
func ValidateCUDA(p *Profile, fitSizes []int64, heldOut []realhw.Sample, held string) (*CUDAValidation, error) {
	model, vals, err := cudaModel(p)
	if err != nil {
		return nil, err
	}
	type key struct {
		stage string
		n     int64
	}
	by := map[key][]float64{}
	for _, s := range heldOut {
		if _, ok := model(s.Stage, s.Bytes); ok && s.Validate() == nil && s.Latency > 0 {
			k := key{s.Stage, s.Bytes}
			by[k] = append(by[k], s.Latency.Seconds()*1e6)
		}
	}
	if len(by) == 0 {
		return nil, fmt.Errorf("no held-out copy or launch samples to validate against")
	}
	keys := make([]key, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].stage != keys[j].stage {
			return keys[i].stage < keys[j].stage
		}
		return keys[i].n < keys[j].n
	})
	v := &CUDAValidation{Model: cudaModelNote, Values: vals, FitSizes: slices.Clone(fitSizes), Held: held, P50Target: P50Target}
	for _, k := range keys {
		ts := by[k]
		slices.Sort(ts)
		m, _ := model(k.stage, k.n)
		mus := m.Seconds() * 1e6
		e := CUDAStageError{Stage: k.stage, Bytes: k.n, Samples: len(ts),
			RealP50US: round(stat.Quantile(0.5, stat.Empirical, ts, nil), 6), RealP99US: round(stat.Quantile(0.99, stat.Empirical, ts, nil), 6), ModelUS: round(mus, 6)}
		e.P50Error = round((mus-e.RealP50US)/e.RealP50US, 4)
		e.P99Error = round((mus-e.RealP99US)/e.RealP99US, 4)
		e.Met = math.Abs(e.P50Error) <= P50Target
		if !e.Met {
			v.Missed++
		}
		v.Stages = append(v.Stages, e)
	}
	return v, nil
}

// HeldOutSizes are the sizes between each pair of fit sizes (their
// geometric means, rounded to 4 bytes): sizes the fit never saw.
func HeldOutSizes(fit []int64) []int64 {
	var out []int64
	for i := 1; i < len(fit); i++ {
		g := int64(math.Sqrt(float64(fit[i-1])*float64(fit[i]))) &^ 3
		if g > fit[i-1] && g < fit[i] {
			out = append(out, g)
		}
	}
	return out
}

// cudaModel is the data-path model's time of a GPU-side stage at n bytes
// with the values p proposes (ok false for a stage it does not price), and
// those values as the profile writes them.
func cudaModel(p *Profile) (model func(stage string, n int64) (engine.Time, bool), vals map[string]string, err error) {
	get := func(key string) (string, error) {
		v, ok := p.Scenario[key]
		if !ok {
			return "", fmt.Errorf("the profile proposes no %s (its cuda fits were not applied); validation needs it", key)
		}
		return fmt.Sprint(v), nil
	}
	vals = map[string]string{}
	for _, k := range []string{"datapath.host.pinned_h2d", "datapath.host.memcpy_issue", "datapath.host.pageable_factor", "datapath.host.kernel_launch", "datapath.host.sync_wait"} {
		v, err := get(k)
		if err != nil {
			return nil, nil, err
		}
		vals[k] = v
	}
	// A profile without the D2H factor (one written before it was fitted)
	// leaves the key unset, and a scenario takes the key the data-path
	// config says it defaults to.
	const d2h = "datapath.host.pageable_d2h_factor"
	if v, ok := p.Scenario[d2h]; ok {
		vals[d2h] = fmt.Sprint(v)
	} else {
		from, _ := datapath.DefaultFrom(strings.TrimPrefix(d2h, "datapath."))
		vals[d2h] = vals["datapath."+from]
	}
	bw, err := units.ParseBandwidth(vals["datapath.host.pinned_h2d"])
	if err != nil {
		return nil, nil, err
	}
	issue, err := units.ParseDuration(vals["datapath.host.memcpy_issue"])
	if err != nil {
		return nil, nil, err
	}
	factor, err := units.ParseRatio(vals["datapath.host.pageable_factor"])
	if err != nil {
		return nil, nil, err
	}
	back, err := units.ParseRatio(vals[d2h])
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", d2h, err)
	}
	launch, err := units.ParseDuration(vals["datapath.host.kernel_launch"])
	if err != nil {
		return nil, nil, err
	}
	wait, err := units.ParseDuration(vals["datapath.host.sync_wait"])
	if err != nil {
		return nil, nil, err
	}
	costs := hw.HostCosts{MemcpyIssue: issue.Time(), PageableFactor: float64(factor), PageableD2HFactor: float64(back)}
	rate := bw.BytesPerSecond()
	return func(stage string, n int64) (engine.Time, bool) {
		var cpu, dma engine.Time
		switch stage {
		case "cuda-h2d-pinned", "cuda-h2d-pageable":
			cpu, dma = costs.CopyWork(float64(n), rate, stage == "cuda-h2d-pageable")
		case "cuda-d2h-pinned", "cuda-d2h-pageable":
			cpu, dma = costs.CopyBackWork(float64(n), rate, stage == "cuda-d2h-pageable")
		case "cuda-launch":
			return launch.Time() + wait.Time(), true
		default:
			return 0, false
		}
		return cpu + dma, true
	}, vals, nil
}
