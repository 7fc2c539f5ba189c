// Package resource provides generic queueing resources for models built on
// the engine: a FIFO multi-server Queue, a processor-sharing PS server with
// a changeable capacity, a Bandwidth link shared max-min fairly among flows,
// and a capacity Pool with FIFO waiters. Each keeps its own statistics,
// which a model that reads none of them turns off with StopStats.
//
// These live beside the engine rather than in it, and below hw/, because
// they are textbook queueing models with no hardware knowledge: a HostCPU is
// a PS with background load, a network link or PCIe lane is a Bandwidth, a
// SmartNIC buffer is a Pool. Keeping them out of package engine leaves the
// core minimal (time, events, random streams) and lets them be validated on
// their own against closed forms (M/M/1, M/M/c, M/D/1, M/M/1-PS).
//
// Callbacks run on the simulator's goroutine, from events; a callback may
// submit more work to the same resource. Durations handed to a resource are
// engine.Time; amounts of work are float64 in the resource's own units
// (core-seconds, bytes). Statistics accessors return pointers into the
// resource: read them, do not modify them.
package resource
