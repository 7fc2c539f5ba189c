//go:build cbc

package optimal

// #cgo pkg-config: cbc
// #include <stdlib.h>
// #include <coin/Cbc_C_Interface.h>
import "C"

import (
	"math"
	"time"
	"unsafe"
)

const cbcHint = ""

func init() { backends["cbc"] = solveCBC }

// solveCBC hands the same 0-1 program to COIN-OR CBC (branch and cut on the
// LP relaxation). CBC honours the time limit itself and reports its best
// bound, which gives the gap when the limit stops it.
func solveCBC(p *program, limit time.Duration) (outcome, error) {
	out := outcome{bound: math.MinInt64}
	m := C.Cbc_newModel()
	defer C.Cbc_deleteModel(m)
	C.Cbc_setLogLevel(m, 0)
	if limit > 0 {
		C.Cbc_setMaximumSeconds(m, C.double(limit.Seconds()))
	}
	obj := make([]float64, len(p.vars))
	offset := float64(p.constant)
	for _, t := range p.cost {
		if t.neg { // w (1 - x)
			offset += float64(t.w)
			obj[t.v] -= float64(t.w)
		} else {
			obj[t.v] += float64(t.w)
		}
	}
	name := C.CString("")
	defer C.free(unsafe.Pointer(name))
	for v := range p.vars {
		C.Cbc_addCol(m, name, 0, 1, C.double(obj[v]), 1, 0, nil, nil)
	}
	for _, c := range p.cons {
		if len(c.terms) == 0 {
			continue // build never makes one; 0 <= rhs would be trivial
		}
		cols := make([]C.int, len(c.terms))
		coefs := make([]C.double, len(c.terms))
		for k, t := range c.terms {
			cols[k], coefs[k] = C.int(t.v), C.double(t.coef)
		}
		sense := C.char('L')
		switch c.sense {
		case ge:
			sense = 'G'
		case eq:
			sense = 'E'
		}
		C.Cbc_addRow(m, name, C.int(len(cols)), &cols[0], &coefs[0], sense, C.double(c.rhs))
	}
	C.Cbc_solve(m)
	if C.Cbc_isProvenInfeasible(m) != 0 {
		out.infeas = true
		return out, nil
	}
	sol := C.Cbc_bestSolution(m)
	if sol == nil {
		return out, nil
	}
	xs := unsafe.Slice((*C.double)(sol), len(p.vars))
	out.x = make([]bool, len(p.vars))
	for v := range out.x {
		out.x[v] = xs[v] > 0.5
	}
	out.optimal = C.Cbc_isProvenOptimal(m) != 0
	// The objective is integral, so CBC's fractional bound rounds up.
	b := float64(C.Cbc_getBestPossibleObjValue(m)) + offset
	if !math.IsInf(b, 0) && !math.IsNaN(b) && math.Abs(b) < 1e18 {
		out.bound = int64(math.Ceil(b - 1e-6))
	}
	return out, nil
}
