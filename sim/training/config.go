package training

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw"
	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/policies/ina"
	"github.com/conspirator-sim/conspirator/workloads/train"
)

// Sources of jobs (JobsConfig.Source).
const (
	SourceList      = "list"
	SourceTrace     = "trace"
	SourceSynthetic = "synthetic"
)

// All-reduce forms (SyncConfig.AllReduce).
const (
	AllReduceRing         = "ring"
	AllReduceHierarchical = "hierarchical"
	AllReducePS           = "ps"
	AllReducePSDedicated  = "ps-dedicated"
)

// Config is the training section of a scenario: jobs that train models
// on a rack of GPU servers, synchronising their gradients over the
// modelled links, with an aggregating device whose memory the policies
// share.
type Config struct {
	Jobs    JobsConfig    `yaml:"jobs" doc:"the training jobs"`
	Cluster ClusterConfig `yaml:"cluster" doc:"the rack: servers of GPUs behind one top-of-rack switch"`
	Sync    SyncConfig    `yaml:"sync" doc:"how a job sums its gradients when it does not aggregate in the network"`
	INA     INAConfig     `yaml:"ina" doc:"the aggregating device and its memory"`

	Policies   []string                     `yaml:"policies" doc:"aggregator memory policies to compare, each on the same jobs: static (SwitchML), atp (ATP), esa (ESA in the data plane), esa-oracle (a central dealer of exact remaining work, an ablation), none (host all-reduce only); NAME/LABEL runs NAME with policy_args of its own" default:"[static, atp, esa, none]"`
	PolicyArgs map[string]map[string]string `yaml:"policy_args" doc:"arguments per policy entry, e.g. {static: {partition: \"1024\"}, esa: {priority: size-class}} (esa: remaining-iterations, size-class or fifo; esa-oracle: remaining or fifo)" default:"{}"`
	Baseline   string                       `yaml:"baseline" doc:"policy the others' mean JCT is compared with, seed by seed (ESA's yardstick is ATP-style sharing); empty: none" default:"atp"`
	Seeds      int                          `yaml:"seeds" doc:"runs of every policy, seeds seed .. seed+seeds-1 (synthetic jobs and atp's hashing per seed); metrics are means with 95% CIs" default:"1"`
	RecordJobs bool                         `yaml:"record_jobs" doc:"keep one record per job (training_jobs.csv)" default:"true"`

	// stepAll simulates every iteration phase by phase (no fast-forward):
	// the tests compare the two.
	stepAll bool
}

// JobsConfig says where the jobs come from.
type JobsConfig struct {
	Source string `yaml:"source" doc:"list (a job list file), trace (the GPU jobs of a cluster trace, given a model by rule) or synthetic" default:"synthetic"`
	List   string `yaml:"list" doc:"list: a CSV with num_gpu,submit_time,iterations,model (the format of the Alibaba-derived 5,335-job list of the SwitchML-omnetpp simulator; other columns ignored); relative to the working directory"`
	Trace  string `yaml:"trace" doc:"trace: a cluster trace (any format of workloads/trace); each GPU job trains model with one worker per GPU for as many iterations as its duration holds at that model's compute time on cluster.gpu (a stated rule: the trace names no model)"`
	Model  string `yaml:"model" doc:"trace: the model every job trains" default:"resnet50"`

	Synthetic SynthConfig `yaml:"synthetic" doc:"synthetic: jobs drawn per seed"`
	// Skip and Limit window the jobs by arrival; IterationScale divides
	// their iterations, as SwitchML-omnetpp's shrink_iter_factor does.
	Skip           int     `yaml:"skip" doc:"jobs to drop from the start (by arrival)" default:"0"`
	Limit          int     `yaml:"limit" doc:"jobs to keep after skip; 0 = all" default:"0"`
	IterationScale float64 `yaml:"iteration_scale" doc:"divide every job's iterations by this (at least one is kept), as SwitchML-omnetpp's shrink_iter_factor does; 1 keeps them" default:"1"`
	Compress       float64 `yaml:"compress" doc:"divide arrival times by this factor (>1 raises the load)" default:"1"`
}

