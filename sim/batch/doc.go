// Package batch provides the files that run a sweep on a cluster scheduler:
// a Slurm job-array script and a Kubernetes Indexed Job manifest (one task
// per shard, each resuming into one shared sweep directory), a README that
// says how to submit and merge them, and MissingShards, which names the
// tasks to rerun after a failure.
//
// Layout of an emitted directory DIR (every task writes into DIR itself:
// points are written atomically, and sweep.json is written once, here,
// before any task starts):
//
//	DIR/sweep.json       the sweep's spec (written by the emitter)
//	DIR/scenario.yaml    the scenario, copied so no task depends on the submitter's working directory
//	DIR/batch.json       the shard count and scheduler (read by MissingShards)
//	DIR/sweep.sbatch     the Slurm job array (--emit slurm)
//	DIR/k8s-job.yaml     the Kubernetes Indexed Job (--emit k8s; generated, not tested on a live cluster)
//	DIR/README.md        how to submit, rerun and merge
//	DIR/logs/task-I.out  each Slurm task's stdout (.err: stderr)
//	DIR/points/ID/       one directory per finished point, as sim/sweep writes it
package batch
