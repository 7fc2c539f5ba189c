package optimal

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"sync"
	"time"

	"github.com/crillab/gophersat/solver"
)

// StartWorker starts a solver worker: a process that runs Serve on its
// standard input and output. The assembly sets it (cmd/conspirator starts
// its own binary with a hidden command); nil runs every solve in this
// process, where a SAT call cut by the time limit cannot be stopped and
// keeps the solver's slot until it ends by itself.
//
// With workers, a solve cut by its limit kills its worker: the CPU it was
// using is freed at the limit and the next solve starts at once on
// another worker. Workers are reused between solves that end in time, so
// a process is started per cut solve, not per solve. Workers share
// nothing, so solves in parallel runs need not take turns either.
var StartWorker func() (*Worker, error)

// Worker is a running solver process.
type Worker struct {
	In   io.WriteCloser // its standard input
	Out  io.Reader      // its standard output
	Kill func()         // stops it at once and waits for it to end
}

// CommandWorker starts cmd, a process that runs Serve on its standard
// input and output, and returns it as a Worker whose Kill stops it and
// waits for it. The assembly's StartWorker builds the command (which
// binary, which arguments) and calls this.
func CommandWorker(cmd *exec.Cmd) (*Worker, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Worker{In: in, Out: out, Kill: func() {
		cmd.Process.Kill()
		cmd.Wait()
	}}, nil
}

// The wire format, one JSON object per line: a problem to the worker;
// each cheaper model as it is found, then how the search ended, back.
type wireProblem struct {
	Cons      []wireCons `json:"cons"`
	Cost      []wireCost `json:"cost"`
	Constant  int64      `json:"constant"`
	Bound     int64      `json:"bound"`
	Incumbent string     `json:"incumbent,omitempty"`
}

type wireCons struct {
	V []int   `json:"v"`
	C []int64 `json:"c"`
	S sense   `json:"s"`
	R int64   `json:"r"`
}

type wireCost struct {
	V   int   `json:"v"`
	Neg bool  `json:"n,omitempty"`
	W   int64 `json:"w"`
}

type wireReply struct {
	X   string `json:"x,omitempty"`   // a cheaper model, one '0' or '1' per variable
	End string `json:"end,omitempty"` // "optimal" or "infeasible": the search is over
}

func bits(x []bool) string {
	b := make([]byte, len(x))
	for i, v := range x {
		b[i] = '0'
		if v {
			b[i] = '1'
		}
	}
	return string(b)
}

func unbits(s string) ([]bool, error) {
	x := make([]bool, len(s))
	for i := range len(s) {
		switch s[i] {
		case '0':
		case '1':
			x[i] = true
		default:
			return nil, fmt.Errorf("model: byte %d is %q, want 0 or 1", i, s[i])
		}
	}
	return x, nil
}

func toWire(p *program) wireProblem {
	q := wireProblem{Constant: p.constant, Bound: p.bound}
	for _, c := range p.cons {
		w := wireCons{S: c.sense, R: c.rhs, V: make([]int, len(c.terms)), C: make([]int64, len(c.terms))}
		for k, t := range c.terms {
			w.V[k], w.C[k] = t.v, t.coef
		}
		q.Cons = append(q.Cons, w)
	}
	for _, t := range p.cost {
		q.Cost = append(q.Cost, wireCost{V: t.v, Neg: t.neg, W: t.w})
	}
	if p.incumbent != nil {
		q.Incumbent = bits(p.incumbent)
	}
	return q
}

// fromWire rebuilds the part of a program the search reads, checking what
// a damaged or foreign line could break.
func fromWire(q wireProblem) (*program, error) {
	p := &program{constant: q.Constant, bound: q.Bound}
	for i, w := range q.Cons {
		if len(w.V) != len(w.C) || w.S < le || w.S > eq {
			return nil, fmt.Errorf("constraint %d: %d variables, %d coefficients, sense %d", i, len(w.V), len(w.C), w.S)
		}
		c := constraint{sense: w.S, rhs: w.R, terms: make([]term, len(w.V))}
		for k := range w.V {
			if w.V[k] < 0 {
				return nil, fmt.Errorf("constraint %d: variable %d", i, w.V[k])
			}
			c.terms[k] = term{v: w.V[k], coef: w.C[k]}
		}
		p.cons = append(p.cons, c)
	}
	for i, w := range q.Cost {
		if w.V < 0 {
			return nil, fmt.Errorf("cost term %d: variable %d", i, w.V)
		}
		p.cost = append(p.cost, costTerm{v: w.V, neg: w.Neg, w: w.W})
	}
	if q.Incumbent != "" {
		x, err := unbits(q.Incumbent)
		if err != nil {
			return nil, fmt.Errorf("incumbent: %w", err)
		}
		for _, t := range p.cost {
			if t.v >= len(x) {
				return nil, fmt.Errorf("incumbent: %d variables, the cost reads variable %d", len(x), t.v)
			}
		}
		p.incumbent = x
	}
	return p, nil
}

