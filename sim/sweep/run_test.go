package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
)

// Metamorphic: the directory written at -j 1 and at -j 4 (and with the
// points given in reverse order) hashes to the same tree, file by file.
func TestRunDeterministicAcrossJobs(t *testing.T) {
	pts := testPoints()
	d1 := filepath.Join(t.TempDir(), "j1")
	d4 := filepath.Join(t.TempDir(), "j4")
	if _, err := Run(context.Background(), pts, Options{Dir: d1, Jobs: 1}, fakeRun); err != nil {
		t.Fatal(err)
	}
	rev := make([]Point, len(pts))
	for i, p := range pts {
		rev[len(pts)-1-i] = p
	}
	var log bytes.Buffer
	sum, err := Run(context.Background(), rev, Options{Dir: d4, Jobs: 4, Progress: &log}, fakeRun)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Ran != 18 || sum.Total != 18 || sum.Skipped != 0 {
		t.Errorf("summary %+v, want 18 run of 18", sum)
	}
	sameTree(t, d1, d4)
	// 18 points + sweep.json; each point: 3 files + done.
	if got := len(treeOf(t, d1)); got != 1+18*4 {
		t.Errorf("%d files, want %d", got, 1+18*4)
	}
	// Plain log lines (not a terminal), never inside the results: one at
	// every tenth of the 18 points (every 2nd), the last among them.
	if n := strings.Count(log.String(), " points done ("); n != 9 || !strings.Contains(log.String(), "sweep: 18/18 points done (") {
		t.Errorf("progress log has %d done lines, want 9 (every 2nd of 18):\n%s", n, log.String())
	}
}

func TestRunTerminalProgressBar(t *testing.T) {
	var out bytes.Buffer
	pts := testPoints()[:4]
	if _, err := Run(context.Background(), pts, Options{Dir: t.TempDir(), Jobs: 2, Progress: &out, IsTerminal: true}, fakeRun); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "4/4") || strings.Contains(out.String(), "points done (") {
		t.Errorf("want a progress bar reaching 4/4 and no log lines, got %q", out.String())
	}
}

// Cancel after k points at -j 1: exactly k points are complete, no partial
// directory looks complete, the error says to resume; a resumed run runs
// exactly the missing points and the result equals an uninterrupted run.
func TestResumeAfterCancel(t *testing.T) {
	for _, jobs := range []int{1, 3} {
		pts := testPoints()
		ref := filepath.Join(t.TempDir(), "ref")
		if _, err := Run(context.Background(), pts, Options{Dir: ref, Jobs: 2}, fakeRun); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(t.TempDir(), "sweep")
		ctx, cancel := context.WithCancel(context.Background())
		const k = 5
		var started atomic.Int32
		cancelling := func(ctx context.Context, p Point) (map[string][]byte, error) {
			if started.Add(1) > k {
				cancel()
				return nil, ctx.Err()
			}
			return fakeRun(ctx, p)
		}
		sum, err := Run(ctx, pts, Options{Dir: dir, Jobs: jobs}, cancelling)
		if err == nil || !strings.Contains(err.Error(), "--resume") || !errors.Is(err, context.Canceled) {
			t.Fatalf("j%d: err = %v, want an interruption error naming --resume", jobs, err)
		}
		done := completeIDs(t, dir)
		if len(done) != sum.Done() || (jobs == 1 && len(done) != k) || len(done) >= len(pts) {
			t.Fatalf("j%d: %d complete points on disk, summary %+v, want %d at -j 1", jobs, len(done), sum, k)
		}
		if !strings.Contains(err.Error(), "of 18 points done") {
			t.Errorf("error %q does not say how many are done", err)
		}
		// Without --resume the directory is refused, naming --resume.
		if _, err := Run(context.Background(), pts, Options{Dir: dir, Jobs: 1}, fakeRun); err == nil || !strings.Contains(err.Error(), "--resume") {
			t.Errorf("rerun without resume: %v, want refusal naming --resume", err)
		}
		var reran sync.Map
		var count atomic.Int32
		counting := func(ctx context.Context, p Point) (map[string][]byte, error) {
			count.Add(1)
			reran.Store(p.ID, true)
			return fakeRun(ctx, p)
		}
		sum2, err := Run(context.Background(), pts, Options{Dir: dir, Jobs: jobs, Resume: true}, counting)
		if err != nil {
			t.Fatal(err)
		}
		if int(count.Load()) != len(pts)-len(done) || sum2.Skipped != len(done) || sum2.Ran != len(pts)-len(done) {
			t.Errorf("j%d resume ran %d points (summary %+v), want %d", jobs, count.Load(), sum2, len(pts)-len(done))
		}
		for _, id := range done {
			if _, ok := reran.Load(id); ok {
				t.Errorf("resume reran finished point %s", id)
			}
		}
		sameTree(t, ref, dir)
	}
}

