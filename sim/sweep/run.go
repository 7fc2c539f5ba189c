package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
)

// Options control where and how a sweep runs. None of them changes what is
// written: the directory is the same at any Jobs, shard split or resume.
type Options struct {
	// Dir is the sweep directory; created if missing.
	Dir string
	// Jobs is the number of points run at once (-j); 0 means
	// runtime.NumCPU(). Each run is single-threaded.
	Jobs int
	// Resume skips points whose directory is complete and runs the rest.
	// Without it, a point that is already complete is an error.
	Resume bool
	// Shard and Shards select the points with Index % Shards == Shard.
	// Shards == 0 means 1 (all points).
	Shard, Shards int
	// Meta identifies the sweep beyond its points (scenario name, config
	// hash); it is stored in sweep.json and must match on resume.
	Meta map[string]string
	// Inputs are the resolved inputs common to all points (Spec.Inputs),
	// stored in sweep.json; with the points' digests (Point.Inputs) they
	// must match on resume, and a mismatch names the keys that differ.
	Inputs map[string]string
	// Progress receives a progress bar (IsTerminal) or log lines, one at
	// every tenth of the points and at the last; nil discards progress.
	Progress   io.Writer
	IsTerminal bool

	fs    fileSystem // nil means the real file system; tests inject faults
	hooks poolHooks  // test-only interleaving control
}

// Summary counts the points of this run's shard.
type Summary struct {
	Total   int // points in this shard
	Skipped int // complete before the run started (Resume)
	Ran     int // finished and written by this run
}

// Done is the number of complete points of the shard.
func (s Summary) Done() int { return s.Skipped + s.Ran }

// RunFunc runs one point and returns its files, keyed by slash-separated
// names relative to the point directory. It must be deterministic in the
// point alone and should return promptly with ctx.Err() once ctx is done.
type RunFunc func(ctx context.Context, p Point) (files map[string][]byte, err error)

// Run runs the points of opts' shard across opts.Jobs workers and writes
// each finished point atomically to Dir/points/ID (see the package doc).
//
// Cancelling ctx stops handing out points; running points either finish and
// are written whole or are abandoned without a complete-looking directory.
// Run then returns an error saying how many points are done and to rerun
// with --resume. A failing point stops the sweep the same way; the points
// already written are kept.
func Run(ctx context.Context, points []Point, opts Options, run RunFunc) (Summary, error) {
	if opts.fs == nil {
		opts.fs = atomicfs.OS
	}
	if opts.Dir == "" {
		return Summary{}, refusedf("sweep: no output directory given")
	}
	if opts.Jobs < 0 {
		return Summary{}, refusedf("sweep: -j %d: the number of jobs must be at least 1 (0 means one per CPU)", opts.Jobs)
	}
	if opts.Jobs == 0 {
		opts.Jobs = runtime.NumCPU()
	}
	if opts.Shards == 0 && opts.Shard == 0 {
		opts.Shards = 1
	}
	if err := checkShard(opts.Shard, opts.Shards); err != nil {
		return Summary{}, &RefusedError{err.Error()}
	}
	if len(points) == 0 {
		return Summary{}, refusedf("sweep: no points to run: give at least one seed and one value per parameter")
	}
	if err := checkPoints(points); err != nil {
		return Summary{}, &RefusedError{err.Error()}
	}
	spec := newSpec(points, opts.Meta, opts.Inputs)
	if err := prepareDir(opts.fs, opts.Dir, spec, opts.Resume); err != nil {
		return Summary{}, err
	}
	pointsDir := filepath.Join(opts.Dir, "points")

	var mine []Point
	for _, p := range spec.Points {
		if p.Index%opts.Shards == opts.Shard {
			mine = append(mine, p)
		}
	}
	sum := Summary{Total: len(mine)}
	var todo []Point
	var already []string
	for _, p := range mine {
		// A .tmp- directory of one of our points is a run that was killed
		// mid-write; other shards may share Dir, so only ours are removed.
		if err := opts.fs.RemoveAll(filepath.Join(pointsDir, tmpPrefix+p.ID)); err != nil {
			return sum, fmt.Errorf("sweep: remove unfinished point: %w", err)
		}
		complete, err := isComplete(pointsDir, p.ID)
		if err != nil {
			return sum, err
		}
		switch {
		case complete && opts.Resume:
			// A finished point is kept only if its files still match the
			// manifest it was written with: an edited or damaged point
			// would otherwise be folded into the aggregate unnoticed.
			if _, err := ReadPointFiles(filepath.Join(pointsDir, p.ID)); err != nil {
				return sum, fmt.Errorf("sweep: cannot resume: %w", err)
			}
			sum.Skipped++
		case complete:
			already = append(already, p.ID)
		default:
			// A directory under the ID without the marker cannot come from
			// writePointDir; treat it as damaged and rerun the point.
			if err := opts.fs.RemoveAll(filepath.Join(pointsDir, p.ID)); err != nil {
				return sum, fmt.Errorf("sweep: remove incomplete point: %w", err)
			}
			todo = append(todo, p)
		}
	}
	if len(already) > 0 {
		return sum, refusedf("sweep: %s already holds %d finished points of this sweep (%s): rerun with --resume to keep them and run the rest, or choose a new directory",
			opts.Dir, len(already), firstFew(already))
	}

	prog := newProgress(opts, len(todo), sum.Skipped)
	ran, runErr := runPool(ctx, todo, opts, pointsDir, run, prog, opts.hooks)
	sum.Ran = ran
	prog.finish()
	if runErr != nil {
		return sum, fmt.Errorf("sweep: %w; %d of %d points done in %s; fix the cause and rerun with --resume to run the other %d",
			runErr, sum.Done(), sum.Total, opts.Dir, sum.Total-sum.Done())
	}
	if err := ctx.Err(); err != nil && sum.Done() < sum.Total {
		return sum, fmt.Errorf("sweep interrupted (%w): %d of %d points done in %s; rerun with --resume to run the other %d",
			err, sum.Done(), sum.Total, opts.Dir, sum.Total-sum.Done())
	}
	return sum, nil
}

