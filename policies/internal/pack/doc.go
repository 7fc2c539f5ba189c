// Package pack provides the working state that the heuristic placement
// policies share: a mutable view of a snapshot's GPUs (fraction sums and
// tenants of non-MIG GPUs, MIG layouts as slice masks), legality checks for
// adding a job with one of its options, and the assembly of a Decision.
//
// A View starts empty (no job placed); a policy keeps the running jobs it
// does not move (Keep) and then places pending ones (Place). Every check
// mirrors a rule of snapshot.CheckDecision, so a decision built only through
// a View passes it; the policies' tests verify that.
//
// Cost: building a View is O(GPUs + jobs) of the snapshot; a MIG check is
// O(starts) with bit masks, a non-MIG check O(1).
package pack
