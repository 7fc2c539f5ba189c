// Package pack provides the working state that the heuristic placement
// policies share: a mutable view of a cluster's GPUs (fraction sums and
// tenants of non-MIG GPUs, MIG layouts as slice masks), its servers' CPU
// and memory, its jobs with their placements, legality checks for adding
// a job with one of its options, and the assembly of a decision.
//
// A policy is one decide function on a View. Decide runs it on a view made
// from a snapshot for one call (the running jobs where they run, the
// pending ones waiting in snapshot order), which is the policy's
// definition; a Session runs it on one view kept for a whole replay and
// brought up to date by the simulator's events (arrivals, completions,
// CPU-only pods), and hands back only what changed. The same function on
// the same state gives the same decision either way; the simulator checks
// so at every call when asked (cluster.verify_decisions).
//
// Every check mirrors a rule of snapshot.CheckDecision, so a decision
// built only through a View passes it; the policies' tests verify that.
//
// Cost: a view made from a snapshot is O(GPUs + jobs) of the snapshot; a
// session's call is O(pending jobs) plus what the policy looks at. A MIG
// check is O(starts) with bit masks, a non-MIG check O(1). Candidates
// (every GPU in use and one empty GPU per model and server) is kept up to
// date in place; CandidatesFor answers from an index of free capacity in
// O(log GPUs) per option and model, for policies whose score depends on a
// GPU only through its model, whether it is empty and its free share.
package pack