// SynthConfig draws jobs: GPU counts and models by weight, iterations
// log-uniform, Poisson arrivals.
type SynthConfig struct {
	Jobs          int        `yaml:"jobs" doc:"number of jobs" default:"16"`
	Rate          units.Rate `yaml:"rate" doc:"Poisson arrival rate; 0/s: all arrive at 0" default:"0/s"`
	GPUs          []int      `yaml:"gpus" doc:"GPU counts a job may ask for" default:"[4, 8]"`
	GPUWeights    []float64  `yaml:"gpu_weights" doc:"weight of each gpus entry; empty: equal" default:"[]"`
	Models        []string   `yaml:"models" doc:"models a job may train, equally likely unless model_weights" default:"[resnet50, vgg16, bert-large]"`
	ModelWeights  []float64  `yaml:"model_weights" doc:"weight of each models entry (the model mix); empty: equal" default:"[]"`
	MinIterations int        `yaml:"min_iterations" doc:"fewest iterations of a job" default:"200"`
	MaxIterations int        `yaml:"max_iterations" doc:"most iterations of a job (log-uniform between)" default:"2000"`
}

// ClusterConfig is the rack.
type ClusterConfig struct {
	Servers       int             `yaml:"servers" doc:"GPU servers on the top-of-rack switch" default:"16"`
	GPUsPerServer int             `yaml:"gpus_per_server" doc:"GPUs per server; a job of more spans servers" default:"1" source:"choice: one worker per server, as the SwitchML and ATP testbeds have"`
	GPU           string          `yaml:"gpu" doc:"GPU type of every server (catalog name)" default:"a100-80gb"`
	NIC           units.Bandwidth `yaml:"nic" doc:"each server's NIC line rate, each direction" default:"100Gbps" source:"measured: SwitchML and ATP evaluate with 100 Gb/s NICs"`
	NetLatency    units.Duration  `yaml:"net_latency" doc:"alpha of the alpha-beta cost: one step of a ring across servers (NIC, wire, switch)" default:"hw:nic.connectx6.one_way_latency"`
	Precision     string          `yaml:"precision" doc:"compute precision: tf32 (TF32 on A100: ResNet-50 938 img/s) or amp (mixed precision, as production training runs: ResNet-50 2,470 img/s; the other models derived by FLOP ratios or the FP16 peak, marked derived in summary.json)" default:"tf32"`
	MTU           int             `yaml:"mtu" doc:"the payload of one RoCEv2 packet of the host all-reduce and parameter server (NCCL, BytePS over RDMA), 256 to 9000 B: each carries 82 B more on the wire (network.rocev2.packet_bytes)" default:"4096" source:"vendor: RoCEv2's largest InfiniBand MTU, 4,096 B, as NCCL and BytePS deployments set it"`
	Intra         string          `yaml:"intra" doc:"GPU-to-GPU link inside a server: nvlink3 (A100), nvlink2 (V100) or pcie4" default:"nvlink3"`
}

// SyncConfig is the host all-reduce.
type SyncConfig struct {
	AllReduce     string  `yaml:"all_reduce" doc:"ring (one ring over every GPU: 2(n-1) alpha + 2(n-1)/n S/B), hierarchical (reduce inside each server over its GPU link, a ring of the servers over their NICs, broadcast back) ps (a parameter server on the job's first server: every other server pushes its gradient there and pulls the sum, pipelined chunk by chunk as BytePS runs it: (k-1) S/B + 2 alpha) or ps-dedicated (the same with the parameter server on a machine of its own per job, a NIC of the cluster's rate, as ATP's benchmark deploys its own PS: every server pushes to it, k S/B + 2 alpha; BytePS runs as many PS machines as workers, or co-locates them, which moves a ring's bytes)" default:"hierarchical"`
	BytesPerValue float64 `yaml:"bytes_per_value" doc:"bytes of one gradient value on the wire (4: FP32, 2: FP16)" default:"4"`
	Overlap       string  `yaml:"overlap" doc:"none (an iteration computes, then synchronises) or full (an iteration's synchronisation overlaps the next iteration's compute; synchronisations stay one at a time)" default:"none"`
}

