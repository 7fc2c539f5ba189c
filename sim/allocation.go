package sim

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/conspirator-sim/conspirator/policies/nodealloc"
	"github.com/conspirator-sim/conspirator/sim/alloc"
	"github.com/conspirator-sim/conspirator/sim/cluster"
	"github.com/conspirator-sim/conspirator/workloads/trace"
)

// maxGPUsPerServer is the most GPUs one server of a node list may hold.
const maxGPUsPerServer = cluster.MaxGPUsPerServer

// allocationInput imports the pod and node lists of the allocation
// experiment strictly: a bad row is an input error naming the file, row
// and column, and nothing is simulated.
func allocationInput(cfg alloc.Config) (alloc.Input, []cluster.InputReport, error) {
	var in alloc.Input
	imp := func(key, path string, opt trace.Options) (trace.Result, error) {
		opt.Strict = true
		r, err := ClusterEnv.Import(path, opt)
		if errors.Is(err, fs.ErrNotExist) {
			return r, missingInput(key, path)
		}
		if err != nil {
			return r, &cluster.InputError{Err: fmt.Errorf("%s: %w", key, err)}
		}
		return r, nil
	}
	nr, err := imp("allocation.nodes", cfg.Nodes, trace.Options{Format: trace.FormatOpenBNodes})
	if err != nil {
		return in, nil, err
	}
	for _, n := range nr.Nodes {
		if n.NumGPU > maxGPUsPerServer {
			return in, nil, &cluster.InputError{Err: fmt.Errorf("allocation.nodes %s row %d, column gpu: %d GPUs on one server; at most %d fit a server", cfg.Nodes, n.Row, n.NumGPU, maxGPUsPerServer)}
		}
		if n.CPUMilli <= 0 || n.MemoryMiB <= 0 {
			return in, nil, &cluster.InputError{Err: fmt.Errorf("allocation.nodes %s row %d: cpu_milli %d and memory_mib %d; want both above 0", cfg.Nodes, n.Row, n.CPUMilli, n.MemoryMiB)}
		}
		in.Nodes = append(in.Nodes, nodealloc.NewNode(n.Name, n.GPUType, int64(n.CPUMilli), n.MemoryMiB, n.NumGPU))
	}
	pr, err := imp("allocation.trace", cfg.Trace, trace.Options{Format: trace.FormatOpenB, ArrivalOnly: true, KeepCPUOnly: true, MaxGPUsPerJob: maxGPUsPerServer})
	if err != nil {
		return in, nil, err
	}
	// The importer orders pods by creation time (file order where there
	// is none); each seed shuffles them, so the order only fixes which
	// pod a seed's draws pick.
	for _, j := range pr.Jobs {
		in.Pods = append(in.Pods, nodealloc.Pod{CPU: int64(j.CPUMilli), Mem: j.MemoryMiB, NumGPU: j.NumGPU, GPUMilli: int64(j.GPUMilli), Types: j.GPUTypes})
	}
	return in, []cluster.InputReport{cluster.ReportOf("allocation.trace", &pr), cluster.ReportOf("allocation.nodes", &nr)}, nil
}
