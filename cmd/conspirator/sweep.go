package main

import (
	"context"
	"fmt"
	"github.com/conspirator-sim/conspirator/reports"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/conspirator-sim/conspirator/internal/dirlock"
	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim"
	"github.com/conspirator-sim/conspirator/sim/sweep"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

func (a *app) sweepCmd() *cobra.Command {
	var f scenarioFlags
	var params []string
	var seeds, jobs int
	var outDir, shard string
	var resume, noReport bool
	var e emitFlags
	c := &cobra.Command{
		Use:   "sweep SCENARIO|FILE [--param key=v1,v2,... ...]",
		Short: "Run a scenario over the cartesian product of parameter values and seeds",
		Long: `Run a scenario for every combination of the given parameter values and
seeds, in parallel (-j workers, each run single-threaded and deterministic),
and write one result directory per point under DIR/points/, an aggregate
with 95% confidence intervals across seeds, plots, report.md and report.html.
Without --param, the scenario's own sweep list is run (paper/r6-windows has
one); --param replaces that list.

Each finished point is written atomically. An interrupted sweep (Ctrl-C,
kill) resumes with --resume, running only the missing points. The outputs
of -j 1 and -j N are byte-identical.

Sharding (one sweep on many machines): --shard i/n runs the points with
index % n == i; without --shard, the shard is read from Slurm job arrays
(SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT) or Kubernetes Indexed Jobs
(JOB_COMPLETION_INDEX with CONSPIRATOR_SHARDS). 'conspirator report DIR
SHARD_DIR...' merges shard directories into one result.

On a cluster: --emit slurm -o DIR writes DIR/sweep.sbatch, a Slurm job array
with one task per shard (--shards, --throttle) that resumes into DIR, and a
README saying how to submit it, rerun failed tasks and merge; --emit k8s
writes a Kubernetes Indexed Job (generated, not tested on a live cluster).`,
		Example: `  conspirator sweep paper/r6-windows -j 2
  conspirator sweep paper/e2e --param datapath.host.background_load=0%,10%,20%,30%,40%,50%,60%,70%,80%,90% --seeds 3
  conspirator sweep my.yaml --param datapath.clients.count=1,2,4,8 --param datapath.request.batch=1,8 -j 2 -o out/sw
  conspirator sweep my.yaml --param datapath.clients.count=1,2,4,8 -o out/sw --resume
  conspirator sweep my.yaml --param datapath.clients.count=1,2,4,8 --seeds 5 --emit slurm --shards 8 --throttle 4 -o /scratch/sw`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if seeds < 1 {
				return usagef("--seeds %d: must be at least 1", seeds)
			}
			if err := e.check(cmd, outDir, shard); err != nil {
				return err
			}
			if e.emit != "" && !cmd.Flags().Changed("jobs") {
				jobs = 1 // one core per array task
			} else if !cmd.Flags().Changed("jobs") {
				if jobs, err = a.jobs(); err != nil {
					return err
				}
			}
			if jobs < 1 {
				return usagef("-j %d: must be at least 1", jobs)
			}
			// Load once up front: a bad scenario or --set fails before any
			// point runs, and every value of every parameter is checked.
			base, err := a.load(args[0], f)
			if err != nil {
				return err
			}
			// The user's --param flags, or else the scenario's own sweep.
			source := "--param"
			if len(params) == 0 {
				if len(base.Sweep) == 0 {
					return usagef("give at least one --param key=v1,v2,... (scenario %s has no sweep list of its own)", args[0])
				}
				params, source = base.Sweep, "sweep (the scenario's own list)"
			}
			ps, err := parseParams(source, params)
			if err != nil {
				return err
			}
			if err := sweep.CheckSize(ps, seeds); err != nil {
				return usageError{err}
			}
			for _, p := range ps {
				for _, v := range p.Values {
					if _, err := a.loadLate(args[0], f, source, []string{p.Key + "=" + v}); err != nil {
						return err
					}
				}
			}
			seedList := make([]uint64, seeds)
			for i := range seedList {
				seedList[i] = base.Seed + uint64(i)
			}
			if err := sweep.CheckParams(ps, seedList); err != nil {
				return usageError{err}
			}
			// What every point computes, recorded in sweep.json: a resume
			// or a merge over other inputs is refused, naming the keys.
			points := sweep.Expand(ps, seedList)
			inputs, err := a.sweepIdentity(args[0], f, source, base, ps, points)
			if err != nil {
				return err
			}
			dir := outDir
			if dir == "" {
				dir = filepath.Join(a.outRoot(), safeName(base.Name)+"-sweep")
			}
			if err := checkWritableParent(dir); err != nil {
				return err
			}
			if e.emit != "" {
				lock, err := lockDir(dir)
				if err != nil {
					return err
				}
				defer lock.Release()
				return a.emitBatch(e, args[0], f, ps, seeds, jobs, base, points, inputs, dir)
			}
			opts := sweep.Options{Dir: dir, Jobs: jobs, Resume: resume, Progress: a.stderr,
				Meta: sweepMeta(args[0], f.sets), Inputs: inputs}
			if isTerminal(a.stderr) {
				opts.IsTerminal = true
			}
			if shard != "" {
				if opts.Shard, opts.Shards, err = parseShard(shard); err != nil {
					return err
				}
			} else if i, n, ok, err := sweep.ShardFromEnv(a.env); err != nil {
				return usageError{err}
			} else if ok {
				opts.Shard, opts.Shards = i, n
			}
			// One writer per directory; the shards of one sweep write
			// together, each alone in its shard.
			var lock *dirlock.Lock
			if opts.Shards > 1 {
				lock, err = dirlock.Shard(dir, opts.Shard, opts.Shards)
			} else {
				lock, err = lockDir(dir)
			}
			if err != nil {
				return err
			}
			defer lock.Release()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			runPoint := func(ctx context.Context, p sweep.Point) (map[string][]byte, error) {
				sc, err := a.loadPoint(args[0], f, source, p)
				if err != nil {
					return nil, err
				}
				out, err := sim.Run(sc)
				if err != nil {
					return nil, fmt.Errorf("point %s: %w", p.ID, err)
				}
				return out.Files, nil
			}
			sum, err := sweep.Run(ctx, points, opts, runPoint)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "sweep %s: %d points in this shard, %d ran, %d already done\n", dir, sum.Total, sum.Ran, sum.Skipped)
			if !noReport && opts.Shards <= 1 {
				if err := renderAtomically(dir, "conspirator sweep"); err != nil {
					return fmt.Errorf("rendering the report: %w", err)
				}
				fmt.Fprintf(a.stdout, "report: %s\n", filepath.Join(dir, "report.md"))
			}
			if sum.Ran > 0 && opts.Shards <= 1 {
				if agg, err := reports.AggregateSweep(dir); err == nil {
					reports.WriteSweepHeadline(a.stdout, agg)
				}
			}
			return nil
		},
	}
	f.add(c)
	e.add(c)
	fl := c.Flags()
	fl.StringArrayVar(&params, "param", nil, "a swept key and its values, key=v1,v2,... (repeatable; the points are the cartesian product)")
	fl.IntVar(&seeds, "seeds", 1, "seeds per parameter combination (the scenario's seed, seed+1, ...)")
	fl.IntVarP(&jobs, "jobs", "j", 0, "points run at once (default $CONSPIRATOR_JOBS or all cores)")
	fl.StringVarP(&outDir, "output", "o", "", "sweep directory (default $CONSPIRATOR_OUT/<scenario>-sweep)")
	fl.BoolVar(&resume, "resume", false, "run only the points an interrupted sweep has not finished")
	fl.StringVar(&shard, "shard", "", "run only shard i of n (i/n, 0-based), e.g. --shard 2/8")
	fl.BoolVar(&noReport, "no-report", false, "skip the aggregate plots, report.md and report.html")
	return c
}

