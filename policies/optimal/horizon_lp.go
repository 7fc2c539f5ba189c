package optimal

import (
	"fmt"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"

	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// lpSlack scales the LP optimum down before it is reported as a bound, so
// that the simplex's floating-point error never lifts it above the true
// optimum of the relaxation (its tolerance is far below this).
const lpSlack = 1e-9

// anyStartBound is the bound over schedules in which a job may wait and be
// preempted: only how much GPU time each shape needs counts, not when
// (configLP with each option's speed as its rate and no limit on GPUs).
func anyStartBound(w *snapshot.Window, shapes []shape, spans []presence) (snapshot.Bound, error) {
	b := snapshot.Bound{Starts: StartsAny}
	if len(spans) == 0 {
		return b, nil
	}
	items := make([]lpItem, len(shapes)) // by class (tenants relaxed)
	for _, sh := range shapes {
		it := &items[sh.class]
		if it.options == nil {
			it.options = sh.options
			for _, o := range sh.options {
				it.rate = append(it.rate, o.Speed)
			}
		}
	}
	for _, sp := range spans {
		items[shapes[sp.shape].class].need += (sp.end - sp.start).Seconds() / 3600 * shapes[sp.shape].speed
	}
	opt, err := configLP(w.GPUs, items, false)
	if err != nil {
		return b, fmt.Errorf("optimal-horizon (starts=any): the linear program: %w", err)
	}
	b.GPUHours = opt * (1 - lpSlack)
	b.Upper = opt
	b.Solves = snapshot.SolveStats{Total: 1, Proven: 1}
	return b, nil
}

// lpItem is one class of demand in configLP: need units, met at rate[o]
// units per hour (or per GPU, in one instant) of options[o].
type lpItem struct {
	need    float64
	options []snapshot.Option
	rate    []float64
}

// configLP is the configuration LP (fractional bin packing, Gilmore and
// Gomory) over the models of gpus: y_io >= 0 of item i on option o meet
// sum_o rate_io y_io >= need_i; z_mc >= 0 GPUs of MIG model m in maximal
// layout c supply n_cp instances of each profile p; a GPU of a non-MIG
// model supplies one GPU of fractions (tenants relaxed). It returns the
// least sum of z. With capacity, model m has at most as many GPUs as gpus
// lists (one instant); without, any number (GPU-hours over time).
func configLP(gpus []snapshot.GPU, items []lpItem, capacity bool) (float64, error) {
	var models []*snapshot.GPUModel
	var count []float64
	for g := range gpus {
		m := &gpus[g].Model
		k := slices.IndexFunc(models, func(o *snapshot.GPUModel) bool { return o.Name == m.Name })
		if k < 0 {
			k = len(models)
			models, count = append(models, m), append(count, 0)
		}
		count[k]++
	}
	type resource struct {
		model   int
		profile string // "" on a non-MIG model
	}
	type use struct {
		item, res int
		rate, per float64 // need met per unit; resource used per unit
	}
	var res []resource
	resIdx := func(r resource) int {
		if k := slices.Index(res, r); k >= 0 {
			return k
		}
		res = append(res, r)
		return len(res) - 1
	}
	var ys []use
	var rows []int // item per need row
	for i, it := range items {
		if it.need <= 0 {
			continue
		}
		n := len(ys)
		for t, o := range it.options {
			for mi, m := range models {
				if !o.Fits(m) || !(it.rate[t] > 0) {
					continue
				}
				if m.IsMIG() {
					ys = append(ys, use{i, resIdx(resource{mi, o.Profile}), it.rate[t], 1})
				} else {
					ys = append(ys, use{i, resIdx(resource{mi, ""}), it.rate[t], o.Fraction})
				}
			}
		}
		if len(ys) == n {
			return 0, fmt.Errorf("item %d fits no GPU", i)
		}
		rows = append(rows, i)
	}
	if len(rows) == 0 {
		return 0, nil
	}
	// Configurations: per MIG model its maximal layouts counted over the
	// profiles in demand (distinct count vectors only); a non-MIG model one.
	type config struct {
		model  int
		counts map[int]float64 // resource -> instances
	}
	var zs []config
	for mi, m := range models {
		if !m.IsMIG() {
			if k := slices.Index(res, resource{mi, ""}); k >= 0 {
				zs = append(zs, config{mi, map[int]float64{k: 1}})
			}
			continue
		}
		seen := map[string]bool{}
		for _, l := range m.MIG.Layouts(true) {
			c := config{mi, map[int]float64{}}
			for _, in := range l {
				if k := slices.Index(res, resource{mi, in.Profile}); k >= 0 {
					c.counts[k]++
				}
			}
			if len(c.counts) == 0 {
				continue
			}
			key := fmt.Sprint(c.counts) // maps print in key order
			if !seen[key] {
				seen[key] = true
				zs = append(zs, c)
			}
		}
	}
	// Standard form: columns y, z, then one slack per row; rows needs
	// (met - slack = need), resources (supply - use - slack = 0) and,
	// with capacity, models with configurations (GPUs + slack = count).
	// Every row has its own slack, so A has full row rank.
	var capRows []int // model per capacity row
	if capacity {
		for mi := range models {
			if slices.ContainsFunc(zs, func(c config) bool { return c.model == mi }) {
				capRows = append(capRows, mi)
			}
		}
	}
	nr := len(rows) + len(res) + len(capRows)
	nc := len(ys) + len(zs) + nr
	A := mat.NewDense(nr, nc, nil)
	rhs := make([]float64, nr)
	c := make([]float64, nc)
	for k, u := range ys {
		A.Set(slices.Index(rows, u.item), k, u.rate)
		A.Set(len(rows)+u.res, k, -u.per)
	}
	for k, z := range zs {
		c[len(ys)+k] = 1
		for r, n := range z.counts {
			A.Set(len(rows)+r, len(ys)+k, n)
		}
		if r := slices.Index(capRows, z.model); r >= 0 {
			A.Set(len(rows)+len(res)+r, len(ys)+k, 1)
		}
	}
	for r := range nr {
		sign := -1.0
		if r >= len(rows)+len(res) {
			sign = 1 // capacity: GPUs + slack = count
		}
		A.Set(r, len(ys)+len(zs)+r, sign)
	}
	for r, i := range rows {
		rhs[r] = items[i].need
	}
	for r, mi := range capRows {
		rhs[len(rows)+len(res)+r] = count[mi]
	}
	return simplex(c, A, rhs)
}

// simplex runs gonum's simplex, turning its panics (documented for
// malformed input) into errors.
func simplex(c []float64, A *mat.Dense, b []float64) (opt float64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("simplex: %v", r)
		}
	}()
	opt, _, err = lp.Simplex(c, A, b, 1e-12, nil)
	return opt, err
}