// Serve is a solver worker's main loop: it reads problems from r, one per
// line, searches each to the end (no limit: its parent kills it when time
// is up) and writes every cheaper model, then how the search ended, to w.
// It returns nil at the end of r.
func Serve(r io.Reader, w io.Writer) error {
	dec := json.NewDecoder(bufio.NewReader(r))
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	send := func(rep wireReply) error {
		if err := enc.Encode(rep); err != nil {
			return err
		}
		return bw.Flush()
	}
	for {
		var q wireProblem
		if err := dec.Decode(&q); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("solver worker: reading a problem: %w", err)
		}
		p, err := fromWire(q)
		if err != nil {
			return fmt.Errorf("solver worker: %w", err)
		}
		var werr error
		// One search at a time in this process: no slot to take.
		out := search(p, func(s *solver.Solver) (solver.Status, bool) { return s.Solve(), true }, func(x []bool) {
			if werr == nil {
				werr = send(wireReply{X: bits(x)})
			}
		})
		if werr != nil {
			return fmt.Errorf("solver worker: writing a model: %w", werr)
		}
		end := "optimal"
		if out.infeas {
			end = "infeasible"
		}
		if err := send(wireReply{End: end}); err != nil {
			return fmt.Errorf("solver worker: %w", err)
		}
	}
}

// worker is a started Worker and the replies read from it.
type worker struct {
	*Worker
	replies chan wireReply
	failed  error // why replies closed early (set before the close)
}

// idle holds the workers whose last search ended in time.
var idle struct {
	sync.Mutex
	ws []*worker
}

func getWorker() (*worker, error) {
	idle.Lock()
	if n := len(idle.ws); n > 0 {
		w := idle.ws[n-1]
		idle.ws = idle.ws[:n-1]
		idle.Unlock()
		return w, nil
	}
	idle.Unlock()
	ww, err := StartWorker()
	if err != nil {
		return nil, fmt.Errorf("starting a solver worker: %w", err)
	}
	w := &worker{Worker: ww, replies: make(chan wireReply, 16)}
	go func() {
		defer close(w.replies)
		dec := json.NewDecoder(bufio.NewReader(w.Out))
		for {
			var rep wireReply
			if err := dec.Decode(&rep); err != nil {
				if !errors.Is(err, io.EOF) {
					w.failed = err
				}
				return
			}
			w.replies <- rep
		}
	}()
	return w, nil
}

// stop kills w and drains what it had written, so that its reader ends.
func (w *worker) stop() {
	w.Kill()
	go func() {
		for range w.replies {
		}
	}()
}

func putWorker(w *worker) {
	idle.Lock()
	idle.ws = append(idle.ws, w)
	idle.Unlock()
}

// solveInWorker hands p to a worker and takes the cheapest model it
// reports within limit; at the limit it kills the worker, so nothing of
// the cut search outlives it. The time to start a worker is not counted
// against the limit.
func solveInWorker(p *program, limit time.Duration) (outcome, error) {
	out := outcome{bound: math.MinInt64, x: p.incumbent}
	if p.incumbent != nil && p.value(p.incumbent) <= p.bound {
		out.optimal = true // the greedy meets the counting bound: no search
		return out, nil
	}
	w, err := getWorker()
	if err != nil {
		return out, err
	}
	line, err := json.Marshal(toWire(p))
	if err != nil {
		w.stop()
		return out, err
	}
	timer := time.NewTimer(limit)
	defer timer.Stop()
	if _, err := w.In.Write(append(line, '\n')); err != nil {
		w.stop()
		return out, fmt.Errorf("solver worker: sending the problem: %w", err)
	}
	for {
		select {
		case rep, ok := <-w.replies:
			if !ok {
				w.stop()
				why := "it exited"
				if w.failed != nil {
					why = w.failed.Error()
				}
				return out, fmt.Errorf("solver worker: %s before the search ended", why)
			}
			switch {
			case rep.X != "":
				x, err := unbits(rep.X)
				if err != nil {
					w.stop()
					return out, fmt.Errorf("solver worker: %w", err)
				}
				out.x = x
				out.improved++
			case rep.End == "optimal":
				out.optimal = out.x != nil
				out.infeas = out.x == nil
				putWorker(w)
				return out, nil
			case rep.End == "infeasible":
				out.infeas = true
				putWorker(w)
				return out, nil
			default:
				w.stop()
				return out, fmt.Errorf("solver worker: unexpected reply %+v", rep)
			}
		case <-timer.C:
			w.stop() // time is up: the best so far, not proven
			return out, nil
		}
	}
}