func TestRunRefusesOtherDirectories(t *testing.T) {
	pts := testPoints()
	dir := t.TempDir()
	if _, err := Run(context.Background(), pts, Options{Dir: dir, Jobs: 2, Meta: map[string]string{"scenario": "datapath-basic"}}, fakeRun); err != nil {
		t.Fatal(err)
	}
	other := Expand([]Param{
		{Key: "host.background_load", Values: []string{"0", "0.5", "0.8"}},
		{Key: "path", Values: []string{"tcp", "conspirator"}},
	}, []uint64{1, 2, 3})
	notEmpty := t.TempDir()
	os.WriteFile(filepath.Join(notEmpty, "notes.txt"), []byte("x"), 0o644)
	cases := []struct {
		name string
		dir  string
		pts  []Point
		opts Options
		want string
	}{
		{"resume, other values", dir, other, Options{Resume: true, Meta: map[string]string{"scenario": "datapath-basic"}},
			`cannot resume in ` + dir + `: it holds a different sweep: parameter "host.background_load" differs: stored values [0, 0.4, 0.8], now [0, 0.5, 0.8]`},
		{"resume, other seeds", dir, Expand([]Param{{Key: "host.background_load", Values: []string{"0", "0.4", "0.8"}}, {Key: "path", Values: []string{"tcp", "conspirator"}}}, []uint64{1, 2}),
			Options{Resume: true, Meta: map[string]string{"scenario": "datapath-basic"}}, "seeds differ: stored [1 2 3], now [1 2]"},
		{"resume, other keys", dir, Expand([]Param{{Key: "path", Values: []string{"tcp"}}}, []uint64{1}),
			Options{Resume: true, Meta: map[string]string{"scenario": "datapath-basic"}}, "swept parameters differ: stored [host.background_load, path], now [path]"},
		{"resume, other scenario", dir, pts, Options{Resume: true, Meta: map[string]string{"scenario": "cluster-alibaba"}},
			`scenario differs: stored "datapath-basic", now "cluster-alibaba"`},
		{"no resume, other values", dir, other, Options{Meta: map[string]string{"scenario": "datapath-basic"}}, "already holds a different sweep"},
		{"no resume, same sweep complete", dir, pts, Options{Meta: map[string]string{"scenario": "datapath-basic"}}, "already holds 18 finished points"},
		{"not a sweep", notEmpty, pts, Options{}, "is not empty and holds no sweep.json"},
		{"bad shard", t.TempDir(), pts, Options{Shard: 2, Shards: 2}, "shard 2 of 2"},
		{"negative jobs", t.TempDir(), pts, Options{Jobs: -1}, "-j -1"},
		{"no points", t.TempDir(), nil, Options{}, "no points"},
	}
	for _, c := range cases {
		c.opts.Dir = c.dir
		_, err := Run(context.Background(), c.pts, c.opts, fakeRun)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v\nwant it to contain %q", c.name, err, c.want)
		}
	}
	// Resume of a complete sweep runs nothing.
	sum, err := Run(context.Background(), pts, Options{Dir: dir, Resume: true, Meta: map[string]string{"scenario": "datapath-basic"}},
		func(context.Context, Point) (map[string][]byte, error) { return nil, errors.New("must not run") })
	if err != nil || sum.Skipped != 18 || sum.Ran != 0 {
		t.Errorf("resume of a complete sweep: %+v, %v; want 18 skipped", sum, err)
	}
}

func TestUnwritableOutputDirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "afile")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(file, "sweep")
	_, err := Run(context.Background(), testPoints(), Options{Dir: dir}, fakeRun)
	if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "cannot create output directory") {
		t.Errorf("err = %v, want it to name %s", err, dir)
	}
}

// A failing point stops the sweep, keeps the points written, names the
// point and its parameters, and a resume with a fixed run finishes it.
func TestRunPointFailure(t *testing.T) {
	pts := testPoints()
	dir := t.TempDir()
	bad := pts[4]
	failing := func(ctx context.Context, p Point) (map[string][]byte, error) {
		if p.ID == bad.ID {
			return nil, errors.New("scenario invalid: path conspirator needs a SmartNIC")
		}
		if p.Index == 7 {
			panic("index out of range")
		}
		return fakeRun(ctx, p)
	}
	_, err := Run(context.Background(), pts, Options{Dir: dir, Jobs: 1}, failing)
	if err == nil || !strings.Contains(err.Error(), "point "+bad.String()+" failed: scenario invalid") || !strings.Contains(err.Error(), "--resume") {
		t.Fatalf("err = %v, want the failing point and --resume", err)
	}
	if n := len(completeIDs(t, dir)); n != 4 {
		t.Errorf("%d points complete, want the 4 before the failure at -j 1", n)
	}
	_, err = Run(context.Background(), pts, Options{Dir: dir, Jobs: 1, Resume: true}, func(ctx context.Context, p Point) (map[string][]byte, error) {
		if p.Index == 7 {
			panic("index out of range")
		}
		return fakeRun(ctx, p)
	})
	if err == nil || !strings.Contains(err.Error(), "panic: index out of range") {
		t.Errorf("panic: err = %v, want it reported as the point's failure", err)
	}
	if _, err := Run(context.Background(), pts, Options{Dir: dir, Jobs: 2, Resume: true}, fakeRun); err != nil {
		t.Fatal(err)
	}
	if n := len(completeIDs(t, dir)); n != len(pts) {
		t.Errorf("%d complete after fixed resume, want %d", n, len(pts))
	}
}

func TestBadFileNames(t *testing.T) {
	for _, name := range []string{"", "/abs", "../up", "a/../b", "done", ".hidden", "a/.b", `a\b`, "a//b"} {
		_, err := Run(context.Background(), testPoints()[:1], Options{Dir: t.TempDir()}, func(context.Context, Point) (map[string][]byte, error) {
			return map[string][]byte{name: nil}, nil
		})
		if err == nil || !strings.Contains(err.Error(), "file name") && !strings.Contains(err.Error(), "empty file name") {
			t.Errorf("file name %q: err = %v, want a file-name error", name, err)
		}
	}
}