// INAConfig is the aggregating device.
type INAConfig struct {
	Device    string        `yaml:"device" doc:"aggregating device: tofino-switchml, tofino-atp (a Tofino switch with SwitchML's or ATP's pool and chunk) or bluefield3 (a BlueField-3 on the switch that sums in its DRAM with its Arm cores)" default:"tofino-switchml"`
	Slots     OrDevice      `yaml:"slots" doc:"aggregator slots in the pool: a count (above the device's, a what-if of more memory, with the device's chunk), or device for the device's (tofino-switchml 8,192; tofino-atp 20,000; bluefield3 1,048,576; with a larger slot_bytes, as many as its memory holds)" default:"device"`
	Window    OrDevice      `yaml:"window" doc:"slots a job's window asks for: a count, or device for the device's per-job figure (SwitchML-omnetpp 512, ATP 1,200: its 12 threads of 100)" default:"device"`
	ChunkRTT  RTTOrDevice   `yaml:"chunk_rtt" doc:"a chunk's round trip through the device, which holds its aggregator that long (a job streaming at its line rate holds its bandwidth-delay product in slots): a duration above 0, or device for the device's (5 us)" default:"device"`
	SlotBytes BytesOrDevice `yaml:"slot_bytes" doc:"payload of one chunk: a size above 0 and at most the device's memory (slots x slot bytes), or device for the device's (256 B SwitchML, 248 B ATP)" default:"device"`
	// ChunkHeaderBytes: see hw.AggregatorSpec.
	ChunkHeaderBytes BytesOrDevice   `yaml:"chunk_header_bytes" doc:"what a chunk's packet carries on the wire besides its values (headers and Ethernet's per-frame cost): 0 B to 9000 B, or device for the device's (SwitchML 76 B, ATP 84 B: 332 B on the wire either way); in-network and fallback transfers carry slot_bytes + this per chunk, and a job's in-flight slots are the line rate's round trip over that" default:"device"`
	Use              string          `yaml:"use" doc:"which spanning jobs aggregate in the network under a policy other than none: when-faster (a job whose in-network phase alone, with its whole need, would take longer than its host all-reduce alone runs the host all-reduce, as an operator who knows both sets it per job: with the packets' headers a 2-worker job's ring wins, and under ATP's protocol with PS shards on the job's servers (ina.fallback ps-sharded), whose legs load every worker's NIC, so do 3 and 4 workers) or always (every spanning job, as the systems' own evaluations run them)" default:"when-faster" source:"choice: a review of issue 41 found 2-worker jobs losing 4.8% under atp, diluting the headline"`
	Fallback         string          `yaml:"fallback" doc:"where a chunk the device does not aggregate (a collision, an eviction, a job without slots) is summed: ps-dedicated (one parameter server per job on a machine of its own, with a NIC of the cluster's rate, as ATP's published examples run it: its NIC receives k times the missed bytes, and under ATP's protocol every aggregated chunk and its result, and no worker's traffic) or ps-sharded (parameter-server shards on every server of the job, co-located with its workers, as BytePS's co-located mode runs them and ATP's client allows: reached through the switch as ATP's data plane does, with the results multicast, every NIC receives twice the missed bytes) or ps-single (one parameter server on the job's first server, co-located with a worker: that server's NIC receives k+1 times them, and under ATP's protocol every aggregated chunk and its result besides its worker's traffic)" default:"ps-dedicated" source:"ATP's training system for its NSDI'21 paper (in-ATP/ATP-BytePS) gives its aggregation library one PS per job in code (byteps/common/global.cc: new P4mlManager(worker, num_worker, app, 1)) and its quick start runs it apart from 2 workers; ATP's benchmark (in-ATP/ATP docs/benchmark.md): '2 physical workers, 1 physical PS'; where the paper's runs placed that PS was not read (its text was not reached from here)"`
	Hash             string          `yaml:"hash" doc:"how atp and esa map a job's window onto the pool: crc (ATP's HashNew_crc: CRC-32 of app ID and index, truncated to 16 bits, modulo the pool) or uniform (ideal uniform hashing)" default:"crc" source:"in-ATP/ATP common/HashTable.cc"`
	Placement        string          `yaml:"placement" doc:"where the aggregation happens: rack (the device aggregates every worker server's gradient: a switch on every port, or one SmartNIC on a switch port for the whole rack) or server (hierarchical: each server's SmartNIC, server_nic, first sums its own GPUs' gradients of a job spanning servers, taking them over its DMA and through its summation, and returns the sum to them; across servers the device aggregates the servers' sums under the policy; none, and a job on its host ring, run the host all-reduce as under rack, so that every placement is measured against the same host ring)" default:"rack" source:"choice: the SmartNIC placements issue 41 asks to compare"`
	ServerNIC        string          `yaml:"server_nic" doc:"the SmartNIC in every server under placement server (bluefield3): its DMA engine carries each GPU's gradient in and the sum back, its summation (sum_rate) adds them" default:"bluefield3"`
	SumRate          units.Bandwidth `yaml:"sum_rate" doc:"a SmartNIC aggregator's summation rate, the bytes of contributions its Arm cores add per second, shared by every job (the rack's SmartNIC, and under placement server each server's); 0B/s: the device's (bluefield3: 30 GB/s, an estimate, plausible 10 to 60 GB/s); a switch sums at line rate and takes no value" default:"0B/s"`
}

