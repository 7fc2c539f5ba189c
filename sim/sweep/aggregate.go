package sweep

import (
	"encoding/json"
	"math"
	"sort"

	"github.com/conspirator-sim/conspirator/engine/stats"
)

// Sample is one point's scalar metrics (e.g. "conspirator/latency_us.mean").
type Sample struct {
	Point   Point
	Metrics map[string]float64
}

// Estimate is a metric's mean across seeds with the half-width of its
// confidence interval (Student's t, n-1 degrees of freedom). HalfWidth is
// NaN (null in JSON) with fewer than two seeds: one run says nothing about
// its own spread.
type Estimate struct {
	Mean      float64
	HalfWidth float64
	N         int // seeds that gave a finite value
}

// MarshalJSON writes NaN and infinities as null, which JSON can hold.
func (e Estimate) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Mean      *float64 `json:"mean"`
		HalfWidth *float64 `json:"half_width"`
		N         int      `json:"n"`
	}{finite(e.Mean), finite(e.HalfWidth), e.N})
}

// UnmarshalJSON reads null as NaN.
func (e *Estimate) UnmarshalJSON(b []byte) error {
	var v struct {
		Mean      *float64 `json:"mean"`
		HalfWidth *float64 `json:"half_width"`
		N         int      `json:"n"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*e = Estimate{Mean: orNaN(v.Mean), HalfWidth: orNaN(v.HalfWidth), N: v.N}
	return nil
}

func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// Group is one parameter combination: its seeds and each metric's estimate.
type Group struct {
	Params  []KV                `json:"params"`
	Seeds   []uint64            `json:"seeds"`
	Metrics map[string]Estimate `json:"metrics"`
}

// Aggregate groups samples by parameter combination (in point-index order)
// and estimates every metric across the group's seeds at the given
// confidence level (0.95 for 95%). NaN and infinite values (an unstable
// path has no finite mean latency) are left out and not counted in N.
func Aggregate(samples []Sample, level float64) []Group {
	ss := append([]Sample(nil), samples...)
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].Point.Index < ss[j].Point.Index })
	var groups []Group
	values := []map[string][]float64{}
	at := map[string]int{}
	for _, s := range ss {
		key := paramsHash(s.Point.Params) + fmtKVs(s.Point.Params)
		g, ok := at[key]
		if !ok {
			g = len(groups)
			at[key] = g
			groups = append(groups, Group{Params: s.Point.Params, Metrics: map[string]Estimate{}})
			values = append(values, map[string][]float64{})
		}
		groups[g].Seeds = append(groups[g].Seeds, s.Point.Seed)
		for name, v := range s.Metrics {
			if _, seen := values[g][name]; !seen {
				values[g][name] = nil
			}
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				values[g][name] = append(values[g][name], v)
			}
		}
	}
	for g := range groups {
		for name, vs := range values[g] {
			mean, hw := stats.MeanCI(vs, level)
			groups[g].Metrics[name] = Estimate{Mean: mean, HalfWidth: hw, N: len(vs)}
		}
	}
	return groups
}

func fmtKVs(kvs []KV) string {
	b, _ := json.Marshal(kvs)
	return string(b)
}
