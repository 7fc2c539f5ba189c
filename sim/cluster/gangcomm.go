package cluster

import (
	"fmt"
	"slices"

	"github.com/conspirator-sim/conspirator/hw"
	"github.com/conspirator-sim/conspirator/workloads/train"
)

// gangComm is GangComm resolved once for a replay: the speed of a batch
// gang by how its tasks are spread over servers (see GangComm), cached by
// GPU type and spread.
type gangComm struct {
	off   bool
	model train.Model
	form  string
	grad  float64
	links train.Links
	cache map[string]float64
}

func newGangComm(c GangComm) (*gangComm, error) {
	if c.Model == "none" {
		return &gangComm{off: true}, nil
	}
	m, err := train.Lookup(c.Model)
	if err != nil {
		return nil, fmt.Errorf("cluster.gang_comm.model: %w", err)
	}
	in, err := hw.LookupIntraServerLink(c.Intra)
	if err != nil {
		return nil, fmt.Errorf("cluster.gang_comm.intra: %w", err)
	}
	return &gangComm{model: m, form: c.AllReduce, grad: m.GradientBytes(c.BytesPerValue),
		links: train.Links{NICBytesPerSec: float64(c.NIC), Alpha: c.NetLatency.Time().Seconds(), IntraBytesPerSec: in.BytesPerSec, IntraAlpha: in.Latency.Seconds()},
		cache: map[string]float64{}}, nil
}

// speed is the speed of a gang with gpusOn[i] tasks on each of its
// servers, on GPUs of gpuType, relative to the same gang on one server:
// (C + T_1)/(C + T_k). 1 on one server, or with communication off.
func (g *gangComm) speed(gpuType string, gpusOn []int) (float64, error) {
	if g.off || len(gpusOn) < 2 {
		return 1, nil
	}
	on := slices.Clone(gpusOn)
	slices.Sort(on)
	key := fmt.Sprint(gpuType, on)
	if v, ok := g.cache[key]; ok {
		return v, nil
	}
	c, err := g.model.ComputeSeconds(gpuType)
	if err != nil {
		return 0, fmt.Errorf("cluster.gang_comm: %w", err)
	}
	n := 0
	for _, x := range on {
		n += x
	}
	one, err := train.SyncSeconds(g.form, g.grad, []int{n}, g.links)
	if err != nil {
		return 0, err
	}
	spread, err := train.SyncSeconds(g.form, g.grad, on, g.links)
	if err != nil {
		return 0, err
	}
	v := (c + one) / (c + spread)
	g.cache[key] = v
	return v, nil
}