// Whatever step of writing a sweep fails (every call of every step, the
// spec, each point's files, its marker, its rename and the directory
// syncs; short writes on a full disk included), the error is reported, no
// point directory without every file and the marker ever appears, no
// temporary is left, and a resume completes the sweep identical to a clean
// run.
func TestAtomicPointWritesUnderFaults(t *testing.T) {
	pts := testPoints()[:3]
	ref := t.TempDir()
	if _, err := Run(context.Background(), pts, Options{Dir: ref, Jobs: 1}, fakeRun); err != nil {
		t.Fatal(err)
	}
	calls := map[atomicfs.Fault]int{}
	for _, f := range atomicfs.Faults {
		fsys := &atomicfs.Faulty{Fault: f}
		if _, err := Run(context.Background(), pts, Options{Dir: t.TempDir(), Jobs: 1, fs: fsys}, fakeRun); err != nil {
			t.Fatal(err)
		}
		calls[f] = fsys.Calls()
	}
	// 3 points x (3 files + marker) + sweep.json = 13 writes; a rename
	// per point; sweep.json is linked into place (created only if absent);
	// mkdir of the sweep, points/, and per point its tmp dir and plots/.
	if calls[atomicfs.FaultWrite] != 13 || calls[atomicfs.FaultRename] != 3 || calls[atomicfs.FaultLink] != 1 {
		t.Fatalf("calls per step %v, want 13 writes, 3 renames and 1 link", calls)
	}
	for _, f := range atomicfs.Faults {
		for n := 1; n <= calls[f]; n++ {
			dir := filepath.Join(t.TempDir(), "sweep")
			fsys := &atomicfs.Faulty{Fault: f, N: n}
			_, err := Run(context.Background(), pts, Options{Dir: dir, Jobs: 1, fs: fsys}, fakeRun)
			if !errors.Is(err, atomicfs.ErrInjected) && !strings.Contains(fmt.Sprint(err), atomicfs.ErrInjected.Error()) {
				t.Fatalf("%s #%d: err = %v, want the injected fault", f, n, err)
			}
			entries, _ := os.ReadDir(filepath.Join(dir, "points"))
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), tmpPrefix) {
					t.Errorf("%s #%d: temp dir %s left behind", f, n, e.Name())
					continue
				}
				if _, err := ReadPointFiles(filepath.Join(dir, "points", e.Name())); err != nil {
					t.Errorf("%s #%d: %s looks like a point but is not whole: %v", f, n, e.Name(), err)
				}
			}
			if tmp, _ := atomicfs.Temps(dir); len(tmp) > 0 {
				t.Errorf("%s #%d: temporaries left: %v", f, n, tmp)
			}
			if _, err := Run(context.Background(), pts, Options{Dir: dir, Jobs: 1, Resume: true}, fakeRun); err != nil {
				t.Fatalf("%s #%d: resume: %v", f, n, err)
			}
			sameTree(t, ref, dir)
		}
	}
}

// A temp dir left by a killed run, and a point directory without the marker
// (damaged by hand), are rerun by resume and never counted as done.
func TestResumeCleansLeftovers(t *testing.T) {
	pts := testPoints()[:2]
	ref, dir := t.TempDir(), t.TempDir()
	Run(context.Background(), pts, Options{Dir: ref, Jobs: 1}, fakeRun)
	if _, err := Run(context.Background(), pts, Options{Dir: dir, Jobs: 1}, fakeRun); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "points", pts[0].ID, DoneFile))
	os.MkdirAll(filepath.Join(dir, "points", tmpPrefix+pts[1].ID), 0o755)
	os.WriteFile(filepath.Join(dir, "points", tmpPrefix+pts[1].ID, "result.json"), []byte("half"), 0o644)
	var n atomic.Int32
	sum, err := Run(context.Background(), pts, Options{Dir: dir, Jobs: 1, Resume: true}, func(ctx context.Context, p Point) (map[string][]byte, error) {
		n.Add(1)
		return fakeRun(ctx, p)
	})
	if err != nil || n.Load() != 1 || sum.Skipped != 1 {
		t.Fatalf("resume ran %d points (%+v, %v), want only the unmarked one", n.Load(), sum, err)
	}
	sameTree(t, ref, dir)
	// A file changed after the sweep is caught by the manifest.
	os.WriteFile(filepath.Join(dir, "points", pts[1].ID, "result.json"), []byte("edited"), 0o644)
	if _, err := ReadPointFiles(PointDir(dir, pts[1])); err == nil || !strings.Contains(err.Error(), "manifest") {
		t.Errorf("edited point: %v, want a manifest mismatch", err)
	}
	if _, err := ReadPointFile(PointDir(dir, pts[1]), "result.json"); err == nil || !strings.Contains(err.Error(), "manifest") {
		t.Errorf("edited file read alone: %v, want a manifest mismatch", err)
	}
	if b, err := ReadPointFile(PointDir(dir, pts[1]), "requests.csv"); err != nil || !strings.HasPrefix(string(b), "id,latency_us\n") {
		t.Errorf("intact file of the edited point: %q, %v", b, err)
	}
	if _, err := ReadPointFile(PointDir(dir, pts[1]), "done"); err == nil {
		t.Error("the marker itself read as a result file")
	}
}