// Uses (INAConfig.Use).
const (
	UseWhenFaster = "when-faster"
	UseAlways     = "always"
)

// Fallbacks (INAConfig.Fallback).
const (
	FallbackSharded   = "ps-sharded"
	FallbackSingle    = "ps-single"
	FallbackDedicated = "ps-dedicated"
)

// Placements (INAConfig.Placement).
const (
	PlacementRack   = "rack"
	PlacementServer = "server"
)

// Placements lists the placements.
func Placements() []string { return []string{PlacementRack, PlacementServer} }

// Fallbacks lists the fallbacks.
func Fallbacks() []string { return []string{FallbackSharded, FallbackSingle, FallbackDedicated} }

// RTTOrDevice is a round trip that can defer to the device's: YAML
// "device" or a duration. "device" is not 0, so that a round trip of 0
// is refused rather than read as the default.
type RTTOrDevice int64

// RTTFromDevice is "device".
const RTTFromDevice RTTOrDevice = -1

// UnmarshalText reads "device" or a duration.
func (o *RTTOrDevice) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "device" {
		*o = RTTFromDevice
		return nil
	}
	d, err := units.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is neither a duration nor device", s)
	}
	if d < 0 {
		return fmt.Errorf("%v is negative; want a duration above 0, or device", d)
	}
	*o = RTTOrDevice(d)
	return nil
}

// MarshalText writes "device" or the duration.
func (o RTTOrDevice) MarshalText() ([]byte, error) {
	if o == RTTFromDevice {
		return []byte("device"), nil
	}
	return []byte(units.Duration(o).String()), nil
}

// BytesOrDevice is a chunk size that can defer to the device's: YAML
// "device" or a size; "device" is not 0, as RTTOrDevice.
type BytesOrDevice int64

// BytesFromDevice is "device".
const BytesFromDevice BytesOrDevice = -1

// UnmarshalText reads "device" or a size.
func (o *BytesOrDevice) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "device" {
		*o = BytesFromDevice
		return nil
	}
	n, err := units.ParseBytes(s)
	if err != nil {
		return fmt.Errorf("%q is neither a size nor device; write a size with its unit, e.g. 0B, 84B or 4KiB", s)
	}
	if n < 0 {
		return fmt.Errorf("%v is negative; want a size above 0, or device", n)
	}
	*o = BytesOrDevice(n)
	return nil
}

// MarshalText writes "device" or the size.
func (o BytesOrDevice) MarshalText() ([]byte, error) {
	if o == BytesFromDevice {
		return []byte("device"), nil
	}
	return []byte(units.Bytes(o).String()), nil
}

// OrDevice is a count that can defer to the aggregating device's own
// figure: YAML "device" or an integer. It is not 0 for "the device's", so
// that a pool of 0 slots is refused rather than read as the default.
type OrDevice int

// FromDevice is "device": the device's own figure.
const FromDevice OrDevice = -1

// UnmarshalText reads "device" or an integer.
func (o *OrDevice) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "device" {
		*o = FromDevice
		return nil
	}
	n, err := strconv.Atoi(strings.ReplaceAll(s, "_", ""))
	if err != nil {
		return fmt.Errorf("%q is neither a count of slots nor device", s)
	}
	if n < 0 {
		return fmt.Errorf("%d is negative; want a count of slots, or device", n)
	}
	*o = OrDevice(n)
	return nil
}

// MarshalText writes "device" or the count.
func (o OrDevice) MarshalText() ([]byte, error) {
	if o == FromDevice {
		return []byte("device"), nil
	}
	return []byte(strconv.Itoa(int(o))), nil
}

