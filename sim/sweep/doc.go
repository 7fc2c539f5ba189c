// Package sweep provides the sweep runner: it expands parameters and seeds
// into points, runs them in parallel across workers (or across cluster
// shards), writes each point's files atomically into its own directory, can
// resume an interrupted sweep, merges shard directories and aggregates a
// metric across seeds into means with confidence intervals.
//
// The runner knows nothing about the simulations: a point is a list of
// key/value parameters and a seed, and a run is a function from a point to
// named files. Because each run is deterministic and nothing the runner
// writes depends on timing or on which worker ran a point, a sweep directory
// is byte-identical at any -j, sharded or not.
//
// Layout of a sweep directory:
//
//	DIR/sweep.json          the spec: meta, parameters, seeds, every point
//	DIR/points/ID/...       one directory per finished point
//	DIR/points/ID/done      written last: a manifest (sha256 and name of each file)
//	DIR/points/.tmp-ID/     a point being written; never looks complete
package sweep
