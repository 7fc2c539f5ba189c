// Package workloads provides the Job type, the unit of demand that the
// cluster simulation schedules: one gang of GPU shares with an arrival time
// and a run time, imported from a real trace (see workloads/trace) or
// synthesised from one.
package workloads
