package calib

import (
	"slices"
	"strings"

	"github.com/conspirator-sim/conspirator/realhw/host"
	"github.com/conspirator-sim/conspirator/sim/datapath"
)

// measuredKinds maps every stage name a measurement tool writes into
// samples (the host and cuda backends, the perftest and nvbandwidth
// importers) to the kind of data-path stage it measures: the one table
// that ties a measurement to the model's stage vocabulary
// (datapath.StageKind). An empty kind is the whole request (tcp-e2e).
// The cuda names are spelled here because realhw/cuda compiles only with
// its build tag; TestCudaStageNamesKnown (tag cuda) holds them equal.
var measuredKinds = map[string]datapath.StageKind{
	host.StageTCPNetwork:   datapath.KindNetwork,
	host.StageTCPCopy:      datapath.KindHostCopy,
	host.StageTCPCompute:   datapath.KindCompute,
	host.StageTCPReply:     datapath.KindReply,
	host.StageTCPE2E:       "",
	host.StageTCPServerCPU: datapath.KindHostCPU,
	host.StageTCPClientCPU: datapath.KindHostCPU,
	host.StageMemcpy:       datapath.KindHostCopy,
	host.StageCPUSpin:      datapath.KindHostCPU,
	"rdma-write":           datapath.KindNetwork,
	"rdma-read":            datapath.KindNetwork,
	"rdma-send":            datapath.KindNetwork,
	"rdma-write-bw":        datapath.KindNetwork,
	"rdma-read-bw":         datapath.KindNetwork,
	"rdma-send-bw":         datapath.KindNetwork,
	"cuda-h2d-pinned":      datapath.KindDMA,
	"cuda-h2d-pageable":    datapath.KindHostCopy, // staged by the CPU
	"cuda-d2h-pinned":      datapath.KindDMA,
	"cuda-d2h-pageable":    datapath.KindHostCopy,
	"cuda-launch":          datapath.KindLaunch,
	"cuda-launch-async":    datapath.KindLaunch,
	"cuda-scale-kernel":    datapath.KindCompute,
}

// nvbandwidthPrefix starts the stage names of nvbandwidth test cases; all
// of them move bytes with a copy engine or SM copies between host and
// device memory, i.e. DMA.
const nvbandwidthPrefix = "nvbandwidth/"

// MeasuredKind returns the data-path stage kind a measurement stage name
// measures, and whether the name is one the tools write.
func MeasuredKind(stage string) (datapath.StageKind, bool) {
	if strings.HasPrefix(stage, nvbandwidthPrefix) {
		return datapath.KindDMA, true
	}
	k, ok := measuredKinds[stage]
	return k, ok
}

// knownStageNames are the stage names the tools write, sorted
// (nvbandwidth's as "nvbandwidth/*").
func knownStageNames() []string {
	names := make([]string, 0, len(measuredKinds)+1)
	for n := range measuredKinds {
		names = append(names, n)
	}
	slices.Sort(names)
	return append(names, nvbandwidthPrefix+"*")
}

func knownStage(name string) bool {
	_, ok := MeasuredKind(name)
	return ok
}
