// Package stats provides the statistics primitives that simulation models
// record into: a Tally of per-event observations (waiting times, latencies)
// with exact quantiles, a TimeWeighted average of a piecewise-constant value
// over simulated time (queue length, busy servers), and confidence intervals
// over independent replications or batch means.
//
// Everything here is deterministic and does no I/O. Empty inputs give NaN,
// never a panic, so that a model that observed nothing reports "no data"
// rather than a misleading zero.
package stats