// Defaults returns the paper/ina configuration.
func Defaults() Config {
	lat, _ := hw.LookupNIC("connectx6")
	return Config{
		Jobs: JobsConfig{Source: SourceSynthetic, Model: "resnet50", IterationScale: 1, Compress: 1,
			Synthetic: SynthConfig{Jobs: 16, GPUs: []int{4, 8}, GPUWeights: []float64{}, ModelWeights: []float64{}, Models: []string{"resnet50", "vgg16", "bert-large"}, MinIterations: 200, MaxIterations: 2000}},
		Cluster:    ClusterConfig{Servers: 16, GPUsPerServer: 1, GPU: "a100-80gb", NIC: units.Bandwidth(100e9 / 8), NetLatency: units.Duration(lat.OneWayLatency), MTU: 4096, Intra: "nvlink3", Precision: train.PrecisionTF32},
		Sync:       SyncConfig{AllReduce: AllReduceHierarchical, BytesPerValue: 4, Overlap: "none"},
		INA:        INAConfig{Device: "tofino-switchml", Slots: FromDevice, Window: FromDevice, ChunkRTT: RTTFromDevice, SlotBytes: BytesFromDevice, ChunkHeaderBytes: BytesFromDevice, Use: UseWhenFaster, Fallback: FallbackDedicated, Hash: ina.HashCRC, Placement: PlacementRack, ServerNIC: "bluefield3"},
		Policies:   []string{"static", "atp", "esa", "none"},
		PolicyArgs: map[string]map[string]string{},
		Baseline:   "atp",
		Seeds:      1,
		RecordJobs: true,
	}
}

// Files lists the input files c reads, with the key naming each.
func (c Config) Files() (keys, paths []string) {
	switch c.Jobs.Source {
	case SourceList:
		return []string{"training.jobs.list"}, []string{c.Jobs.List}
	case SourceTrace:
		return []string{"training.jobs.trace"}, []string{c.Jobs.Trace}
	}
	return nil, nil
}

// device resolves the aggregating device with the config's overrides.
func (c Config) device() (hw.AggregatorSpec, error) {
	d, err := hw.LookupAggregator(c.INA.Device)
	if err != nil {
		return d, err
	}
	if c.INA.Slots != FromDevice {
		d.Slots = int(c.INA.Slots)
	} else if c.INA.SlotBytes != BytesFromDevice && float64(c.INA.SlotBytes) > d.SlotBytes {
		// The device's memory in slots of the larger chunk asked for
		// (Validate refuses a chunk past the memory). A smaller chunk
		// keeps the device's count: a switch's slots are register
		// entries, which do not multiply as chunks shrink.
		d.Slots = max(1, int(float64(d.Slots)*d.SlotBytes/float64(c.INA.SlotBytes)))
	}
	if c.INA.Window != FromDevice {
		d.PerJobSlots = int(c.INA.Window)
	}
	if c.INA.ChunkRTT != RTTFromDevice {
		d.ChunkRTT = engine.Time(c.INA.ChunkRTT)
	}
	if c.INA.SlotBytes != BytesFromDevice {
		d.SlotBytes = float64(c.INA.SlotBytes)
	}
	if c.INA.ChunkHeaderBytes != BytesFromDevice {
		d.ChunkHeaderBytes = float64(c.INA.ChunkHeaderBytes)
	}
	if c.INA.SumRate > 0 {
		d.SumBytesPerSec = float64(c.INA.SumRate)
	}
	return d, nil
}

// serverNIC resolves the SmartNIC in every server (placement server):
// its DMA rate from the SmartNIC catalog, its summation from the
// aggregator's, with sum_rate applied.
func (c Config) serverNIC() (serverNIC, error) {
	a, err := hw.LookupAggregator(c.INA.ServerNIC)
	if err != nil {
		return serverNIC{}, err
	}
	if a.Ports > 0 {
		return serverNIC{}, fmt.Errorf("%s is a switch; a server's aggregator is a SmartNIC: use bluefield3", a.Name)
	}
	n, err := hw.LookupSmartNIC(c.INA.ServerNIC)
	if err != nil {
		return serverNIC{}, err
	}
	sum := a.SumBytesPerSec
	if c.INA.SumRate > 0 {
		sum = float64(c.INA.SumRate)
	}
	return serverNIC{name: a.Name, dma: n.DMABytesPerSec, sum: sum}, nil
}

// Validate reports every problem of c, each at its key.
func (c Config) Validate() error {
	_, err := c.resolve()
	return err
}

