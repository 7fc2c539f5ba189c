// Package engine provides the deterministic discrete-event core of
// conspirator-sim: simulated time in int64 nanoseconds, a pending-event set
// behind a small interface, scheduling and cancelling callbacks, and named,
// seeded random streams. The pending-event set has interchangeable
// implementations (binary heap, 4-ary heap, Brown's calendar queue, a radix
// heap, and the default that switches from the calendar queue to the radix
// heap at scale) that give the identical event order, so choosing one only
// changes speed.
//
// The engine does no I/O, never reads the wall clock and starts no
// goroutines: one simulation runs on one goroutine, so the same inputs give
// the same event order bit for bit. Parallelism belongs to the caller, across
// independent runs.
package engine
