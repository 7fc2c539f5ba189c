package optimal

import (
	"math"
	"time"

	"github.com/crillab/gophersat/solver"
)

// satSlot serialises every gophersat Solve in the process: gophersat v1.4.0
// keeps the literal buffer of conflict analysis in a package-level variable
// (bufLits, solver/learn.go:39), so two solvers running at once, even on
// different problems, corrupt each other (seen as an index-out-of-range
// panic in learnClause). Parallel simulation runs therefore take turns here.
var satSlot = make(chan struct{}, 1)

func lit(v int, neg bool) int {
	if neg {
		return -(v + 1)
	}
	return v + 1
}

// solveGophersat solves p with gophersat. Where the assembly has set
// StartWorker, the search runs in a worker process that is killed when
// the limit cuts it (worker.go), so a cut solve costs nothing after its
// limit; otherwise it runs here, see solveInProcess.
func solveGophersat(p *program, limit time.Duration) (outcome, error) {
	if StartWorker != nil && limit > 0 {
		return solveInWorker(p, limit)
	}
	return solveInProcess(p, limit)
}

// solveInProcess runs gophersat's linear search from above itself (rather
// than solver.Optimal, which has no way to stop) so that it can stop early
// when an incumbent meets the counting bound, and between SAT calls when
// the time limit is reached. One SAT call cannot be interrupted: at the
// limit it is abandoned and finishes in the background (CPU is used until
// it ends; its result is dropped) and holds satSlot until then, so the next
// gophersat solve in the process may wait for it.
func solveInProcess(p *program, limit time.Duration) (outcome, error) {
	var deadline time.Time
	if limit > 0 {
		deadline = time.Now().Add(limit)
	}
	call := func(s *solver.Solver) (solver.Status, bool) {
		if limit == 0 {
			satSlot <- struct{}{}
			defer func() { <-satSlot }()
			return s.Solve(), true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return solver.Indet, false
		}
		timer := time.NewTimer(left)
		defer timer.Stop()
		select {
		case satSlot <- struct{}{}:
		case <-timer.C:
			return solver.Indet, false
		}
		ch := make(chan solver.Status, 1)
		go func() {
			defer func() { <-satSlot }()
			ch <- s.Solve()
		}()
		select {
		case st := <-ch:
			return st, true
		case <-timer.C:
			return solver.Indet, false
		}
	}
	return search(p, call, nil), nil
}

// search is the linear search from above: start from the greedy
// incumbent, ask the SAT solver (through call) for a strictly cheaper
// model until there is none (proven optimal), one meets the counting
// bound, or call gives up (time is up: the best so far, unproven).
// improved, when not nil, is told of every cheaper model as it is found.
func search(p *program, call func(*solver.Solver) (solver.Status, bool), improved func(x []bool)) outcome {
	out := outcome{bound: math.MinInt64}
	var constrs []solver.PBConstr
	for _, c := range p.cons {
		lits := make([]int, len(c.terms))
		ws := make([]int, len(c.terms))
		for k, t := range c.terms {
			lits[k], ws[k] = t.v+1, int(t.coef)
		}
		switch c.sense {
		case le:
			constrs = append(constrs, solver.LtEq(lits, ws, int(c.rhs)))
		case ge:
			constrs = append(constrs, solver.GtEq(lits, ws, int(c.rhs)))
		case eq:
			constrs = append(constrs, solver.Eq(lits, ws, int(c.rhs))...)
		}
	}
	pb := solver.ParsePBConstrs(constrs)
	if pb.Status == solver.Unsat {
		out.infeas = true
		return out
	}
	costLits := make([]solver.Lit, len(p.cost))
	costWs := make([]int, len(p.cost))
	negLits := make([]solver.Lit, len(p.cost))
	var total int64
	for k, t := range p.cost {
		costLits[k] = solver.IntToLit(int32(lit(t.v, t.neg)))
		negLits[k] = costLits[k].Negation()
		costWs[k] = int(t.w)
		total += t.w
	}
	pb.SetCostFunc(costLits, costWs)
	s := solver.New(pb)
	// Next model must cost at most cost-1: sum w*[cost lit] <= cost-1-constant,
	// i.e. sum w*[negated lit] >= total - (cost-1-constant).
	bound := func(cost int64) {
		need := total - (cost - 1 - p.constant)
		ls := append([]solver.Lit(nil), negLits...)
		ws := append([]int(nil), costWs...)
		s.AppendClause(solver.NewPBClause(ls, ws, int(need)))
	}
	if p.incumbent != nil {
		out.x = p.incumbent
		if p.value(out.x) <= p.bound {
			out.optimal = true
			return out
		}
		bound(p.value(out.x))
	}
	for {
		st, done := call(s)
		if !done {
			return out // time is up: best so far, not proven
		}
		if st == solver.Unsat {
			if out.x == nil {
				out.infeas = true
			} else {
				out.optimal = true
			}
			return out
		}
		out.x = s.Model()
		out.improved++
		if improved != nil {
			improved(out.x)
		}
		cost := p.value(out.x)
		if cost <= p.bound {
			out.optimal = true
			return out
		}
		bound(cost)
	}
}
