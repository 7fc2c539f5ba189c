// Package naiveshare provides the "naive-share" policy, the paper's naive
// GPU-sharing baseline: first fit by GPU fraction with time-sharing.
//
// Exactly what it does:
//   - MIG-unaware: UsesMIG is false, so the simulator runs every GPU,
//     A100 and H100 included, as one device time-shared by fractions; a job
//     takes the fraction its option states (the trace's gpu_milli/1000, 1 for
//     a whole GPU) and jobs on one GPU may sum to at most 1.
//   - Heterogeneity-blind: it never looks at Option.Speed; GPUs are tried in
//     ID order (the order of the cluster's GPU list) and the first GPU where
//     an option fits wins, whatever its speed.
//   - Isolation: without MIG a GPU serves one tenant (a snapshot rule), so it
//     co-locates only jobs of the same tenant.
//   - No migration, no preemption: running jobs stay; pending jobs are tried
//     in snapshot order (arrival) and stay pending when nothing fits.
//
// Cost O(pending x GPUs x options) per call.
package naiveshare
