package llmserve

import (
	"errors"
	"slices"
	"strings"

	"github.com/conspirator-sim/conspirator/hw"
	"github.com/conspirator-sim/conspirator/hw/kvpath"
	"github.com/conspirator-sim/conspirator/hw/llm"
	"github.com/conspirator-sim/conspirator/hw/units"
)

// KV hand-off timing (DisaggConfig.Transfer) and decode-replica choice
// (DisaggConfig.Policy).
const (
	// TransferLayerwise sends each layer's KV as the prefill step that
	// completes the prompt computes it (Splitwise, Mooncake): the
	// transfer starts with that step and only the last layer's share
	// follows its end.
	TransferLayerwise = "layerwise"
	// TransferAfter sends the whole KV once the prefill has ended
	// (DistServe's pull, vLLM's NIXL connector).
	TransferAfter = "after"

	// PolicyLeastLoaded hands a request to the decode replica with the
	// fewest outstanding tokens.
	PolicyLeastLoaded = "least-loaded"
	// PolicyKVLocality prefers a decode replica on the prefill replica's
	// own server (NVLink, no NIC), least loaded among them, falling back
	// to the least loaded anywhere when none has the blocks free.
	PolicyKVLocality = "kv-locality"
)

// DisaggConfig splits the replicas into a prefill pool and a decode pool
// (Splitwise ISCA'24, DistServe OSDI'24, Mooncake FAST'25): a request's
// prompt runs on a prefill replica, which samples its first token; its KV
// cache then moves to a decode replica, over the data path named, which
// generates the rest. Servers hold gpus_per_server GPUs, the prefill
// pool's first, then the decode pool's.
type DisaggConfig struct {
	Enabled  bool       `yaml:"enabled" doc:"serve with separate prefill and decode pools (disagg.prefill, disagg.decode) and move each request's KV between them; llm.gpu, llm.tp, llm.replicas and llm.gpus are then not used" default:"false"`
	Prefill  PoolConfig `yaml:"prefill" doc:"the prefill pool"`
	Decode   PoolConfig `yaml:"decode" doc:"the decode pool"`
	Path     string     `yaml:"path" doc:"the data path a KV cache takes between servers: tcp (the host CPUs copy it through their kernels), gpudirect (RDMA straight from GPU memory to GPU memory), host-rdma (RDMA between the hosts' memories, a PCIe copy at each end) or conspirator (the receiving server's SmartNIC pulls it and its DMA engine writes it into the GPU); within a server KV moves over NVLink whatever this says" default:"gpudirect"`
	Transfer string     `yaml:"transfer" doc:"when KV moves: layerwise (each layer's KV as the prefill computes it; the transfer starts with the step that completes the prompt) or after (the whole KV once the prefill step has ended)" default:"layerwise" source:"paper: Splitwise (ISCA'24) section 4.3 sends KV layer by layer, overlapped with the prompt; DistServe (OSDI'24) pulls it after"`
	Policy   string     `yaml:"policy" doc:"which decode replica takes a request: least-loaded (fewest outstanding tokens) or kv-locality (the prefill replica's server first)" default:"least-loaded"`

	GPUsPerServer  int              `yaml:"gpus_per_server" doc:"GPUs per server: replicas on one server hand KV over NVLink, on two over the path" default:"8" source:"vendor: DGX A100/H100 hold 8 GPUs"`
	NIC            string           `yaml:"nic" doc:"each server's RDMA NIC (hw catalog: connectx6, connectx7)" default:"connectx6"`
	NICs           int              `yaml:"nics" doc:"NICs per server, their bandwidth summed (a transfer engine stripes a transfer over them, as Mooncake's does)" default:"1"`
	LineRate       *units.Bandwidth `yaml:"line_rate,omitempty" doc:"each NIC's line rate, overriding the catalog's (left out: the NIC's); the goodput is this times the NIC's efficiency"`
	GPUDirect      bool             `yaml:"gpudirect" doc:"the NICs and GPUs can do peer-to-peer (GPUDirect RDMA); the gpudirect path needs it" default:"true"`
	SmartNIC       string           `yaml:"smartnic" doc:"each server's SmartNIC (hw catalog: bluefield3, bluefield2); the conspirator path needs one; empty: none" default:"bluefield3"`
	Staging        string           `yaml:"staging" doc:"host buffers a staged path copies KV through (host-rdma, tcp, host-copy between MIG slices, conspirator's sender without GPUDirect): pinned, or pageable (each copy through a pinned bounce buffer a host core fills, at pageable_factor of the pinned rate, stretched by llm.host_load, with two more passes over host DRAM)" default:"pinned" source:"choice: serving engines register (pin) their staging buffers; pageable is what an unregistered buffer costs"`
	PageableFactor float64          `yaml:"pageable_factor" doc:"staging pageable: the bounce copy's rate as a fraction of the pinned copy rate" default:"0.4" source:"hw:host.pageable_factor"`
}

