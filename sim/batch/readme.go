package batch

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Readme is the README.md written beside the script or manifest: what the
// directory holds, how to submit, find and rerun failed tasks, merge, and
// run the same sweep on one machine.
func Readme(s Scheduler, j Job) []byte {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	// Merging and local runs happen where the emit command ran: for Slurm
	// that is the shared binary, for Kubernetes not the one in the image.
	here := j.Binary
	if s == K8s {
		here = "conspirator"
		if len(j.Command) > 0 {
			here = j.Command[0]
		}
	}
	report := fmt.Sprintf("%s report %s", shellQuote(here), shellQuote(j.Dir))
	before, _ := j.taskArgs(j.Dir)
	local := shellJoin(append([]string{here}, before[:len(before)-5]...)) // without -j ... --shard
	emitAgain := "the `conspirator sweep ... --emit` command that wrote this directory"
	if len(j.Command) > 0 {
		emitAgain = "cd " + shellQuote(j.Dir) + " && " + shellJoin(j.Command)
	}
	example := strconv.Itoa(j.Shards - 1)
	if j.Shards >= 3 {
		example = "0,2"
	}

	inputs := func() {
		if len(j.Inputs) == 0 {
			return
		}
		w("")
		w("## Data files")
		w("")
		if s == K8s {
			w("The points read these files, copied into `%s/` of this directory; the pods", InputsDir)
			w("read them there, so copy `%s/` onto the volume with the rest:", InputsDir)
		} else {
			w("The points read these files by absolute path: they must stay there, readable")
			w("from every node (a shared file system):")
		}
		w("")
		for _, in := range j.Inputs {
			if in.Task == in.Given {
				w("- `%s`: `%s`", in.Key, in.Task)
			} else {
				w("- `%s`: `%s` (a copy of `%s`)", in.Key, in.Task, in.Given)
			}
		}
	}
	switch s {
	case Slurm:
		script := filepath.Join(j.Dir, SlurmFile)
		w("# conspirator sweep: Slurm job array")
		w("")
		w("Written by `conspirator sweep --emit slurm` (conspirator %s): %d points in", j.Version, j.Points)
		w("%d array tasks (%s). Task I runs the points with index %% %d == I, %d at a", j.Shards, throttleText(j), j.Shards, j.Jobs)
		w("time, and writes each finished point into `points/` of this directory.")
		w("")
		w("## Submit")
		w("")
		w("    sbatch %s", script)
		w("    squeue --me                     # running and pending tasks")
		w("")
		w("Task I of array job J writes `logs/task-J_I.out` and `.err` (a rerun writes")
		w("new ones beside the failed attempt's). Add your cluster's")
		w("`#SBATCH` lines (partition, time limit, account) to `%s` first.", SlurmFile)
		w("")
		w("## A task failed")
		w("")
		w("Every finished point is kept; a task that runs again skips them (`--resume`).")
		w("To list the tasks with unfinished points, run the emit command again (it")
		w("rewrites the same files and prints the `sbatch --array=...` line to submit):")
		w("")
		w("    %s", emitAgain)
		w("")
		w("and submit only those tasks, e.g. tasks %s:", example)
		w("")
		w("    sbatch --array=%s %s", example, script)
		w("")
		w("The array index is the shard index, so a rerun of task I is shard I of %d.", j.Shards)
	case K8s:
		w("# conspirator sweep: Kubernetes Indexed Job")
		w("")
		w("Written by `conspirator sweep --emit k8s` (conspirator %s): %d points in", j.Version, j.Points)
		w("%d indexed pods (%s). Pod I (`JOB_COMPLETION_INDEX`) runs the points with", j.Shards, throttleText(j))
		w("index %% %d == I and writes each finished point into `points/`.", j.Shards)
		w("")
		w("**Generated, not tested against a live cluster** (the Slurm script is tested")
		w("on a real single-node Slurm in conspirator-sim's CI).")
		w("")
		w("## Submit")
		w("")
		w("1. Build an image holding this conspirator version at `%s` and set it", j.Binary)
		w("   in `%s` (the placeholder is `%s`).", K8sFile, DefaultImage)
		w("2. Create a ReadWriteMany PersistentVolumeClaim `%s` and copy this", ClaimName)
		w("   directory onto it (the pods mount it at `%s`).", K8sMount)
		w("3. `kubectl apply -f %s`; `kubectl get pods -l app.kubernetes.io/name=conspirator`.", K8sFile)
		w("")
		w("A failed pod is retried, twice per index (`backoffLimitPerIndex`,")
		w("Kubernetes 1.29 or later), and resumes: finished points are kept. A pod")
		w("that exits 2 (a configuration error, which a retry repeats) fails its")
		w("index at once (`podFailurePolicy`); the Job stops when %d indices have", max(1, j.Shards/4))
		w("failed (`maxFailedIndexes`) and is removed a week after it finished")
		w("(`ttlSecondsAfterFinished`; the results are on the volume). Copy")
		w("the volume back into this directory when the Job completes.")
		w("To list the indices with unfinished points, run the emit command again:")
		w("")
		w("    %s", emitAgain)
	}
	w("")
	w("## Merge and report")
	w("")
	w("    %s", report)
	w("")
	w("checks that every point is done and writes the aggregate and `report.md`.")
	w("")
	w("## The same sweep on one machine")
	w("")
	w("    cd %s && %s -j 8 -o /some/other/dir", shellQuote(j.Dir), local)
	w("")
	w("writes the same `sweep.json` and byte-identical `points/` at any `-j`.")
	w("")
	w("Files: `%s` (the sweep's points), `%s` (the scenario, copied so no task", "sweep.json", ScenarioFile)
	if len(j.Inputs) > 0 {
		w("depends on where it was submitted from; its data files, below, are given")
		w("to the tasks resolved), `%s` (the shard count).", StateFile)
	} else {
		w("depends on where it was submitted from), `%s` (the shard count).", StateFile)
	}
	inputs()
	return []byte(b.String())
}

func throttleText(j Job) string {
	if t := j.throttle(); t > 0 {
		return fmt.Sprintf("at most %d at once", t)
	}
	return "no limit on how many run at once"
}
