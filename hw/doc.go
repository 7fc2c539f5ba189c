// Package hw provides the hardware models of the data path on top of the
// engine: network links, the host's TCP stack and RDMA verbs costs, PCIe and
// DMA engines, a host CPU shared with background load, a SmartNIC (SoC cores,
// on-card buffer, DMA engine) and GPU instances, plus a catalog of named
// parts whose every default cites its source and grade.
//
// hw takes plain SI values (float64 bytes and bytes per second,
// engine.Time durations) and never imports the scenario layer. Grades in
// comments follow ../shared/reference/hardware.md: V vendor spec, M
// published measurement, A anecdotal measurement, S secondary summary, D
// derived here by arithmetic from sourced numbers, E estimate (the reasoning
// is given). Provenance returns the same grades as data.
package hw
