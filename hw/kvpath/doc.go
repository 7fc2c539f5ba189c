// Package kvpath gives the cost of moving one LLM request's KV cache from a
// prefill GPU to a decode GPU over the paper's four data paths between
// servers (tcp, gpudirect, host-rdma, conspirator) and over NVLink inside a
// server, as a Plan: the resources the bytes cross with their capacities,
// a per-flow cap, the CPU work the transfer costs and the fixed latency.
//
// A Plan answers two questions. Alone gives one transfer's time in closed
// form, with nothing else in the system. For many concurrent transfers a
// caller builds one engine/resource.Network link per resource instance
// (per server, or per GPU where Resource.PerGPU says so) with the hop's
// capacity, starts one flow per transfer over its hops with the Plan's cap,
// and ends the transfer at max(flow end, start + Control) + Latency: the
// links are shared max-min fairly, the control work is not (it runs on its
// own thread or Arm core, concurrently with the data).
//
// Figures follow the grades of package hw (V vendor, M measured, A
// anecdotal, D derived, E estimate); Figures lists the ones this package
// adds to hw's catalog, and Default builds a server from both.
package kvpath