// resolve validates c and resolves it into the setup the replays read,
// looking every name up once: every problem is reported, each at its key.
func (c Config) resolve() (*setup, error) {
	st := &setup{cfg: c, models: map[string]modelPlan{}}
	var p []error
	add := func(key, format string, a ...any) { p = append(p, units.Invalid(key, format, a...)) }
	switch c.Jobs.Source {
	case SourceList:
		if strings.TrimSpace(c.Jobs.List) == "" {
			add("jobs.list", "empty; name a job list (num_gpu,submit_time,iterations,model)")
		}
	case SourceTrace:
		if strings.TrimSpace(c.Jobs.Trace) == "" {
			add("jobs.trace", "empty; name a cluster trace")
		}
		if err := st.addModel(c.Jobs.Model); err != nil {
			add("jobs.model", "%v", err)
		}
	case SourceSynthetic:
		s := c.Jobs.Synthetic
		if s.Jobs < 1 || s.Jobs > 10_000_000 {
			add("jobs.synthetic.jobs", "%d; want 1 to 10,000,000 jobs", s.Jobs)
		}
		if r := float64(s.Rate); !(r >= 0) || r > 1e6 {
			add("jobs.synthetic.rate", "%v/s; want 0/s (all at once) to 1e6/s", r)
		}
		if len(s.GPUs) == 0 {
			add("jobs.synthetic.gpus", "empty; give the GPU counts a job may ask for, e.g. [4, 8]")
		}
		for i, n := range s.GPUs {
			if n < 1 {
				add(fmt.Sprintf("jobs.synthetic.gpus[%d]", i), "%d; want at least 1 GPU", n)
			}
		}
		if len(s.GPUWeights) > 0 && len(s.GPUWeights) != len(s.GPUs) {
			add("jobs.synthetic.gpu_weights", "%d weights for %d GPU counts; give one per entry of gpus, or none", len(s.GPUWeights), len(s.GPUs))
		}
		sum := 0.0
		for i, w := range s.GPUWeights {
			if !(w >= 0) || w > 1e12 {
				add(fmt.Sprintf("jobs.synthetic.gpu_weights[%d]", i), "%v; want a weight >= 0", w)
			}
			sum += w
		}
		if len(s.GPUWeights) > 0 && sum == 0 {
			add("jobs.synthetic.gpu_weights", "every weight is 0; give at least one a weight above 0")
		}
		if len(s.ModelWeights) > 0 && len(s.ModelWeights) != len(s.Models) {
			add("jobs.synthetic.model_weights", "%d weights for %d models; give one per entry of models, or none", len(s.ModelWeights), len(s.Models))
		}
		msum := 0.0
		for i, w := range s.ModelWeights {
			if !(w >= 0) || w > 1e12 {
				add(fmt.Sprintf("jobs.synthetic.model_weights[%d]", i), "%v; want a weight >= 0", w)
			}
			msum += w
		}
		if len(s.ModelWeights) > 0 && msum == 0 {
			add("jobs.synthetic.model_weights", "every weight is 0; give at least one a weight above 0")
		}
		if len(s.Models) == 0 {
			add("jobs.synthetic.models", "empty; name at least one of %s", strings.Join(train.Models(), ", "))
		}
		for i, m := range s.Models {
			if err := st.addModel(m); err != nil {
				add(fmt.Sprintf("jobs.synthetic.models[%d]", i), "%v", err)
			}
		}
		if s.MinIterations < 1 {
			add("jobs.synthetic.min_iterations", "%d; want at least 1 iteration", s.MinIterations)
		}
		if s.MaxIterations < s.MinIterations {
			add("jobs.synthetic.max_iterations", "%d is below min_iterations %d", s.MaxIterations, s.MinIterations)
		}
	default:
		add("jobs.source", "%q; use %s, %s or %s", c.Jobs.Source, SourceList, SourceTrace, SourceSynthetic)
	}
	if c.Jobs.Skip < 0 || c.Jobs.Limit < 0 {
		add("jobs", "skip %d, limit %d; want both >= 0", c.Jobs.Skip, c.Jobs.Limit)
	}
	if !(c.Jobs.IterationScale >= 1) || c.Jobs.IterationScale > 1e9 {
		add("jobs.iteration_scale", "%v; want a factor >= 1", c.Jobs.IterationScale)
	}
	if !(c.Jobs.Compress >= 1) || c.Jobs.Compress > 1e9 {
		add("jobs.compress", "%v; want a factor >= 1", c.Jobs.Compress)
	}
	cl := c.Cluster
	if cl.Servers < 1 || cl.Servers > 4096 {
		add("cluster.servers", "%d; want 1 to 4096 servers", cl.Servers)
	}
	if cl.GPUsPerServer < 1 || cl.GPUsPerServer > 16 {
		add("cluster.gpus_per_server", "%d; want 1 to 16", cl.GPUsPerServer)
	}
	if s, err := gpu.Lookup(cl.GPU); err != nil {
		add("cluster.gpu", "%v", err)
	} else if !(s.RelSpeed["resnet50"] > 0) {
		add("cluster.gpu", "%s has no sourced speed to time training on", s.Name)
	}
	if !(float64(cl.NIC) > 0) || float64(cl.NIC) > 1e13 {
		add("cluster.nic", "%v; want a line rate above 0, e.g. 100Gbps", cl.NIC)
	}
	if cl.NetLatency < 0 {
		add("cluster.net_latency", "%v is negative", cl.NetLatency)
	}
	if !slices.Contains(train.Precisions(), cl.Precision) {
		add("cluster.precision", "%q; use %s", cl.Precision, strings.Join(train.Precisions(), " or "))
	}
	if l, err := hw.LookupIntraServerLink(cl.Intra); err != nil {
		add("cluster.intra", "%v", err)
	} else {
		st.intra = l
	}
	if !slices.Contains([]string{AllReduceRing, AllReduceHierarchical, AllReducePS, AllReducePSDedicated}, c.Sync.AllReduce) {
		add("sync.all_reduce", "%q; use %s, %s, %s or %s", c.Sync.AllReduce, AllReduceRing, AllReduceHierarchical, AllReducePS, AllReducePSDedicated)
	}
	if cl.MTU < 256 || cl.MTU > 9000 {
		add("cluster.mtu", "%d; want a packet payload of 256 to 9000 B (RoCEv2: 4096)", cl.MTU)
	}
	if !(c.Sync.BytesPerValue > 0 && c.Sync.BytesPerValue <= 8) {
		add("sync.bytes_per_value", "%v; want 1 to 8 bytes (4: FP32, 2: FP16)", c.Sync.BytesPerValue)
	}
	if c.Sync.Overlap != "none" && c.Sync.Overlap != "full" {
		add("sync.overlap", "%q; use none or full", c.Sync.Overlap)
	}
	d, err := c.device()
	st.dev = d
	if err != nil {
		add("ina.device", "%v", err)
	} else {
		if d.Ports > 0 && cl.Servers > d.Ports {
			add("cluster.servers", "%d servers, but the %s switch has %d ports: one worker server per port; use at most %d", cl.Servers, d.Name, d.Ports, d.Ports)
		}
		if d.Ports > 0 && c.INA.SumRate > 0 && c.INA.Placement != PlacementServer {
			add("ina.sum_rate", "%v, but %s is a switch, which sums at line rate on every port; sum_rate is a SmartNIC's (bluefield3)", c.INA.SumRate, d.Name)
		}
	}
	if float64(c.INA.SumRate) > 1e13 {
		add("ina.sum_rate", "%v; want at most 10 TB/s", c.INA.SumRate)
	}
	if c.INA.Slots != FromDevice && (c.INA.Slots < 1 || c.INA.Slots > MaxSlots) {
		add("ina.slots", "%d; a pool aggregates nothing without slots: want 1 to %d slots (16 times a BlueField-3's pool; the pool's tables take 8 bytes a slot), or device for the device's own (to run without in-network aggregation, use the policy none)", int64(c.INA.Slots), MaxSlots)
	}
	if c.INA.Window != FromDevice && (c.INA.Window < 1 || c.INA.Window > MaxSlots) {
		add("ina.window", "%d; want 1 to %d slots, or device for the device's per-job figure", int64(c.INA.Window), MaxSlots)
	} else if err == nil && c.INA.Hash == ina.HashCRC && min(d.PerJobSlots, d.Slots) > ina.CRCMaxWindow {
		// ATP's switch indexes its aggregators by a CRC truncated to 16
		// bits: a window past 65,536 has slots its hash cannot name (and
		// laying it out would never end).
		add("ina.window", "%d slots on a pool of %d under hash crc: ATP's hash is 16 bits and names at most %d aggregators; use a window of at most %d, or hash uniform", d.PerJobSlots, d.Slots, ina.CRCMaxWindow, ina.CRCMaxWindow)
	}
	if c.INA.ChunkRTT != RTTFromDevice && (c.INA.ChunkRTT < 1 || c.INA.ChunkRTT > RTTOrDevice(engine.Seconds(1))) {
		add("ina.chunk_rtt", "%v; a chunk holds its aggregator for its round trip, so it must take some time: want above 0 and at most 1s, or device for the device's", units.Duration(c.INA.ChunkRTT))
	}
	if c.INA.SlotBytes != BytesFromDevice {
		if base, berr := hw.LookupAggregator(c.INA.Device); berr == nil {
			if mem := float64(base.Slots) * base.SlotBytes; c.INA.SlotBytes < 1 || float64(c.INA.SlotBytes) > mem {
				add("ina.slot_bytes", "%v; want a chunk of at least 1 B and at most the %s's memory, %v (its %d slots of %v), or device", units.Bytes(c.INA.SlotBytes), base.Name, units.Bytes(mem), base.Slots, units.Bytes(base.SlotBytes))
			} else if c.INA.Slots != FromDevice && float64(c.INA.SlotBytes) != base.SlotBytes && float64(c.INA.Slots)*float64(c.INA.SlotBytes) > mem {
				// Each alone in range, together past the memory: a pool
				// of slots of another chunk than the device's must fit
				// its memory (more slots of the device's own chunk are
				// the what-if that ina.slots allows).
				add("ina.slot_bytes", "%v with ina.slots %d is %v of aggregators, more than the %s's memory, %v: use at most %d slots of this chunk (or ina.slots device, which takes the memory's), or a smaller chunk", units.Bytes(c.INA.SlotBytes), int64(c.INA.Slots), units.Bytes(float64(c.INA.Slots)*float64(c.INA.SlotBytes)), base.Name, units.Bytes(mem), int64(mem/float64(c.INA.SlotBytes)))
			}
		}
	}
	if h := c.INA.ChunkHeaderBytes; h != BytesFromDevice && h > 9000 {
		add("ina.chunk_header_bytes", "%v; want 0 B to 9000 B (a jumbo frame), or device for the device's", units.Bytes(h))
	}
	if !slices.Contains(Placements(), c.INA.Placement) {
		add("ina.placement", "%q; use %s", c.INA.Placement, strings.Join(Placements(), " or "))
	}
	// Checked under rack too, so that a wrong name is not kept unseen.
	if n, nerr := c.serverNIC(); nerr != nil {
		add("ina.server_nic", "%v", nerr)
	} else {
		st.snic = n
	}
	if c.INA.Use != UseWhenFaster && c.INA.Use != UseAlways {
		add("ina.use", "%q; use %s or %s", c.INA.Use, UseWhenFaster, UseAlways)
	}
	if !slices.Contains(Fallbacks(), c.INA.Fallback) {
		add("ina.fallback", "%q; use %s", c.INA.Fallback, strings.Join(Fallbacks(), " or "))
	}
	if !slices.Contains(ina.HashNames(), c.INA.Hash) {
		add("ina.hash", "%q; use %s", c.INA.Hash, strings.Join(ina.HashNames(), " or "))
	}
	if len(c.Policies) == 0 {
		add("policies", "empty; list some of %s", strings.Join(ina.Names(), ", "))
	}
	seen := map[string]bool{}
	for i, name := range c.Policies {
		if seen[name] {
			add(fmt.Sprintf("policies[%d]", i), "%q listed twice", name)
		}
		seen[name] = true
		if err == nil {
			// The arguments do not depend on the pool's size: checked on a
			// pool of one slot, so that validate allocates nothing the
			// input sizes (ina.slots is bounded above for the run).
			pool := ina.Pool{Slots: 1, PerJob: 1, Hash: ina.HashCRC}
			if _, perr := ina.New(name, pool, c.PolicyArgs[name]); perr != nil {
				key := fmt.Sprintf("policies[%d]", i)
				if _, nerr := ina.New(name, pool, nil); nerr == nil {
					key = "policy_args." + name // the name is known: its arguments are at fault
				}
				add(key, "%v", perr)
			}
		}
	}
	for name := range c.PolicyArgs {
		if !seen[name] && len(c.PolicyArgs[name]) > 0 { // an emptied entry ({}) is as good as none

			add("policy_args."+name, "arguments for a policy that is not in policies (%s); list it there, or drop its arguments: --set %s.policy_args={} clears them all, --set '%s.policy_args.%s={}' this one's", strings.Join(c.Policies, ", "), "training", "training", name)
		}
	}
	if c.Baseline != "" && !seen[c.Baseline] {
		add("baseline", "%q is not among policies (%s); list it there, or leave baseline empty", c.Baseline, strings.Join(c.Policies, ", "))
	}
	if c.Seeds < 1 || c.Seeds > 1000 {
		add("seeds", "%d; want 1 to 1000", c.Seeds)
	}
	c.checkTimes(add)
	if err := errors.Join(p...); err != nil {
		return nil, err
	}
	st.need = st.inFlight()
	st.inaWire = (st.dev.SlotBytes + st.dev.ChunkHeaderBytes) / st.dev.SlotBytes
	st.hostWire = (float64(c.Cluster.MTU) + hw.RoCEv2PacketBytes) / float64(c.Cluster.MTU)
	return st, nil
}