func TestSpecRoundTrip(t *testing.T) {
	pts := testPoints()
	dir := t.TempDir()
	Run(context.Background(), pts, Options{Dir: dir, Jobs: 2, Meta: map[string]string{"scenario": "x"}}, fakeRun)
	s, err := ReadSpec(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := s.diff(newSpec(pts, map[string]string{"scenario": "x"}, nil)); d != "" {
		t.Errorf("spec read back differs: %s", d)
	}
	if len(s.Params) != 2 || strings.Join(s.Params[0].Values, ",") != "0,0.4,0.8" || len(s.Seeds) != 3 {
		t.Errorf("derived params %+v seeds %v", s.Params, s.Seeds)
	}
	os.WriteFile(filepath.Join(dir, SpecFile), []byte(`{"format":"conspirator-sweep/1","points":[],"extra":1}`), 0o644)
	if _, err := ReadSpec(dir); err == nil || !strings.Contains(err.Error(), `unknown field "extra"`) {
		t.Errorf("bad spec: %v", err)
	}
	if _, err := ReadSpec(t.TempDir()); err == nil || !strings.Contains(err.Error(), "is not a sweep directory") {
		t.Errorf("missing spec: %v", err)
	}
}

// The race of issue "flake-free suite": at -j 1, a failing point must stop
// the sweep before any later point starts. The hooks force the worst
// interleaving instead of hoping for it: the coordinator, holding the
// failure, waits until the worker is back asking for work (or, in the
// racy design, has already been handed the next point and started it)
// before it acts. A pool that can hand out a point without the
// coordinator's decision (the old separate feeder goroutine) loses each
// round at least half the time, so 20 rounds catch it; there are no
// sleeps, and the pool as written passes every round by construction.
func TestFailureStopsFeedDeterministically(t *testing.T) {
	pts := testPoints()
	const failAt = 4
	idle := make(chan struct{}, len(pts)+2)
	started := make(chan int, len(pts)+2)
	var late []int
	hooks := poolHooks{
		idle: func() { idle <- struct{}{} },
		afterResult: func(r result) {
			if r.err == nil {
				return
			}
			// The worker asked for work before each of the first
			// failAt+1 points; the (failAt+2)-th request comes after it
			// delivered the failure.
			for seen := 0; seen < failAt+2; {
				select {
				case <-idle:
					seen++
				case i := <-started:
					if i > failAt {
						late = append(late, i)
						return
					}
				}
			}
		},
	}
	failing := func(ctx context.Context, p Point) (map[string][]byte, error) {
		started <- p.Index
		if p.Index == failAt {
			return nil, errors.New("boom")
		}
		return fakeRun(ctx, p)
	}
	for round := 0; round < 20; round++ {
		dir := t.TempDir()
		_, err := Run(context.Background(), pts, Options{Dir: dir, Jobs: 1, hooks: hooks}, failing)
		if err == nil || !strings.Contains(err.Error(), "boom") {
			t.Fatalf("round %d: err = %v, want the failure", round, err)
		}
		if len(late) > 0 {
			t.Fatalf("round %d: point %v started after point %d failed at -j 1", round, late, failAt)
		}
		if n := len(completeIDs(t, dir)); n != failAt {
			t.Fatalf("round %d: %d points complete, want the %d before the failure", round, n, failAt)
		}
		for len(idle) > 0 {
			<-idle
		}
		for len(started) > 0 {
			<-started
		}
	}
}

// A finished point edited after the sweep wrote it is not trusted by a
// resume: the error names the point and says how to recover.
func TestResumeRefusesEditedPoint(t *testing.T) {
	pts := testPoints()[:3]
	dir := t.TempDir()
	if _, err := Run(context.Background(), pts, Options{Dir: dir, Jobs: 1}, fakeRun); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(PointDir(dir, pts[1]), "result.json")
	if err := os.WriteFile(p, []byte(`{"id":"forged"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), pts, Options{Dir: dir, Jobs: 1, Resume: true}, fakeRun)
	if err == nil || !strings.Contains(err.Error(), pts[1].ID) || !strings.Contains(err.Error(), "manifest") || !strings.Contains(err.Error(), "delete the directory") {
		t.Errorf("resume over an edited point: %v, want a refusal naming %s and the fix", err, pts[1].ID)
	}
}
