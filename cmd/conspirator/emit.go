package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim"
	"github.com/conspirator-sim/conspirator/sim/batch"
	"github.com/conspirator-sim/conspirator/sim/sweep"
	"github.com/spf13/cobra"
)

// emitFlags are sweep's flags for writing a batch array instead of running.
type emitFlags struct {
	emit           string
	shards         int
	throttle       int
	binary, image  string
	shardsExplicit bool
}

func (e *emitFlags) add(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&e.emit, "emit", "", "write the files that run the sweep on a cluster into -o DIR instead of running it: slurm (a job array) or k8s (an Indexed Job)")
	fl.IntVar(&e.shards, "shards", 0, fmt.Sprintf("with --emit: the number of array tasks (default one per point, at most %d)", batch.MaxDefaultShards))
	fl.IntVar(&e.throttle, "throttle", 0, "with --emit: the most tasks running at once (0: no limit)")
	fl.StringVar(&e.binary, "binary", "", "with --emit: the conspirator binary the tasks run (default this executable; for k8s "+batch.DefaultK8sBinary+" in the image)")
	fl.StringVar(&e.image, "image", "", "with --emit k8s: the container image holding the binary (default the placeholder "+batch.DefaultImage+")")
}

// check rejects emit-only flags without --emit and flags that contradict it.
func (e *emitFlags) check(c *cobra.Command, outDir, shard string) error {
	e.shardsExplicit = c.Flags().Changed("shards")
	if e.emit == "" {
		for _, name := range []string{"shards", "throttle", "binary", "image"} {
			if c.Flags().Changed(name) {
				return usagef("--%s only applies with --emit slurm or --emit k8s", name)
			}
		}
		return nil
	}
	if _, err := batch.ParseScheduler(e.emit); err != nil {
		return usageError{err}
	}
	switch {
	case outDir == "":
		return usagef("--emit %s needs -o DIR: the directory on the cluster's shared file system that the tasks write into", e.emit)
	case shard != "":
		return usagef("--emit %s with --shard %s: the emitted array runs every shard; drop --shard", e.emit, shard)
	case e.shardsExplicit && e.shards < 1:
		return usagef("--shards %d: the number of array tasks must be at least 1", e.shards)
	case c.Flags().Changed("image") && e.emit != string(batch.K8s):
		return usagef("--image only applies with --emit k8s")
	}
	return nil
}

// emitBatch writes the batch files of a sweep into dir (see sim/batch) and
// says what to submit: the whole array, the tasks with unfinished points,
// or nothing.
func (a *app) emitBatch(e emitFlags, scenarioArg string, f scenarioFlags, params []sweep.Param, seeds, jobs int, base *scenarios.Scenario, points []sweep.Point, inputs map[string]string, dir string) error {
	sched, _ := batch.ParseScheduler(e.emit)
	for _, kv := range scenarioEnv(a.env) {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "CONSPIRATOR_") {
			return usagef("%s is set: the array's tasks do not see this environment; pass it as --set key=value instead", name)
		}
	}
	// The tasks read a copy of the scenario in DIR, where a profile path
	// relative to the original file would point elsewhere.
	if base.Calibration != "" && !filepath.IsAbs(base.Calibration) {
		return usagef("calibration: %s is relative to %s, but the array's tasks read a copy of the scenario in -o DIR: give the profile's absolute path (in the file, or --set calibration=/abs/%s)", base.Calibration, scenarioArg, filepath.Base(base.Calibration))
	}
	// The scenario text, as Load resolves the name: a built-in first.
	text, err := scenarios.Show(scenarioArg)
	if err != nil {
		if text, err = os.ReadFile(scenarioArg); err != nil {
			return usagef("reading scenario %s: %v", scenarioArg, err)
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return usagef("-o %s: %v", dir, err)
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this executable (give --binary): %w", err)
	}
	bin := e.binary
	if bin == "" {
		bin = self
		if sched == batch.K8s {
			bin = batch.DefaultK8sBinary
		}
	}
	var sweepArgs []string
	for _, p := range params {
		sweepArgs = append(sweepArgs, "--param", p.Key+"="+strings.Join(p.Values, ","))
	}
	sweepArgs = append(sweepArgs, "--seeds", fmt.Sprint(seeds))
	for _, s := range f.sets {
		sweepArgs = append(sweepArgs, "--set", s)
	}
	if f.seed != "" {
		sweepArgs = append(sweepArgs, "--seed", f.seed)
	}
	shards := e.shards
	if !e.shardsExplicit {
		shards = min(len(points), batch.MaxDefaultShards)
	}
	again := append([]string{self, "sweep", batch.ScenarioFile}, sweepArgs...)
	again = append(again, "--emit", e.emit, "--shards", fmt.Sprint(shards), "--throttle", fmt.Sprint(e.throttle), "-j", fmt.Sprint(jobs), "--binary", bin)
	if e.image != "" {
		again = append(again, "--image", e.image)
	}
	again = append(again, "-o", abs)
	j := batch.Job{Name: base.Name, Binary: bin, Dir: abs, SweepArgs: sweepArgs, Shards: shards, Throttle: e.throttle,
		Jobs: jobs, Points: len(points), Version: sim.Version, Image: e.image, Command: again}
	if err := j.Validate(sched); err != nil {
		return usageError{err}
	}
	// The tasks run `sweep scenario.yaml` in dir: the same identity here.
	if _, err := batch.Emit(sched, j, text, points, sweepMeta(batch.ScenarioFile, f.sets), inputs); err != nil {
		return err
	}
	missing, err := batch.MissingShards(abs)
	if err != nil {
		return err
	}
	file := filepath.Join(abs, batch.SlurmFile)
	if sched == batch.K8s {
		file = filepath.Join(abs, batch.K8sFile)
	}
	fmt.Fprintf(a.stdout, "wrote %s (%d points in %d tasks) and %s\n", file, len(points), shards, filepath.Join(abs, batch.ReadmeFile))
	switch {
	case len(missing) == 0:
		fmt.Fprintf(a.stdout, "all %d points are done: %s report %s\n", len(points), self, abs)
	case sched == batch.K8s && len(missing) == shards:
		fmt.Fprintf(a.stdout, "apply (after setting the image and the volume, see README.md): kubectl apply -f %s\n", file)
	case sched == batch.K8s:
		fmt.Fprintf(a.stdout, "indices with unfinished points: %s\n", batch.ArrayList(missing))
	case len(missing) == shards:
		fmt.Fprintf(a.stdout, "submit: sbatch %s\n", file)
	default:
		fmt.Fprintf(a.stdout, "rerun the %d tasks with unfinished points: sbatch --array=%s %s\n", len(missing), batch.ArrayList(missing), file)
	}
	return nil
}

// sweepMeta is the identity a sweep records in sweep.json beyond its
// points; a run and an emitted array of the same sweep must agree on it.
func sweepMeta(scenarioArg string, sets []string) map[string]string {
	return map[string]string{"scenario": scenarioArg, "sets": strings.Join(sets, "\n"), "version": sim.Version}
}
