package cluster

// The cluster a seed replays on: its GPU types, GPUs and servers, from a
// node list or the configured counts.

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
	"github.com/conspirator-sim/conspirator/workloads/trace"
)

// gpuType is one GPU model present in the cluster.
type gpuType struct {
	name  string
	spec  gpu.Spec
	count int
	rel   float64 // whole-GPU RelSpeed of the speed model
	// Views of the model for policies that use MIG and for those that
	// run the GPU whole.
	migModel, wholeModel snapshot.GPUModel
}

// clusterGPU is one GPU of the cluster.
type clusterGPU struct {
	typ int // index into types
	srv int // index into the servers
}

// clusterServer is one server: its GPUs are consecutive, first .. first+n-1.
// CPU and memory 0 are not modelled.
type clusterServer struct {
	cpu, mem int64
	first, n int
}

// buildCluster returns one seed's cluster: the GPU types (sorted by name)
// and the GPUs in ID order, from the node list readNodes read (in the
// seed's order, sampled by node_fraction) or from cfg.GPUs, and the node
// list's report completed with the servers left out (nil without one).
func buildCluster(cfg Config, listed []trace.Node, read *InputReport, seed uint64, tm gpu.TraceTypeMap) ([]gpuType, []clusterGPU, []clusterServer, *InputReport, error) {
	var names []string
	var servers []clusterServer
	addServer := func(name string, n int, cpu, mem int64) {
		servers = append(servers, clusterServer{cpu: cpu, mem: mem, first: len(names), n: n})
		for range n {
			names = append(names, name)
		}
	}
	var rep *InputReport
	if read != nil {
		ir := *read
		ir.ByKind = maps.Clone(read.ByKind)
		ir.First = slices.Clone(read.First)
		rep = &ir
		nodes := slices.Clone(listed)
		if cfg.NodeOrder == NodeOrderSeeded {
			slices.SortStableFunc(nodes, func(a, b trace.Node) int { return strings.Compare(a.Name, b.Name) })
			rs := engine.NewStream(seed, "cluster/node-order")
			for i := len(nodes) - 1; i > 0; i-- {
				j := rs.IntN(i + 1)
				nodes[i], nodes[j] = nodes[j], nodes[i]
			}
		}
		keep := nodesKept(nodes, cfg.NodeFraction, tm)
		if share, ok, _ := fastShare(cfg.FastShare); ok { // checked by Validate
			var err error
			if keep, err = nodesKeptShare(cfg, nodes, share, tm); err != nil {
				return nil, nil, nil, nil, err
			}
		}
		for i, n := range nodes {
			if !keep[i] {
				ir.Used--
				ir.Rejected++
				if ir.ByKind == nil {
					ir.ByKind = map[string]int{}
				}
				ir.ByKind["not sampled"]++
				continue
			}
			if n.NumGPU == 0 || n.GPUType == "" {
				// A CPU-only node hosts no GPU job: counted, not silent.
				ir.Used--
				ir.Rejected++
				if ir.ByKind == nil {
					ir.ByKind = map[string]int{}
				}
				ir.ByKind["no GPU"]++
				if len(ir.First) < maxReportedRows {
					ir.First = append(ir.First, trace.Rejection{Row: n.Row, Column: "gpu", Kind: "no GPU", Reason: "node " + n.Name + " has no GPU: it hosts no GPU job"})
				}
				continue
			}
			name, err := resolveType(n.GPUType, tm)
			if err != nil {
				return nil, nil, nil, nil, &InputError{fmt.Errorf("cluster.nodes %s row %d: %w", cfg.Nodes, n.Row, err)}
			}
			if n.NumGPU > MaxGPUsPerServer {
				return nil, nil, nil, nil, &InputError{fmt.Errorf("cluster.nodes %s row %d, column gpu: %d GPUs on one server; at most %d fit a server", cfg.Nodes, n.Row, n.NumGPU, MaxGPUsPerServer)}
			}
			addServer(name, n.NumGPU, int64(n.CPUMilli), n.MemoryMiB)
		}
		if len(names) == 0 {
			return nil, nil, nil, rep, &InputError{fmt.Errorf("cluster.nodes: no GPU node: %s", ir.Summary())}
		}
	} else {
		for i, g := range cfg.GPUs {
			name, err := resolveType(g.Model, tm)
			if err != nil {
				return nil, nil, nil, nil, fmt.Errorf("cluster.gpus[%d].model: %w", i, err)
			}
			per := g.perServer()
			for left := g.Count; left > 0; left -= per {
				addServer(name, min(per, left), g.CPUMilli, g.MemoryMiB)
			}
		}
	}
	distinct := slices.Clone(names)
	slices.Sort(distinct)
	distinct = slices.Compact(distinct)
	types := make([]gpuType, len(distinct))
	for k, n := range distinct {
		s, err := gpu.Lookup(n)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		if g, ok := cfg.Geometries[s.Name]; ok {
			s.MIG = g // the device's geometry in place of the catalog's (s is a copy)
		} else if cfg.MIGGeometry != "" && cfg.Geometries == nil {
			return nil, nil, nil, nil, fmt.Errorf("cluster.mig_geometry is set but its files were not read (Run and Check read them)")
		}
		rel := s.RelSpeed[cfg.SpeedModel]
		if !(rel > 0) {
			return nil, nil, nil, nil, fmt.Errorf("GPU %s has no relative speed for model %q", n, cfg.SpeedModel)
		}
		m := snapshot.ModelFromSpec(s)
		types[k] = gpuType{name: s.Name, spec: s, rel: rel, migModel: m,
			wholeModel: snapshot.GPUModel{Name: s.Name}}
	}
	gpus := make([]clusterGPU, len(names))
	for si, sv := range servers {
		for k := sv.first; k < sv.first+sv.n; k++ {
			t, _ := slices.BinarySearch(distinct, names[k])
			gpus[k] = clusterGPU{typ: t, srv: si}
			types[t].count++
		}
	}
	return types, gpus, servers, rep, nil
}

// nodesKept marks the servers that node_fraction keeps: of each GPU
// model's servers, the first round(fraction x count) in the given order (at
// least one), so that the model mix of the cluster is kept. A server whose
// model does not resolve is kept, for buildCluster to report.
func nodesKept(nodes []trace.Node, fraction float64, tm gpu.TraceTypeMap) []bool {
	keep := make([]bool, len(nodes))
	if fraction >= 1 {
		for i := range keep {
			keep[i] = true
		}
		return keep
	}
	count := map[string]int{}
	model := make([]string, len(nodes))
	for i, n := range nodes {
		if n.NumGPU == 0 || n.GPUType == "" {
			keep[i] = true // reported as a node without GPU
			continue
		}
		name, err := resolveType(n.GPUType, tm)
		if err != nil {
			keep[i] = true
			continue
		}
		model[i] = name
		count[name]++
	}
	taken := map[string]int{}
	for i, m := range model {
		if m == "" {
			continue
		}
		want := max(1, int(math.Round(fraction*float64(count[m]))))
		if taken[m] < want {
			taken[m]++
			keep[i] = true
		}
	}
	return keep
}

// mostCommon returns the index of the type with the most GPUs among allowed
// (nil = all), ties to the lower index; -1 when none is present.
func mostCommon(types []gpuType, allowed []int) int {
	best := -1
	consider := func(t int) {
		if best < 0 || types[t].count > types[best].count {
			best = t
		}
	}
	if allowed == nil {
		for t := range types {
			consider(t)
		}
	} else {
		for _, t := range allowed {
			consider(t)
		}
	}
	return best
}