// prepareDir creates dir, checks that it is empty or holds this very sweep,
// and writes sweep.json atomically if it is not there yet.
func prepareDir(fsys fileSystem, dir string, spec Spec, resume bool) error {
	if err := fsys.MkdirAll(dir); err != nil {
		return fmt.Errorf("sweep: cannot create output directory %s: %w", dir, err)
	}
	all, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("sweep: cannot read output directory %s: %w", dir, err)
	}
	// Another shard sharing dir may be writing sweep.json right now; its
	// temporary file does not make the directory "not empty".
	var entries []os.DirEntry
	for _, e := range all {
		if !strings.HasPrefix(e.Name(), "."+SpecFile+".tmp-") {
			entries = append(entries, e)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, SpecFile)); err == nil {
		stored, err := ReadSpec(dir)
		if err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
		if err := sameSweep(dir, stored, spec, resume); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("sweep: %w", err)
	} else if len(entries) > 0 {
		return refusedf("sweep: output directory %s is not empty and holds no %s: choose an empty or new directory", dir, SpecFile)
	} else if created, err := createOnce(fsys, filepath.Join(dir, SpecFile), spec.encode()); err != nil {
		return fmt.Errorf("sweep: %w", err)
	} else if !created {
		// Another process (a shard of this sweep, or another sweep)
		// created it first: the directory is this sweep only if the spec
		// it wrote is this one.
		stored, err := ReadSpec(dir)
		if err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
		if err := sameSweep(dir, stored, spec, resume); err != nil {
			return err
		}
	}
	// With sweep.json in place, a temporary of it is a leftover of a
	// process killed while writing it (or a concurrent shard's redundant
	// copy, which then finds the spec in place, above).
	if err := atomicfs.CleanTemps(fsys, dir, SpecFile); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if err := fsys.MkdirAll(filepath.Join(dir, "points")); err != nil {
		return fmt.Errorf("sweep: cannot create %s: %w", filepath.Join(dir, "points"), err)
	}
	return nil
}

// sameSweep refuses a directory whose stored spec is not spec.
func sameSweep(dir string, stored, spec Spec, resume bool) error {
	d := stored.diff(spec)
	switch {
	case d == "":
		return nil
	case resume:
		return refusedf("sweep: cannot resume in %s: it holds a different sweep: %s; run this one into a new directory, or restore the inputs it was started with", dir, d)
	default:
		return refusedf("sweep: %s already holds a different sweep (%s): choose a new directory", dir, d)
	}
}

// createOnce writes data to path only if nothing is there, in one atomic
// step: the bytes go to a temporary file, which is then hard-linked to
// path (link fails if path exists, so of two processes racing to create
// it exactly one succeeds, and its file is whole). It reports whether
// this call created path.
func createOnce(fsys fileSystem, path string, data []byte) (bool, error) {
	tmp, err := atomicfs.CreateTemp(path)
	if err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	defer atomicfs.ReleaseTemp(tmp)
	if err := fsys.WriteFile(tmp, data); err != nil {
		fsys.RemoveAll(tmp)
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	err = fsys.Link(tmp, path)
	fsys.RemoveAll(tmp)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := fsys.SyncDir(filepath.Dir(path)); err != nil {
		return true, fmt.Errorf("write %s: sync directory: %w", path, err)
	}
	return true, nil
}

// RefusedError is a sweep the runner will not start as asked: a directory
// that holds another sweep or other files, finished points without
// --resume, a resume over other inputs, a bad shard or point list. It is
// a matter of configuration (the command line exits 2), not a failed run.
type RefusedError struct{ msg string }

func (e *RefusedError) Error() string { return e.msg }

func refusedf(format string, args ...any) error {
	return &RefusedError{fmt.Sprintf(format, args...)}
}

func isComplete(pointsDir, id string) (bool, error) {
	_, err := os.Stat(filepath.Join(pointsDir, id, DoneFile))
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscallENOTDIR) {
		return false, nil
	}
	return false, fmt.Errorf("sweep: %w", err)
}