// Staging buffers.
const (
	StagingPinned   = "pinned"
	StagingPageable = "pageable"
)

// PoolConfig is one pool of replicas.
type PoolConfig struct {
	GPU      string `yaml:"gpu" doc:"GPU type of the pool (hw/gpu catalog); empty: llm.gpu" default:""`
	MIG      string `yaml:"mig" doc:"a MIG profile of the pool's GPU (e.g. 3g.40gb): each replica one such instance at tp 1, packed onto GPUs; KV to or from a slice on the same server goes through host memory (slices have no peer-to-peer path); empty: whole GPUs" default:""`
	TP       int    `yaml:"tp" doc:"tensor-parallel degree of the pool's replicas; 0: llm.tp" default:"0"`
	Replicas int    `yaml:"replicas" doc:"replicas in the pool" default:"1"`
}

// DisaggPlan is a resolved disaggregation: the two pools' plans (the
// cluster's plan with each pool's placement and KV capacity) and the KV
// path's hardware.
type DisaggPlan struct {
	Prefill, Decode Plan
	Path            string
	HW              kvpath.Hardware
	Layerwise       bool
	Policy          string
	GPUsPerServer   int
}

func (d DisaggConfig) validate(add func(key, format string, a ...any)) {
	if !d.Enabled {
		return
	}
	for _, pc := range []struct {
		key string
		p   PoolConfig
	}{{"disagg.prefill", d.Prefill}, {"disagg.decode", d.Decode}} {
		if pc.p.Replicas < 1 || pc.p.Replicas > MaxReplicas {
			add(pc.key+".replicas", "%d; want 1 to %d replicas (a pool of none serves nothing)", pc.p.Replicas, MaxReplicas)
		}
		if pc.p.TP < 0 || pc.p.TP > llm.MaxTP {
			add(pc.key+".tp", "%d; want 0 (llm.tp) or 1 to %d", pc.p.TP, llm.MaxTP)
		}
	}
	if !slices.Contains([]string{kvpath.TCP, kvpath.GPUDirect, kvpath.HostRDMA, kvpath.Conspirator}, d.Path) {
		add("disagg.path", "%q; use tcp, gpudirect, host-rdma or conspirator (NVLink is taken within a server)", d.Path)
	}
	if d.Transfer != TransferLayerwise && d.Transfer != TransferAfter {
		add("disagg.transfer", "%q; use %s or %s", d.Transfer, TransferLayerwise, TransferAfter)
	}
	if d.Policy != PolicyLeastLoaded && d.Policy != PolicyKVLocality {
		add("disagg.policy", "%q; use %s or %s", d.Policy, PolicyLeastLoaded, PolicyKVLocality)
	}
	if d.GPUsPerServer < 1 || d.GPUsPerServer > 64 {
		add("disagg.gpus_per_server", "%d; want 1 to 64", d.GPUsPerServer)
	}
	if d.Staging != StagingPinned && d.Staging != StagingPageable {
		add("disagg.staging", "%q; use %s or %s", d.Staging, StagingPinned, StagingPageable)
	}
	if d.NICs < 1 || d.NICs > 16 {
		add("disagg.nics", "%d; want 1 to 16 NICs per server", d.NICs)
	}
	if _, err := hw.LookupNIC(d.NIC); err != nil {
		add("disagg.nic", "%v", err)
	}
	if d.LineRate != nil {
		switch v := float64(*d.LineRate); {
		case !(v > 0):
			add("disagg.line_rate", "%v: a link of no bandwidth moves no KV; give a rate of 10Mbps to 80Tbps (e.g. 100Gbps), or leave the key out for the NIC's", *d.LineRate)
		case v < 10e6/8 || v > 1e13:
			// Below 10 Mb/s a long prompt's KV (tens of GB) would take
			// years: past the clock's horizon.
			add("disagg.line_rate", "%v is outside 10Mbps to 80Tbps; give a rate in that range (e.g. 100Gbps), or leave the key out for the NIC's", *d.LineRate)
		}
	}
	if !(d.PageableFactor > 0 && d.PageableFactor <= 1) {
		add("disagg.pageable_factor", "%v; want a fraction in (0, 1] of the pinned copy rate, e.g. 0.4", d.PageableFactor)
	}
	if d.SmartNIC != "" {
		if _, err := hw.LookupSmartNIC(d.SmartNIC); err != nil {
			add("disagg.smartnic", "%v", err)
		}
	}
}

