package batch

import (
	"fmt"
	"path/filepath"
	"strings"
)

// SlurmScript is the sbatch script of j: a job array with one task per
// shard (array index = shard index, so a task can be rerun alone with
// `sbatch --array=I`), at most Throttle at once, one log pair per task, and
// every task resuming into Dir. The text depends on j alone (no dates).
func SlurmScript(j Job) ([]byte, error) {
	if err := j.Validate(Slurm); err != nil {
		return nil, err
	}
	array := fmt.Sprintf("0-%d", j.Shards-1)
	if t := j.throttle(); t > 0 {
		array += fmt.Sprintf("%%%d", t)
	}
	script := filepath.Join(j.Dir, SlurmFile)
	logs := filepath.Join(j.Dir, LogDir)
	// The shard count is written here, not read from SLURM_ARRAY_TASK_COUNT:
	// a rerun of some tasks (sbatch --array=1,3) is an array of 2 tasks, but
	// its tasks are still shards 1 and 3 of all of them.
	before, after := j.taskArgs(j.Dir)
	cmd := fmt.Sprintf(`%s "${SLURM_ARRAY_TASK_ID}/%d" %s`, shellJoin(append([]string{j.Binary}, before...)), j.Shards, shellJoin(after))

	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w("#!/bin/bash")
	w("# A conspirator sweep as a Slurm job array, written by `conspirator sweep --emit slurm`")
	w("# (conspirator %s): %d points in %d tasks; task I runs the points with index %% %d == I.", j.Version, j.Points, j.Shards, j.Shards)
	w("#")
	w("#   submit:        sbatch %s", script)
	w("#   rerun tasks:   sbatch --array=I,J,... %s   (finished points are kept)", script)
	w("#   merge/report:  %s report %s", j.Binary, j.Dir)
	w("#")
	w("# Add the lines your cluster needs (--partition, --time, --account, --mem) below.")
	w("#SBATCH --job-name=%s", j.jobName())
	w("#SBATCH --array=%s", array)
	w("#SBATCH --ntasks=1")
	w("#SBATCH --cpus-per-task=%d", j.Jobs)
	w("#SBATCH --chdir=%s", j.Dir)
	// %A_%a: the array job and the task, so that a rerun of a task
	// writes new logs beside the failed attempt's instead of over them.
	w("#SBATCH --output=%s", filepath.Join(logs, "task-%A_%a.out"))
	w("#SBATCH --error=%s", filepath.Join(logs, "task-%A_%a.err"))
	w("")
	w("set -euo pipefail")
	w(`: "${SLURM_ARRAY_TASK_ID:?submit this script with sbatch: each run is one task of a job array}"`)
	w("cd %s", shellQuote(j.Dir))
	w("# Only the flags below define the sweep: scenario keys in the submitter's")
	w("# environment (CONSPIRATOR_*) would change the runs but not sweep.json.")
	w("for v in $(compgen -e); do case $v in CONSPIRATOR_*) unset \"$v\" ;; esac; done")
	w("exec %s", cmd)
	return []byte(b.String()), nil
}