// loadPoint resolves the scenario of one sweep point: the sweep's
// scenario and flags, the point's seed, and its values (shown in messages
// as coming from source, --param or the scenario's sweep list).
func (a *app) loadPoint(scenarioArg string, f scenarioFlags, source string, p sweep.Point) (*scenarios.Scenario, error) {
	extra := make([]string, len(p.Params))
	for i, kv := range p.Params {
		extra[i] = kv.Key + "=" + kv.Value
	}
	pf := f
	pf.seed = strconv.FormatUint(p.Seed, 10)
	return a.loadLate(scenarioArg, pf, source, extra)
}

// sweepIdentity resolves every point's inputs and sets its digest
// (sim.InputsSHA256), and returns the inputs common to the points: the
// base scenario flattened, without its seed and swept keys, with the
// digest of each data file it reads.
func (a *app) sweepIdentity(scenarioArg string, f scenarioFlags, source string, base *scenarios.Scenario, ps []sweep.Param, points []sweep.Point) (map[string]string, error) {
	for i := range points {
		sc, err := a.loadPoint(scenarioArg, f, source, points[i])
		if err != nil {
			return nil, err
		}
		if points[i].Inputs, err = sim.InputsSHA256(sc); err != nil {
			return nil, err
		}
	}
	flat, err := sim.FlatInputs(base)
	if err != nil {
		return nil, err
	}
	delete(flat, "seed")
	for _, p := range ps {
		for k := range flat {
			if k == p.Key || strings.HasPrefix(k, p.Key+".") || strings.HasPrefix(k, p.Key+"[") {
				delete(flat, k)
			}
		}
	}
	files, err := sim.InputFiles(base)
	if err != nil {
		return nil, err
	}
	for _, fl := range files {
		flat["data file "+fl.Key+" sha256"] = fl.SHA256
		delete(flat, fl.Key) // the bytes count, not the path (an emitted task reads another)
	}
	return flat, nil
}

// parseParams reads --param key=v1,v2,... flags (or a scenario's sweep
// list, in the same form); source names them in messages.
func parseParams(source string, raw []string) ([]sweep.Param, error) {
	sp, err := scenarios.SweepParams(raw)
	if err != nil {
		return nil, usagef("%s: %v", source, err)
	}
	ps := make([]sweep.Param, len(sp))
	for i, p := range sp {
		ps[i] = sweep.Param{Key: p.Key, Values: p.Values}
	}
	return ps, nil
}

// parseShard reads "i/n".
func parseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, usagef("--shard %q: write i/n with 0 <= i < n, e.g. 0/4", s)
	}
	return i, n, nil
}

// isTerminal reports whether w is a terminal (then a progress bar is
// drawn; otherwise plain log lines).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
