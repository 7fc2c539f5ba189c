package sweep

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
)

var syscallENOTDIR = syscall.ENOTDIR

func checkShard(i, n int) error {
	if n < 1 {
		return fmt.Errorf("sweep: %d shards: the shard count must be at least 1", n)
	}
	if i < 0 || i >= n {
		return fmt.Errorf("sweep: shard %d of %d: the shard index must be in 0..%d", i, n, n-1)
	}
	return nil
}

// ShardCountEnv names the environment variable that gives the shard count
// on Kubernetes, where an Indexed Job sets JOB_COMPLETION_INDEX but not the
// number of completions (set it to the Job's .spec.completions).
const ShardCountEnv = "CONSPIRATOR_SHARDS"

// ShardFromEnv reads this process's shard from a batch system's environment
// (env as os.Environ gives it):
//
//   - Slurm job arrays: SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT,
//     with SLURM_ARRAY_TASK_MIN (default 0) and SLURM_ARRAY_TASK_STEP
//     (default 1), so --array=1-8 or --array=0-14:2 number shards from 0.
//   - Kubernetes Indexed Jobs: JOB_COMPLETION_INDEX and CONSPIRATOR_SHARDS.
//
// ok is false when neither is set. Both set, missing counts, non-numbers
// and indices out of range are errors that name the variable.
func ShardFromEnv(env []string) (i, n int, ok bool, err error) {
	vars := map[string]string{}
	for _, kv := range env {
		if k, v, found := strings.Cut(kv, "="); found {
			vars[k] = v
		}
	}
	_, slurm := vars["SLURM_ARRAY_TASK_ID"]
	_, k8s := vars["JOB_COMPLETION_INDEX"]
	switch {
	case slurm && k8s:
		return 0, 0, false, fmt.Errorf("sweep: both SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX are set: unset one, or pass --shard and --shards")
	case slurm:
		i, n, err = slurmShard(vars)
	case k8s:
		i, n, err = k8sShard(vars)
	default:
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, err
	}
	return i, n, true, nil
}

func envInt(vars map[string]string, key string, def int, required bool) (int, error) {
	v, ok := vars[key]
	if !ok {
		if required {
			return 0, fmt.Errorf("sweep: %s is not set", key)
		}
		return def, nil
	}
	x, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("sweep: %s=%q is not an integer", key, v)
	}
	return x, nil
}

func slurmShard(vars map[string]string) (int, int, error) {
	id, err := envInt(vars, "SLURM_ARRAY_TASK_ID", 0, true)
	if err != nil {
		return 0, 0, err
	}
	n, err := envInt(vars, "SLURM_ARRAY_TASK_COUNT", 0, true)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: it is needed with SLURM_ARRAY_TASK_ID (a Slurm job array sets both; otherwise pass --shards)", err)
	}
	lo, err := envInt(vars, "SLURM_ARRAY_TASK_MIN", 0, false)
	if err != nil {
		return 0, 0, err
	}
	step, err := envInt(vars, "SLURM_ARRAY_TASK_STEP", 1, false)
	if err != nil {
		return 0, 0, err
	}
	if step < 1 {
		return 0, 0, fmt.Errorf("sweep: SLURM_ARRAY_TASK_STEP=%d must be at least 1", step)
	}
	if id < lo || (id-lo)%step != 0 {
		return 0, 0, fmt.Errorf("sweep: SLURM_ARRAY_TASK_ID=%d is not in the array %d, %d, ... (SLURM_ARRAY_TASK_MIN=%d, STEP=%d)", id, lo, lo+step, lo, step)
	}
	i := (id - lo) / step
	if n < 1 || i >= n {
		return 0, 0, fmt.Errorf("sweep: SLURM_ARRAY_TASK_ID=%d is task %d of SLURM_ARRAY_TASK_COUNT=%d: the count must be at least 1 and cover the task", id, i, n)
	}
	return i, n, nil
}

func k8sShard(vars map[string]string) (int, int, error) {
	i, err := envInt(vars, "JOB_COMPLETION_INDEX", 0, true)
	if err != nil {
		return 0, 0, err
	}
	n, err := envInt(vars, ShardCountEnv, 0, true)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: JOB_COMPLETION_INDEX=%d is set but the shard count is unknown; set %s to the Job's .spec.completions or pass --shards", err, i, ShardCountEnv)
	}
	if n < 1 {
		return 0, 0, fmt.Errorf("sweep: %s=%d: the shard count must be at least 1", ShardCountEnv, n)
	}
	if i < 0 || i >= n {
		return 0, 0, fmt.Errorf("sweep: JOB_COMPLETION_INDEX=%d is outside 0..%d (%s=%d)", i, n-1, ShardCountEnv, n)
	}
	return i, n, nil
}
