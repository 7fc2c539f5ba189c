package optimal

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
)

// The test binary doubles as a solver worker, as the conspirator binary
// does with its hidden command.
func TestMain(m *testing.M) {
	if os.Getenv("OPTIMAL_TEST_WORKER") == "1" {
		if err := Serve(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// workerLog counts the workers a test started and killed.
type workerLog struct {
	sync.Mutex
	started, killed int
	pids            []int
}

// useWorkers makes this test's solves run in worker processes (this test
// binary) and restores in-process solving after it.
func useWorkers(t *testing.T) *workerLog {
	t.Helper()
	log := &workerLog{}
	StartWorker = func() (*Worker, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "OPTIMAL_TEST_WORKER=1")
		cmd.Stderr = os.Stderr
		w, err := CommandWorker(cmd)
		if err != nil {
			return nil, err
		}
		log.Lock()
		log.started++
		log.pids = append(log.pids, cmd.Process.Pid)
		log.Unlock()
		kill := w.Kill
		w.Kill = func() {
			kill()
			log.Lock()
			log.killed++
			log.Unlock()
		}
		return w, nil
	}
	t.Cleanup(func() {
		StartWorker = nil
		idle.Lock()
		ws := idle.ws
		idle.ws = nil
		idle.Unlock()
		for _, w := range ws {
			w.In.Close() // a worker ends at the end of its input
		}
	})
	return log
}

// Solved in a worker, every random snapshot of the brute-force test gets
// the same proven optimum as in this process (a second path through the
// wire format and the worker's loop), and workers are reused: a solve
// that ends in time leaves its worker for the next.
func TestWorkerMatchesInProcess(t *testing.T) {
	r := engine.NewStream(3, "optimal/worker")
	type want struct {
		cost float64
		err  error
	}
	var snaps []*snapshot.Snapshot
	var cfgs []Config
	var wants []want
	for k := range 40 {
		s := randomSnapshot(r)
		if k%2 == 1 {
			addServers(r, s)
		}
		cfg := Config{E1: 1, E2: []float64{0, 0.5, 2}[r.IntN(3)], Strict: r.IntN(4) == 0, Backend: "gophersat"}
		o, _ := NewSolver(cfg) // no limit: in this process
		res, err := o.Solve(s)
		snaps, cfgs, wants = append(snaps, s), append(cfgs, cfg), append(wants, want{res.Decision.Cost, err})
	}
	log := useWorkers(t)
	for k, s := range snaps {
		cfg := cfgs[k]
		cfg.TimeLimit = time.Hour // a limit: through a worker
		o, _ := NewSolver(cfg)
		res, err := o.Solve(s)
		if (err != nil) != (wants[k].err != nil) {
			t.Fatalf("case %d: in a worker err %v, here %v", k, err, wants[k].err)
		}
		if err != nil {
			continue
		}
		if !res.Optimal || math.Abs(res.Decision.Cost-wants[k].cost) > 1e-9 {
			t.Errorf("case %d: in a worker cost %v optimal=%v, here %v", k, res.Decision.Cost, res.Optimal, wants[k].cost)
		}
	}
	if log.started == 0 || log.started > 2 || log.killed != 0 {
		t.Errorf("%d workers started, %d killed for 40 solves that end in time; want one or two reused, none killed", log.started, log.killed)
	}
}

// A solve cut by its limit kills its worker at the limit: the decision is
// the best found, reported unproven with a positive gap, and the next
// solve runs on a fresh worker, unhindered, and is proven (its limit is an
// hour, so a busy machine cannot cut it). In this process the cut SAT call
// would have kept running and held the solver's slot. No wall-clock
// figure is asserted.
func TestWorkerCutSolveIsKilled(t *testing.T) {
	log := useWorkers(t)
	tight, _ := NewSolver(Config{E1: 1, E2: 0.1, Backend: "gophersat", TimeLimit: 20 * time.Millisecond})
	if _, err := tight.Schedule(windowSnapshot(1, 20, 4)); err != nil { // a proof needs about 2 s
		t.Fatal(err)
	}
	if st := tight.SolveStats(); st.Unproven != 1 || !(st.WorstGap > 0) {
		t.Fatalf("the 20-job window at 20 ms: %+v, want one unproven solve with a gap", st)
	}
	if log.started != 1 || log.killed != 1 {
		t.Errorf("after the cut: %d started, %d killed; want the worker killed", log.started, log.killed)
	}
	if err := syscallAlive(log.pids[0]); err == nil {
		t.Errorf("worker %d still runs after its solve was cut", log.pids[0])
	}
	roomy, _ := NewSolver(Config{E1: 1, E2: 0.1, Backend: "gophersat", TimeLimit: time.Hour})
	r, err := roomy.Solve(windowSnapshot(2, 8, 4))
	if err != nil || !r.Optimal {
		t.Fatalf("the next solve: optimal=%v err=%v", r.Optimal, err)
	}
	if log.started > 2 || log.killed != 1 {
		t.Errorf("%d workers started, %d killed; the next solve needs at most a fresh one and ends in time", log.started, log.killed)
	}
}

// Serve ends cleanly at the end of its input and refuses a damaged line
// with what was wrong; a worker that dies mid-search is an error of the
// solve, never a hang or a decision passed off as searched.
func TestServeBadInput(t *testing.T) {
	var out bytes.Buffer
	if err := Serve(strings.NewReader(""), &out); err != nil || out.Len() != 0 {
		t.Errorf("empty input: %v, wrote %q", err, out.String())
	}
	for in, want := range map[string]string{
		"{not json\n": "reading a problem",
		`{"cons":[{"v":[0,1],"c":[1],"s":0,"r":1}]}` + "\n": "constraint 0: 2 variables, 1 coefficients",
		`{"cons":[{"v":[0],"c":[1],"s":7,"r":1}]}` + "\n":   "sense 7",
		`{"cost":[{"v":3,"w":1}],"incumbent":"01"}` + "\n":  "incumbent: 2 variables, the cost reads variable 3",
		`{"cost":[{"v":0,"w":1}],"incumbent":"x"}` + "\n":   `byte 0 is 'x'`,
	} {
		if err := Serve(strings.NewReader(in), &out); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
	// One problem: x0 + x1 >= 1, cost x0 + 2 x1: the model x0 = 1, then
	// the end, proven.
	out.Reset()
	if err := Serve(strings.NewReader(`{"cons":[{"v":[0,1],"c":[1,1],"s":1,"r":1}],"cost":[{"v":0,"w":1},{"v":1,"w":2}]}`+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.HasSuffix(got, "{\"end\":\"optimal\"}\n") || !strings.Contains(got, `"x":"10"`) {
		t.Errorf("replies %q", got)
	}

	StartWorker = func() (*Worker, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "OPTIMAL_TEST_WORKER=1")
		w, err := CommandWorker(cmd)
		if err == nil {
			cmd.Process.Kill() // dies before it answers
		}
		return w, err
	}
	defer func() { StartWorker = nil }()
	o, _ := NewSolver(Config{E1: 1, E2: 0.1, Backend: "gophersat", TimeLimit: time.Hour})
	if _, err := o.Solve(windowSnapshot(1, 20, 4)); err == nil || !strings.Contains(err.Error(), "solver worker") {
		t.Errorf("a dead worker: %v", err)
	}
}
