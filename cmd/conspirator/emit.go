package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim"
	"github.com/conspirator-sim/conspirator/sim/batch"
	"github.com/conspirator-sim/conspirator/sim/cluster"
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
		if text, err = scenarios.ReadFile(scenarioArg); err != nil {
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
	// Every data file a point reads, where the tasks will read it: they run
	// in DIR, not here, so a relative path would point elsewhere.
	inputSets, params, resolved, err := a.resolveEmitInputs(sched, abs, scenarioArg, f, base, params)
	if err != nil {
		return err
	}
	var sweepArgs []string
	for _, p := range params {
		sweepArgs = append(sweepArgs, "--param", p.Key+"="+strings.Join(p.Values, ","))
	}
	sweepArgs = append(sweepArgs, "--seeds", fmt.Sprint(seeds))
	for _, s := range append(append([]string{}, f.sets...), inputSets...) {
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
		Jobs: jobs, Points: len(points), Version: sim.Version, Image: e.image, Command: again, Inputs: resolved}
	if err := j.Validate(sched); err != nil {
		return usageError{err}
	}
	// The tasks run `sweep scenario.yaml` in dir: the same identity here.
	taskSets := append(append([]string{}, f.sets...), inputSets...) // as the tasks' --set
	if _, err := batch.Emit(sched, j, text, points, sweepMeta(batch.ScenarioFile, taskSets), inputs); err != nil {
		return err
	}
	if sched == batch.K8s {
		// The pods read copies on the volume, beside the sweep.
		for _, in := range resolved {
			dst := filepath.Join(abs, batch.InputsDir, filepath.Base(in.Task))
			if err := copyInput(in.Given, dst); err != nil {
				return fmt.Errorf("--emit k8s: %s: copying %s into %s: %w", in.Key, in.Given, filepath.Dir(dst), err)
			}
		}
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

// resolveEmitInputs finds every data file the sweep's points read (the
// base scenario's, and each value of a swept file key) and says where the
// tasks read it: for Slurm its absolute path, checked to exist (the tasks
// share this file system); for Kubernetes a copy under DIR/inputs, read at
// /sweep/inputs in the pod. It returns --set values for the base's files,
// the params with swept paths rewritten, and the list for the README. A
// file that is not there is an error naming its key, the path given, the
// path it resolved to and the working directory, all of them at once.
func (a *app) resolveEmitInputs(sched batch.Scheduler, dir, scenarioArg string, f scenarioFlags, base *scenarios.Scenario, params []sweep.Param) (sets []string, out []sweep.Param, inputs []batch.Input, err error) {
	wd, _ := os.Getwd()
	var missing []string
	resolve := func(key, given string) string {
		abs, err := filepath.Abs(given)
		if err != nil {
			abs = given
		}
		if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, fmt.Sprintf("%s: file %s not found (resolved to %s from the working directory %s); %s", key, given, abs, wd, cluster.Hint(key, given)))
			return ""
		} else if err != nil {
			missing = append(missing, fmt.Sprintf("%s: %s (resolved to %s from the working directory %s): %v", key, given, abs, wd, err))
			return ""
		}
		task := abs
		if sched == batch.K8s {
			name := safeName(strings.ReplaceAll(key, ".", "-")) + "-" + filepath.Base(abs)
			task = batch.K8sMount + "/" + batch.InputsDir + "/" + name
		}
		inputs = append(inputs, batch.Input{Key: key, Given: abs, Task: task})
		return task
	}
	swept := map[string]bool{}
	for _, p := range params {
		swept[p.Key] = true
	}
	keys, paths := sim.DataFiles(base)
	for i, k := range keys {
		if swept[k] {
			continue
		}
		if t := resolve(k, paths[i]); t != "" {
			sets = append(sets, k+"="+t)
		}
	}
	out = make([]sweep.Param, len(params))
	for pi, p := range params {
		out[pi] = sweep.Param{Key: p.Key, Values: append([]string{}, p.Values...)}
		for vi, v := range p.Values {
			sc, err := a.loadLate(scenarioArg, f, "--param", []string{p.Key + "=" + v})
			if err != nil {
				return nil, nil, nil, err
			}
			ks, ps := sim.DataFiles(sc)
			if at := slices.Index(ks, p.Key); at >= 0 {
				if t := resolve(p.Key, ps[at]); t != "" {
					out[pi].Values[vi] = t
				}
			}
		}
	}
	if len(missing) > 0 {
		return nil, nil, nil, usagef("--emit %s: the array's tasks read these files where they run, and they are not there:\n  %s\ngive paths that exist (on the cluster's shared file system), with --set KEY=PATH", sched, strings.Join(missing, "\n  "))
	}
	return sets, out, inputs, nil
}

// copyInput puts a copy of a data file into a Kubernetes sweep's inputs
// folder, never a hard link: the pods (and the user) may edit the copy,
// and the user's own data must not change with it. A file already there
// with the same bytes is kept, unless it is the source itself (a link an
// earlier version made), which is replaced by a copy.
func copyInput(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if same, err := sameBytes(src, dst); err == nil && same && !sameInode(src, dst) {
		return nil
	}
	return atomicfs.CopyFile(src, dst)
}

// sameInode says whether a and b are one file (hard links of each other).
func sameInode(a, b string) bool {
	x, err := os.Stat(a)
	if err != nil {
		return false
	}
	y, err := os.Stat(b)
	return err == nil && os.SameFile(x, y)
}

func sameBytes(a, b string) (bool, error) {
	x, err := os.ReadFile(a)
	if err != nil {
		return false, err
	}
	y, err := os.ReadFile(b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(x, y), nil
}
