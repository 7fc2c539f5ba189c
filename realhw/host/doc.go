// Package host provides the host backend of realhw: real TCP over loopback
// (127.0.0.1 only) with real payloads, memcpy bandwidth, a background CPU
// load generator (a separate process with one pinned worker per core, see
// StartLoad), per-thread CPU time from the kernel's accounting, and the
// TCP request path run for real with per-stage times. It needs only Linux.
package host
