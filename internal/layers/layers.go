// Package layers states the architecture's import order, the one the
// folders show: each package may import only packages of its own layer or
// below. TestImportOrder (go list) fails when an import breaks it.
//
//	0  internal/...                          helpers: atomic writes, golden files, suggestions
//	1  engine/...                            simulated time, events, queues, statistics
//	2  hw/...                                hardware models, parts, GPUs and MIG, units
//	3  workloads/...                         jobs and trace importers
//	4  policies/...                          scheduling policies over a snapshot
//	5  sim/datapath, sim/cluster, sim/alloc, sim/training
//	                                         the simulation models
//	6  scenarios, sim, sim/sweep, sim/batch, realhw/...
//	                                         assembly: scenario to run, sweeps, job arrays,
//	                                         real-hardware backends and calibration
//	7  reports                               tables, plots, report pages
//	8  cmd/..., bench/...                    the command line; benchmark tools
package layers

import "strings"

// Module is the module path the layers are written against.
const Module = "github.com/conspirator-sim/conspirator"

// order lists path prefixes (relative to Module) and their layer; the
// longest matching prefix wins.
var order = []struct {
	prefix string
	layer  int
}{
	{"internal", 0},
	{"engine", 1},
	{"hw", 2},
	{"workloads", 3},
	{"policies", 4},
	{"sim/datapath", 5}, {"sim/cluster", 5}, {"sim/alloc", 5}, {"sim/training", 5}, {"sim/llmserve", 5},
	{"scenarios", 6}, {"sim", 6}, {"realhw", 6},
	{"reports", 7},
	{"cmd", 8}, {"bench", 8},
}

// Of returns the layer of a package of the module, and false for a package
// outside it or one that no prefix covers (which TestImportOrder reports).
func Of(importPath string) (int, bool) {
	rel, ok := strings.CutPrefix(importPath, Module+"/")
	if !ok {
		return 0, false
	}
	best, layer := -1, 0
	for _, o := range order {
		if (rel == o.prefix || strings.HasPrefix(rel, o.prefix+"/")) && len(o.prefix) > best {
			best, layer = len(o.prefix), o.layer
		}
	}
	return layer, best >= 0
}