// hardware resolves the servers' KV path hardware: the catalog server
// (kvpath.Default) with the section's NIC, load, GPUDirect and SmartNIC,
// and the PCIe generation of the decode pool's GPU.
func (d DisaggConfig) hardware(decodeGPU, hostLoad float64) (kvpath.Hardware, error) {
	h := kvpath.Default()
	nic, err := hw.LookupNIC(d.NIC)
	if err != nil {
		return h, units.Invalid("disagg.nic", "%v", err)
	}
	rate := nic.LineRateBitsPerSec / 8
	if d.LineRate != nil {
		rate = float64(*d.LineRate)
	}
	h.NICBytesPerSec = rate * nic.Efficiency * float64(d.NICs)
	h.NICLatency = nic.OneWayLatency
	h.GPUDirect = d.GPUDirect
	h.Pageable, h.PageableFactor = d.Staging == StagingPageable, d.PageableFactor
	h.Host.Background = hostLoad
	// A Gen5 GPU (H100, H200: 64 GB/s a direction) gets the Gen5 pinned
	// rate; the A100 Gen4's.
	if decodeGPU > 40e9 {
		if g5, err := hw.LookupPCIe("gen5-x16"); err == nil {
			h.PCIe = g5
		}
	}
	h.SmartNIC = nil
	if d.SmartNIC != "" {
		s, err := hw.LookupSmartNIC(d.SmartNIC)
		if err != nil {
			return h, units.Invalid("disagg.smartnic", "%v", err)
		}
		h.SmartNIC = &s
	}
	if err := h.Validate(d.Path); err != nil {
		key := "disagg.path"
		switch {
		case d.Path == kvpath.GPUDirect && !d.GPUDirect:
			key = "disagg.gpudirect"
		case d.Path == kvpath.Conspirator && h.SmartNIC == nil:
			key = "disagg.smartnic"
		}
		msg := strings.ReplaceAll(err.Error(), "\n", "; ")
		// kvpath names its Go fields; a scenario's user sets keys.
		msg = strings.NewReplacer(
			"set Hardware.GPUDirect, or use", "set llm.disagg.gpudirect: true (a NIC and GPU that can do it), or the path",
			`set Hardware.SmartNIC (hw.LookupSmartNIC("bluefield3")), or use`, "set llm.disagg.smartnic: bluefield3, or the path",
		).Replace(msg)
		return h, units.Invalid(key, "%s", msg)
	}
	return h, nil
}

// disaggPlan resolves the pools: each is the section with its GPU, TP and
// replicas, planned as a colocated section is (memory fit, KV capacity);
// an error is placed at the pool's key.
func (c Config) disaggPlan(m llm.Model) (*DisaggPlan, error) {
	d := c.Disagg
	pool := func(key string, pc PoolConfig) (Plan, error) {
		cc := c
		cc.Disagg.Enabled = false
		if pc.GPU != "" {
			cc.GPU = pc.GPU
		}
		if pc.TP != 0 {
			cc.TP = pc.TP
		}
		cc.Replicas, cc.GPUs = pc.Replicas, 0
		if cc.MIG != "" {
			return Plan{}, units.Invalid("mig", "%s with disagg: give each pool's slices as disagg.prefill.mig and disagg.decode.mig; set mig to empty", cc.MIG)
		}
		cc.MIG = pc.MIG
		p, err := cc.plan(m)
		var fe *units.FieldError
		if errors.As(err, &fe) {
			switch fe.Field {
			case "gpu", "tp", "replicas", "mig": // the pool's own keys
				return Plan{}, units.Invalid(key+"."+fe.Field, "%s", fe.Msg)
			}
			return Plan{}, units.Invalid(fe.Field, "%s (in the %s pool)", fe.Msg, strings.TrimPrefix(key, "disagg."))
		}
		return p, err
	}
	pp, err := pool("disagg.prefill", d.Prefill)
	if err != nil {
		return nil, err
	}
	dp, err := pool("disagg.decode", d.Decode)
	if err != nil {
		return nil, err
	}
	h, err := d.hardware(dp.Placement.GPU.PCIeBandwidth, float64(c.HostLoad))
	if err != nil {
		return nil, err
	}
	return &DisaggPlan{Prefill: pp, Decode: dp, Path: d.Path, HW: h, Layerwise: d.Transfer == TransferLayerwise, Policy: d.Policy, GPUsPerServer: d.GPUsPerServer}, nil
}

// kvOps is the RDMA operations moving n tokens of paged KV: each block of
// each layer holds K and V in separate pages, so a transfer is about
// layers x blocks x 2 writes (Mooncake and vLLM's NIXL connector post one
// per contiguous region).
func kvOps(m llm.Model, blockSize, tokens int) int {
	blocks := (tokens + blockSize - 1) / blockSize
	return max(1, m.Layers*blocks*2)
}