// IsComplete says whether point p of the sweep in dir has been written whole.
func IsComplete(dir string, p Point) (bool, error) {
	return isComplete(filepath.Join(dir, "points"), p.ID)
}

// PointDir is the directory of point p in the sweep directory dir.
func PointDir(dir string, p Point) string { return filepath.Join(dir, "points", p.ID) }

type result struct {
	p   Point
	err error
}

// poolHooks lets a test stop the pool at chosen moments to force an
// interleaving (no sleeps): afterResult runs in the coordinator after it
// received a result and before it acts on it; idle runs in a worker before
// it asks for its next point. Both nil outside tests.
type poolHooks struct {
	afterResult func(result)
	idle        func()
}

// runPool hands todo to opts.Jobs workers until ctx is done or a point
// fails, and returns how many points it wrote and the first failure.
//
// One goroutine, the coordinator, both hands out points and receives
// results, so "a point failed" and "hand out the next point" can never
// race: once the coordinator has seen a failure it hands out nothing more.
// At -j 1 a failed sweep therefore runs exactly the points before the
// failure, whatever the scheduler does. (An earlier version fed points
// from a separate goroutine, which could give the next point to the
// worker before the coordinator had stopped the feed.)
func runPool(ctx context.Context, todo []Point, opts Options, pointsDir string, run RunFunc, prog progress, hooks poolHooks) (int, error) {
	work := make(chan Point)
	results := make(chan result)
	var wg sync.WaitGroup
	for w := 0; w < opts.Jobs && w < len(todo); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if hooks.idle != nil {
					hooks.idle()
				}
				p, ok := <-work
				if !ok {
					return
				}
				results <- result{p, runPoint(ctx, p, opts.fs, pointsDir, run)}
			}
		}()
	}

	ran, next, inflight := 0, 0, 0
	stopped := false
	done := ctx.Done()
	var failures []result
	for {
		var send chan Point // nil disables the send case below
		var p Point
		if !stopped && next < len(todo) {
			send, p = work, todo[next]
		}
		if send == nil && inflight == 0 {
			break
		}
		select {
		case send <- p:
			next++
			inflight++
		case r := <-results:
			inflight--
			if hooks.afterResult != nil {
				hooks.afterResult(r)
			}
			switch {
			case r.err == nil:
				ran++
				prog.done(r.p.ID)
			case errors.Is(r.err, errAbandoned):
			default:
				failures = append(failures, r)
				stopped = true
			}
		case <-done:
			stopped = true
			done = nil // a closed channel would be chosen again and again
		}
	}
	close(work)
	wg.Wait()
	if len(failures) == 0 {
		return ran, nil
	}
	// Report the lowest-index failure so the message does not depend on
	// which worker finished first.
	sort.Slice(failures, func(i, j int) bool { return failures[i].p.Index < failures[j].p.Index })
	f := failures[0]
	msg := fmt.Sprintf("point %s failed: %v", f.p, f.err)
	if len(failures) > 1 {
		msg += fmt.Sprintf(" (and %d more points failed)", len(failures)-1)
	}
	return ran, errors.New(msg)
}

var errAbandoned = errors.New("abandoned after cancellation")

// runPoint runs one point and writes it. A run that fails after ctx was
// cancelled is abandoned, not reported: the cancellation is the cause.
func runPoint(ctx context.Context, p Point, fsys fileSystem, pointsDir string, run RunFunc) (err error) {
	if ctx.Err() != nil {
		return errAbandoned
	}
	defer func() {
		// A panic in a simulation is a bug, but it must not take the other
		// finished points down with it: report it as this point's failure.
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	files, err := run(ctx, p)
	if err != nil {
		if ctx.Err() != nil {
			return errAbandoned
		}
		return err
	}
	return writePointDir(fsys, pointsDir, p.ID, files)
}

func firstFew(ids []string) string {
	if len(ids) <= 3 {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:3], ", ") + fmt.Sprintf(", ... %d more", len(ids)-3)
}
