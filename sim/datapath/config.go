package datapath

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw"
	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/units"
)

// Path names, as they appear in a scenario's datapath.paths and in results.
const (
	PathTCP         = "tcp"
	PathGPUDirect   = "gpudirect"
	PathHostRDMA    = "host-rdma"
	PathConspirator = "conspirator"
	// PathLoopback is not one of the paper's paths: it is the request path
	// a plain Linux host can run for real (realhw/host), which
	// calibrate --validate runs here and there to check the host-CPU model.
	PathLoopback = "loopback"
)

// AllPaths lists the four pipelines in the paper's order.
var AllPaths = []string{PathTCP, PathGPUDirect, PathHostRDMA, PathConspirator}

// KnownPaths are the names datapath.paths accepts: the paper's four and
// the loopback path.
var KnownPaths = append(slices.Clone(AllPaths), PathLoopback)

// Config is the datapath section of a scenario: clients, the request, the
// GPUs, the host, the network and the SmartNIC. Defaults returns the
// values of the paper/e2e scenario; every default names its source in
// hw's catalog (hw.Provenance) or in the comment beside it.
type Config struct {
	Paths    []string       `yaml:"paths" doc:"pipelines to simulate: tcp, gpudirect, host-rdma, conspirator (the paper's four), or loopback (the request path a plain host runs for real: client and server threads, loopback TCP, memcpy, CPU compute; what calibrate --validate checks)" default:"[tcp, gpudirect, host-rdma, conspirator]"`
	Clients  ClientsConfig  `yaml:"clients" doc:"the clients sending inference requests"`
	Request  RequestConfig  `yaml:"request" doc:"what one request carries and computes"`
	GPUs     []GPUConfig    `yaml:"gpus" doc:"GPU instances serving requests" default:"[{type: a100-80gb, count: 2}]" source:"paper: BlueField-3 + A100 testbed (conspirator.md); two GPUs so that the scheduler has a choice"`
	Host     HostConfig     `yaml:"host" doc:"the server's host CPU and software stack"`
	Network  NetworkConfig  `yaml:"network" doc:"the network between clients and server"`
	SmartNIC SmartNICConfig `yaml:"smartnic" doc:"the off-path SmartNIC of the conspirator path"`

	// WarmupRequests are left out of every statistic: the first requests
	// see an idle, empty system.
	WarmupRequests int `yaml:"warmup_requests" doc:"requests, counted over all clients in issue order, left out of the statistics" default:"100" source:"choice: run control; the first requests see an idle, empty system"`
	// MaxInFlight stops a diverging run: an open-loop load above capacity
	// would otherwise grow its queues without bound.
	MaxInFlight int `yaml:"max_in_flight" doc:"requests in flight at which an open-loop run is stopped and flagged unstable" default:"100000" source:"choice: run control; far above any stable queue of the default scenarios"`
	// RecordRequests keeps one record per request for CSV output.
	RecordRequests bool `yaml:"record_requests" doc:"keep per-request records (stage times) for CSV output" default:"true"`

	// Overrides lists the keys a scenario set to other values than their
	// part's (ResolveParts); it is an output, never read from a file.
	Overrides []PartOverride `yaml:"-" json:"overrides,omitempty"`
}

// ClientsConfig describes the clients.
type ClientsConfig struct {
	Count int `yaml:"count" doc:"number of clients, one RDMA queue pair (or TCP connection) each" default:"4" source:"choice: paper/e2e workload; four clients saturate two GPUs"`
	// Mode closed: each client sends its next request a think time after
	// the previous reply. open: Poisson arrivals at Rate per client,
	// whatever the replies.
	Mode      string         `yaml:"mode" doc:"closed (think time after each reply) or open (Poisson arrivals)" default:"closed" source:"choice: paper/e2e workload (completion time per request)"`
	ThinkTime units.Duration `yaml:"think_time" doc:"closed loop: mean of the exponential think time between a reply and the next request" default:"1ms" source:"choice: paper/e2e workload"`
	Rate      units.Rate     `yaml:"rate" doc:"open loop: Poisson arrival rate per client" default:"100/s" source:"choice: open-loop scenarios set their own rate"`
	Requests  int            `yaml:"requests" doc:"requests each client sends; a run whose per-request data would need over 8 GiB (about 1.1 KB per request recorded, 16 B with record_requests: false) is refused at validation" default:"1000" source:"choice: run length"`
	// GPUChoice is how a gpudirect client picks the GPU it writes into:
	// it cannot see the server's load.
	GPUChoice string `yaml:"gpu_choice" doc:"gpudirect path: round-robin or hash (client id), both load-unaware" default:"round-robin" source:"choice: a client cannot see the server's load (conspirator.md, path 2)"`
}

// RequestConfig describes one inference request.
type RequestConfig struct {
	Model string `yaml:"model" doc:"model name known to the GPU compute tables (resnet50, bert)" default:"resnet50" source:"choice: a standard vision model with published compute times (hw/gpu); the paper does not name its model"`
	Batch int    `yaml:"batch" doc:"items per request" default:"8" source:"choice: moving the batch costs more than the fixed overheads (datapath.Defaults)"`
	// InputBytesPerItem: a 224x224x3 image in INT8 is 150,528 bytes, the
	// precision of the TensorRT INT8 times of the default stack.
	InputBytesPerItem units.Bytes `yaml:"input_bytes_per_item" doc:"input tensor bytes per item (224x224x3 INT8 = 150528B; FP16 301056B)" default:"150528B" source:"derived: 224 x 224 x 3 values x 1 B (INT8 input, the precision of the tensorrt stack's MLPerf times; NVIDIA's MLPerf ResNet-50 harness feeds INT8)"`
	// OutputBytesPerItem: 1000 FP16 logits.
	OutputBytesPerItem units.Bytes `yaml:"output_bytes_per_item" doc:"result bytes per item returned to the client (1000 FP16 logits = 2000B)" default:"2000B" source:"derived: 1000 logits x 2 B (FP16)"`
	// Stack is the serving software whose compute times the GPUs take
	// (gpu.ComputeModel). See Defaults for the choice.
	Stack string `yaml:"stack" doc:"serving stack of the GPU compute times: tensorrt (TensorRT INT8 from MLPerf: batch-1 latency plus the Offline per-image cost per further image; ResNet-50 only) or pytorch (the framework-level tables as measured)" default:"tensorrt" source:"measured: MLPerf Inference A100-SXM-80GB ResNet-50 SingleStream 461 us (v2.1), Offline 42,379/s (v3.0), 1g.10gb SingleStream 678 us (hardware.md §6e, §7)"`
	// ComputeTime overrides the GPU compute-time table when non-zero.
	ComputeTime units.Duration `yaml:"compute_time" doc:"GPU time of one request on a whole GPU (on the loopback path, its CPU time); 0s takes it from the GPU compute tables" default:"0s"`
}

// GPUConfig is a group of identical GPU instances.
type GPUConfig struct {
	Type    string `yaml:"type" doc:"GPU type from the catalog (a100-80gb, h100-80gb, ...)"`
	Profile string `yaml:"profile" doc:"MIG profile of each instance; empty for the whole GPU"`
	Count   int    `yaml:"count" doc:"number of instances"`
}

// HostConfig describes the server's host CPU and its software costs. All
// costs are core-time on one unloaded host core.
type HostConfig struct {
	CPU             string          `yaml:"cpu" doc:"host CPU from the catalog (xeon-8380-2s, xeon-8380)" default:"xeon-8380-2s" source:"estimate: a host matching the 800 W CPU of the paper's cost table"`
	Cores           int             `yaml:"cores" doc:"physical cores serving requests and background load" source:"hw:host_cpu.xeon-8380-2s.cores"`
	Clock           units.Frequency `yaml:"clock" doc:"core frequency turning TCP cycles into time" source:"hw:host_cpu.xeon-8380-2s.clock"`
	BackgroundLoad  units.Fraction  `yaml:"background_load" doc:"background CPU load, 0% to below 100%: the share of each core's time that other work takes" default:"0%" source:"choice: unloaded baseline; the paper also shows 80%"`
	BackgroundModel string          `yaml:"background_model" doc:"per-core (a stressor on every core, stress-ng --cpu-load, fluid time-sharing), threads (background_load x cores busy threads) or slice (per-core stressors that a waking thread preempts, except for a fraction wakeup_miss of wake-ups that wait up to sched_slice; see hw.BackgroundSlice)" default:"per-core" source:"anecdotal: stress-ng --cpu-load noisy neighbour (hardware.md §4)"`
	SchedSlice      units.Duration  `yaml:"sched_slice" doc:"slice model: longest wait of a wake-up for a background thread's slice" default:"hw:host.sched_slice"`
	WakeupMiss      units.Fraction  `yaml:"wakeup_miss" doc:"slice model: fraction of wake-ups onto a busy core that wait for the slice" default:"hw:host.wakeup_miss"`
	IdleWake        units.Duration  `yaml:"idle_wake" doc:"delay of a thread's wake-up on a core with no background load (idle-state exit; a halted vCPU): the receive of the tcp and loopback paths; 0 under any background load" default:"hw:host.idle_wake"`
	WakeupMissFloor units.Fraction  `yaml:"wakeup_miss_floor" doc:"slice model: share of wake-ups that wait for a slice whenever any background load runs, added to background_load x wakeup_miss" default:"hw:host.wakeup_miss_floor"`
	Interference    units.Ratio     `yaml:"interference" doc:"alpha: host-side work stretched by 1 + alpha x background_load (cache and memory contention)" default:"hw:host.interference"`
	// InputCopy is how the host copies a request into the GPU on the tcp
	// and host-rdma paths; see Defaults for why pageable.
	InputCopy      string          `yaml:"input_copy" doc:"pageable or pinned cudaMemcpy of the input on the tcp and host-rdma paths" default:"pageable" source:"choice: the paper's unmodified PyTorch baseline copies an unregistered buffer (datapath.Defaults)"`
	GPULink        string          `yaml:"gpu_link" doc:"PCIe link of each GPU (gen4-x16, gen5-x16)" default:"gen4-x16" source:"vendor: A100 host interface, PCIe Gen4 x16"`
	PinnedH2D      units.Bandwidth `yaml:"pinned_h2d" doc:"pinned cudaMemcpy rate over the GPU link" source:"hw:pcie.gen4-x16.pinned_h2d"`
	PageableFactor units.Ratio     `yaml:"pageable_factor" doc:"pageable over pinned cudaMemcpy rate" default:"hw:host.pageable_factor"`
	// PageableD2HFactor is PageableFactor for the copy of the result back
	// into pageable memory; unset, it is PageableFactor (ResolveParts,
	// derivedKeys).
	PageableD2HFactor units.Ratio     `yaml:"pageable_d2h_factor" doc:"pageable over pinned cudaMemcpy rate of the result's copy back from the GPU (device to host); unset, host.pageable_factor" source:"estimate: the H2D factor, the catalog having no D2H figure; a real H200 gives 20% D2H against 24% H2D (realhw/data/h200-2026-11-27/device-check)"`
	MemcpyIssue       units.Duration  `yaml:"memcpy_issue" doc:"fixed CPU cost of one cudaMemcpy" default:"hw:host.memcpy_issue"`
	KernelLaunch      units.Duration  `yaml:"kernel_launch" doc:"CPU cost of launching the request's kernel" default:"hw:host.kernel_launch"`
	SyncWait          units.Duration  `yaml:"sync_wait" doc:"CPU time from GPU completion to the host thread's return from synchronize" default:"hw:host.sync_wait"`
	MemcpyBandwidth   units.Bandwidth `yaml:"memcpy_bandwidth" doc:"one thread's host memcpy rate (the loopback path's copy)" default:"hw:host.memcpy_bandwidth"`
	PollCompletion    units.Duration  `yaml:"poll_completion" doc:"CPU cost of one completion seen by a polling thread" default:"hw:host.poll_completion"`
	PostSend          units.Duration  `yaml:"post_send" doc:"CPU cost of posting one RDMA work request" default:"hw:host.post_send"`
	// DecisionTime is the scheduler's CPU time per decision on a host
	// core; the SoC takes DecisionTime / arm_speed.
	DecisionTime       units.Duration `yaml:"decision_time" doc:"scheduling decision CPU time on one host core" default:"2us" source:"estimate: a least-loaded choice over a few GPUs plus bookkeeping (DefaultDecisionTime); plausible 0.5 us (a bare comparison of queue lengths) to 10 us (a cost model per GPU)" plausible:"500ns,10us"`
	TCPRxCyclesPerByte float64        `yaml:"tcp_rx_cycles_per_byte" doc:"host TCP receive cost per payload byte" default:"hw:host.tcp_rx_cycles_per_byte"`
	TCPTxCyclesPerByte float64        `yaml:"tcp_tx_cycles_per_byte" doc:"host TCP send cost per payload byte" default:"hw:host.tcp_tx_cycles_per_byte"`
	TCPRxPerMessage    units.Duration `yaml:"tcp_rx_per_message" doc:"host TCP receive cost per message (system call, wake-up)" default:"hw:host.tcp_rx_per_message"`
	TCPTxPerMessage    units.Duration `yaml:"tcp_tx_per_message" doc:"host TCP send cost per message" default:"hw:host.tcp_tx_per_message"`
	Price              units.Money    `yaml:"price" doc:"price charged to the host CPU in the cost table" source:"hw:host_cpu.xeon-8380-2s.price"`
	Power              units.Power    `yaml:"power" doc:"power charged to the host CPU in the cost table" source:"hw:host_cpu.xeon-8380-2s.power"`
	// Spread is the distribution of each host stage's time over its fixed
	// cost (see Spread): constant unless a calibration profile sets it.
	Spread HostSpreads `yaml:"spread" doc:"spread of the host stages' costs over their fixed parts (constant without a calibration profile: the catalog states none)"`
}

// NetworkConfig describes the client-server network.
type NetworkConfig struct {
	NIC        string          `yaml:"nic" doc:"RDMA NIC of clients and server (connectx6, connectx7)" default:"connectx6" source:"choice: the ConnectX generation of a 200 Gb/s BlueField-3 port"`
	LineRate   units.Bandwidth `yaml:"line_rate" doc:"line rate of every port" source:"hw:nic.connectx6.line_rate"`
	Efficiency units.Fraction  `yaml:"efficiency" doc:"large-message goodput over line rate" source:"hw:nic.connectx6.efficiency"`
	Latency    units.Duration  `yaml:"latency" doc:"one-way small-message latency NIC to NIC" source:"hw:nic.connectx6.one_way_latency"`
	PerMessage units.Duration  `yaml:"per_message" doc:"NIC per-message overhead (1 / message rate)" source:"hw:nic.connectx6.per_message"`
	// SameRootComplex: GPUDirect writes run at the GPU link's rate when NIC
	// and GPU share a PCIe root complex, else at CrossRootComplexFactor.
	SameRootComplex        bool           `yaml:"same_root_complex" doc:"NIC and GPUs share a PCIe root complex (GPUDirect at full rate)" default:"true" source:"vendor: the layout NVIDIA's GPUDirect RDMA manual recommends"`
	CrossRootComplexFactor units.Fraction `yaml:"cross_root_complex_factor" doc:"GPUDirect rate factor across root complexes" default:"50%" source:"estimate: no sourced factor (hw.DefaultCrossRootComplexFactor); plausible 25% to 100% (a shared root complex)" plausible:"25%,100%"`
	MaxQPs                 int            `yaml:"max_qps" doc:"queue pairs the server NIC supports; one per client" default:"262144" source:"anecdotal: max_qp 262144 in ibv_devinfo -v of mlx5 devices"`
}

// SmartNICConfig describes the SmartNIC of the conspirator path.
type SmartNICConfig struct {
	Model         string          `yaml:"model" doc:"SmartNIC from the catalog (bluefield3, bluefield2)" default:"bluefield3" source:"paper: BlueField-3 + A100 testbed (conspirator.md)"`
	ArmCores      int             `yaml:"arm_cores" doc:"Arm cores serving requests" source:"hw:smartnic.bluefield3.arm_cores"`
	ArmSpeed      units.Ratio     `yaml:"arm_speed" doc:"one Arm core's speed relative to one host core" source:"hw:smartnic.bluefield3.arm_speed"`
	LineRate      units.Bandwidth `yaml:"line_rate" doc:"the SmartNIC port's line rate" source:"hw:smartnic.bluefield3.line_rate"`
	BufferBytes   units.Bytes     `yaml:"buffer" doc:"on-card buffer for incoming requests" default:"256MiB" source:"choice: 111 default requests (2.4 MB each) in a slice of the BlueField-3's 32 GB DRAM"`
	BufferPolicy  string          `yaml:"buffer_policy" doc:"when the buffer is full: wait or drop" default:"wait" source:"choice: lossless, as RDMA flow control back-pressures a full receiver"`
	DMABandwidth  units.Bandwidth `yaml:"dma_bandwidth" doc:"SoC-to-GPU DMA rate" source:"hw:smartnic.bluefield3.dma_bandwidth"`
	DMAPerOp      units.Duration  `yaml:"dma_per_op" doc:"DMA engine cost per operation" source:"hw:smartnic.bluefield3.dma_per_op"`
	NotifyLatency units.Duration  `yaml:"notify_latency" doc:"SoC-to-host notification (a posted PCIe write the host polls)" default:"1us" source:"estimate: a posted PCIe write the host polls, plus room for the DOCA completion path (DefaultNotifyLatency); plausible 0.5 us (the PCIe write alone) to 5 us (a DOCA completion path through the kernel)" plausible:"500ns,5us"`
	Price         units.Money     `yaml:"price" doc:"price charged to the SmartNIC in the cost table" source:"hw:smartnic.bluefield3.price"`
	Power         units.Power     `yaml:"power" doc:"power charged to the SmartNIC in the cost table" source:"hw:smartnic.bluefield3.max_power"`
}

// Defaults returns the paper/e2e configuration: four clients in a closed
// loop sending ResNet-50 batches of eight 224x224x3 INT8 images to two
// A100-80GB GPUs behind a dual-socket Xeon 8380 host with a ConnectX-6
// (200 Gb/s) and a BlueField-3.
//
// Why these choices:
//   - The request: a batch of 8 images (2.4 MB) is large enough that moving
//     it costs more than the fixed per-request overheads, as in serving
//     systems that batch, and small enough to be a latency-bound request.
//     The path differences scale with bytes moved; see the report for
//     batch 1 and 32.
//   - stack tensorrt, an optimized engine rather than PyTorch eager: the
//     compute tables (hw/gpu) are framework-level, ResNet-50 at batch 8
//     takes 5.0 ms on an A100, kernel-launch bound. Against 5 ms, the whole
//     data path is under 5% of a request and no data path could show the
//     paper's 15%. The paper's visible gaps imply a request whose GPU time
//     is comparable to its data movement, i.e. an optimized engine. Its
//     time per batch is MLPerf's, measured: the batch-1 latency (461 us)
//     plus the Offline per-image cost (23.6 us) for each further image,
//     626 us at batch 8 (gpu.TensorRTTime). An earlier version divided the
//     framework tables by a speed-up of 13.8, which divides a launch-bound
//     floor too (batch 8 ran in 362 us, faster than MLPerf's batch 1);
//     inputs are INT8, the precision those times are for.
//   - input_copy pageable: the paper's baseline ("Conspirator without
//     SmartNIC") is existing PyTorch code in which the host builds a CPU
//     tensor over the RDMA receive buffer and moves it to the GPU; the
//     buffer is pinned by ibv_reg_mr but unknown to CUDA, so cudaMemcpy
//     treats it as pageable and stages it through the CPU (hardware.md §5,
//     pageable ~0.4 of pinned). Conspirator's one-line change (conspirator.md)
//     is exactly the creation of that input tensor, on GPU memory the SoC
//     has filled. pinned is the alternative for a baseline tuned with
//     cudaHostRegister; it removes most of the host-rdma penalty.
func Defaults() Config {
	cpu, _ := hw.LookupHostCPU("xeon-8380-2s")
	nic, _ := hw.LookupNIC("connectx6")
	bf3, _ := hw.LookupSmartNIC("bluefield3")
	link, _ := hw.LookupPCIe("gen4-x16")
	c := hw.DefaultHostCosts
	return Config{
		Paths: slices.Clone(AllPaths),
		Clients: ClientsConfig{
			Count:     4,
			Mode:      ModeClosed,
			ThinkTime: units.Duration(engine.Millisecond),
			Rate:      100,
			Requests:  1000,
			GPUChoice: ChoiceRoundRobin,
		},
		Request: RequestConfig{
			Model:              "resnet50",
			Batch:              8,
			InputBytesPerItem:  224 * 224 * 3,
			OutputBytesPerItem: 1000 * 2,
			Stack:              string(gpu.StackTensorRT),
		},
		GPUs: []GPUConfig{{Type: "a100-80gb", Count: 2}},
		Host: HostConfig{
			CPU:                cpu.Name,
			Cores:              cpu.Cores,
			Clock:              units.Frequency(cpu.ClockHz),
			BackgroundLoad:     0,
			BackgroundModel:    string(hw.BackgroundPerCore),
			SchedSlice:         units.Duration(c.SchedSlice),
			WakeupMiss:         units.Fraction(c.WakeupMiss),
			WakeupMissFloor:    units.Fraction(c.WakeupMissFloor),
			IdleWake:           units.Duration(c.IdleWake),
			Interference:       units.Ratio(c.Interference),
			MemcpyBandwidth:    units.Bandwidth(c.MemcpyBytesPerSec),
			InputCopy:          CopyPageable,
			GPULink:            link.Name,
			PinnedH2D:          units.Bandwidth(link.PinnedH2DBytesPerSec),
			PageableFactor:     units.Ratio(c.PageableFactor),
			PageableD2HFactor:  units.Ratio(c.PageableFactor),
			MemcpyIssue:        units.Duration(c.MemcpyIssue),
			KernelLaunch:       units.Duration(c.KernelLaunch),
			SyncWait:           units.Duration(c.SyncWait),
			PollCompletion:     units.Duration(c.PollCompletion),
			PostSend:           units.Duration(c.PostSend),
			DecisionTime:       units.Duration(DefaultDecisionTime),
			TCPRxCyclesPerByte: c.TCPRxCyclesPerByte,
			TCPTxCyclesPerByte: c.TCPTxCyclesPerByte,
			TCPRxPerMessage:    units.Duration(c.TCPRxPerMessage),
			TCPTxPerMessage:    units.Duration(c.TCPTxPerMessage),
			Price:              units.Money(cpu.PriceUSD),
			Power:              units.Power(cpu.PowerW),
			Spread:             HostSpreads{Correlation: 0, Network: ConstantSpread(), Copy: ConstantSpread(), CPUWork: ConstantSpread(), Reply: ConstantSpread()},
		},
		Network: NetworkConfig{
			NIC:                    nic.Name,
			LineRate:               units.Bandwidth(nic.LineRateBitsPerSec / 8),
			Efficiency:             units.Fraction(nic.Efficiency),
			Latency:                units.Duration(nic.OneWayLatency),
			PerMessage:             units.Duration(nic.PerMessage),
			SameRootComplex:        true,
			CrossRootComplexFactor: hw.DefaultCrossRootComplexFactor,
			MaxQPs:                 DefaultMaxQPs,
		},
		SmartNIC: SmartNICConfig{
			Model:         bf3.Name,
			ArmCores:      bf3.ArmCores,
			ArmSpeed:      units.Ratio(bf3.ArmSpeed),
			LineRate:      units.Bandwidth(bf3.NIC.LineRateBitsPerSec / 8),
			BufferBytes:   256 << 20,
			BufferPolicy:  string(hw.BufferWait),
			DMABandwidth:  units.Bandwidth(bf3.DMABytesPerSec),
			DMAPerOp:      units.Duration(bf3.DMAPerOp),
			NotifyLatency: units.Duration(DefaultNotifyLatency),
			Price:         units.Money(bf3.PriceUSD),
			Power:         units.Power(bf3.MaxPowerW),
		},
		WarmupRequests: 100,
		MaxInFlight:    100000,
		RecordRequests: true,
	}
}

// Enumerations of string-valued settings.
const (
	ModeClosed       = "closed"
	ModeOpen         = "open"
	ChoiceRoundRobin = "round-robin"
	ChoiceHash       = "hash"
	CopyPageable     = "pageable"
	CopyPinned       = "pinned"
)

// Defaults without a catalog entry.
const (
	// DefaultDecisionTime (E): a least-loaded choice over a few GPUs plus
	// the request bookkeeping around it; to be replaced by the measured
	// decision time of the policies package.
	DefaultDecisionTime = 2 * engine.Microsecond
	// DefaultNotifyLatency (E): the SoC tells the host that a request's
	// data is in GPU memory with a posted PCIe write into a host ring the
	// host polls; a posted write lands in well under a microsecond, 1 us
	// leaves room for the DOCA completion path.
	DefaultNotifyLatency = engine.Microsecond
	// DefaultMaxQPs (A): "max_qp: 262144" in ibv_devinfo -v output of
	// mlx5 (ConnectX-5/6) devices.
	DefaultMaxQPs = 262144
)

// problems collects validation messages, each naming the key.
type problems []error

func (p *problems) addf(key, format string, args ...any) {
	*p = append(*p, &fieldProblem{key: key, msg: fmt.Sprintf(format, args...)})
}

// fieldProblem is one invalid key. Its ConfigField and ConfigMessage
// methods let the scenario loader place it at the key's own line in the
// file; Error names the full key path for callers outside the loader.
type fieldProblem struct{ key, msg string }

func (f *fieldProblem) Error() string         { return "datapath." + f.key + ": " + f.msg }
func (f *fieldProblem) ConfigField() string   { return f.key }
func (f *fieldProblem) ConfigMessage() string { return f.msg }

// Validate returns every problem in c, one per line, each naming the key
// (datapath.host.background_load ...) and the valid range; nil when c is
// runnable.
func (c Config) Validate() error {
	var p problems
	if len(c.Paths) == 0 {
		p.addf("paths", "empty; list at least one of %s", strings.Join(AllPaths, ", "))
	}
	seen := map[string]bool{}
	for i, name := range c.Paths {
		if !slices.Contains(KnownPaths, name) {
			p.addf(fmt.Sprintf("paths[%d]", i), "unknown path %q; use one of %s", name, strings.Join(KnownPaths, ", "))
		} else if seen[name] {
			p.addf(fmt.Sprintf("paths[%d]", i), "path %q listed twice", name)
		}
		seen[name] = true
	}
	c.Clients.validate(&p)
	c.Request.validate(&p)
	if len(c.GPUs) == 0 {
		p.addf("gpus", "empty; give at least one GPU, e.g. {type: a100-80gb, count: 1}")
	}
	for i, g := range c.GPUs {
		g.validate(&p, fmt.Sprintf("gpus[%d]", i))
	}
	c.Host.validate(&p)
	c.Network.validate(&p)
	c.SmartNIC.validate(&p)
	if c.WarmupRequests < 0 {
		p.addf("warmup_requests", "%d is negative; use 0 or more", c.WarmupRequests)
	} else if c.Clients.Count > 0 && c.Clients.Requests > 0 && c.WarmupRequests >= c.Clients.Count*c.Clients.Requests {
		p.addf("warmup_requests", "%d leaves no request to measure out of %d (clients.count x clients.requests); use fewer", c.WarmupRequests, c.Clients.Count*c.Clients.Requests)
	}
	if c.MaxInFlight < 1 {
		p.addf("max_in_flight", "%d must be at least 1", c.MaxInFlight)
	}
	c.validateCapacity(&p)
	c.validateMemory(&p)
	return errors.Join(p...)
}

// Memory a run needs per simulated request, measured with /usr/bin/time
// on paper/e2e (4 clients x 4 paths) at 25,000 and 100,000 requests per
// client: peak RSS grows by 8.8 B per request without records (the exact
// quantiles keep one float64 per request) and by 1.0 KB per request with
// record_requests (the record plus its requests.csv line). The constants
// round up, so that the estimate is an upper bound.
const (
	bytesPerRequest         = 16
	bytesPerRecordedRequest = 1100
	// bytesPerGPU is the memory a GPU instance costs a run (its queues,
	// stage resources and counters on every path): 4.6-4.9 KB allocated
	// per instance over four paths, measured at 1e3 and 1e5 instances;
	// rounded up.
	bytesPerGPU = 8192
	// MemoryLimit is the largest estimated run accepted: a run past it
	// would die with Go's out-of-memory fatal error (a stack trace, no
	// result) on most workstations; 8 GiB leaves room on CI's 24 GiB.
	MemoryLimit = 8 << 30
)

// EstimateMemory is the memory a run of c needs for its per-request data,
// in bytes (see bytesPerRequest).
func (c Config) EstimateMemory() float64 {
	n := float64(c.Clients.Count) * float64(c.Clients.Requests) * float64(len(c.Paths))
	per := float64(bytesPerRequest)
	if c.RecordRequests {
		per += bytesPerRecordedRequest
	}
	return n * per
}

// gpuInstances is the number of GPU instances c declares (a float, so
// that a count of 1e9 in several groups cannot overflow).
func (c Config) gpuInstances() float64 {
	n := 0.0
	for _, g := range c.GPUs {
		n += float64(max(g.Count, 0))
	}
	return n
}

func (c Config) validateMemory(p *problems) {
	if gpus := c.gpuInstances(); gpus*bytesPerGPU > MemoryLimit {
		p.addf("gpus", "%.4g GPU instances need about %s of memory (%d KiB each), over the %s limit; a server holds 8 to 16 GPUs (up to 7 MIG instances each): give the GPUs of one server",
			gpus, fmtBytes(gpus*bytesPerGPU), bytesPerGPU>>10, fmtBytes(MemoryLimit))
	}
	if c.Clients.Count < 1 || c.Clients.Requests < 1 || len(c.Paths) == 0 {
		return
	}
	est := c.EstimateMemory()
	if est <= MemoryLimit {
		return
	}
	n := float64(c.Clients.Count) * float64(c.Clients.Requests) * float64(len(c.Paths))
	fix := "use fewer requests"
	if c.RecordRequests {
		fix = "set datapath.record_requests: false (about 16 B per request instead of 1.1 KB; no requests.csv) or use fewer requests"
	}
	p.addf("clients.requests", "%d requests per client x %d clients x %d paths = %.3g requests need about %s of memory, over the %s limit; %s",
		c.Clients.Requests, c.Clients.Count, len(c.Paths), n, fmtBytes(est), fmtBytes(MemoryLimit), fix)
}

func fmtBytes(b float64) string {
	for _, u := range []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"} {
		if b < 1024 || u == "PiB" {
			return strconv.FormatFloat(b, 'f', 1, 64) + " " + u
		}
		b /= 1024
	}
	return ""
}

func (c ClientsConfig) validate(p *problems) {
	if c.Count < 1 {
		p.addf("clients.count", "%d must be at least 1", c.Count)
	}
	switch c.Mode {
	case ModeClosed:
		if c.ThinkTime < 0 {
			p.addf("clients.think_time", "%v is negative; use 0s or more", c.ThinkTime)
		}
	case ModeOpen:
		if !(c.Rate > 0) || math.IsInf(float64(c.Rate), 0) {
			p.addf("clients.rate", "%v must be above 0/s for open-loop clients", float64(c.Rate))
		}
	default:
		p.addf("clients.mode", "unknown mode %q; use %q or %q", c.Mode, ModeClosed, ModeOpen)
	}
	if c.Requests < 1 {
		p.addf("clients.requests", "%d must be at least 1", c.Requests)
	}
	c.checkHorizon(p)
	if c.GPUChoice != ChoiceRoundRobin && c.GPUChoice != ChoiceHash {
		p.addf("clients.gpu_choice", "unknown choice %q; use %q or %q", c.GPUChoice, ChoiceRoundRobin, ChoiceHash)
	}
}

func (r RequestConfig) validate(p *problems) {
	if r.Batch < 1 {
		p.addf("request.batch", "%d must be at least 1", r.Batch)
	}
	if r.InputBytesPerItem < 1 {
		p.addf("request.input_bytes_per_item", "%d must be at least 1B", int64(r.InputBytesPerItem))
	}
	if r.OutputBytesPerItem < 1 {
		p.addf("request.output_bytes_per_item", "%d must be at least 1B", int64(r.OutputBytesPerItem))
	}
	// A model without a compute-time table is the model's mistake, whatever
	// the stack: named at request.model here, as the run would refuse it.
	knownModel := r.ComputeTime != 0 || r.Model == "" || slices.Contains(gpu.Models(), strings.ToLower(r.Model))
	if !knownModel {
		p.addf("request.model", "no compute-time table for model %q; known models: %s; or set request.compute_time", r.Model, strings.Join(gpu.Models(), ", "))
	}
	switch gpu.Stack(r.Stack) {
	case gpu.StackPyTorch:
	case gpu.StackTensorRT:
		if knownModel && r.ComputeTime == 0 && r.Model != "" && !strings.EqualFold(r.Model, "resnet50") {
			p.addf("request.stack", "tensorrt has published per-batch times for resnet50 only, not %q; use stack: pytorch or set request.compute_time", r.Model)
		}
	default:
		p.addf("request.stack", "unknown serving stack %q; use one of %v", r.Stack, gpu.Stacks)
	}
	if r.ComputeTime < 0 {
		p.addf("request.compute_time", "%v is negative; use 0s (from the tables) or a positive time", r.ComputeTime)
	}
	if r.Model == "" && r.ComputeTime == 0 {
		p.addf("request.model", "empty; name a model (resnet50, bert) or set request.compute_time")
	}
}

func (g GPUConfig) validate(p *problems, key string) {
	spec, err := gpu.Lookup(g.Type)
	if err != nil {
		p.addf(key+".type", "%v", err)
	} else if g.Profile != "" {
		if _, err := spec.Profile(g.Profile); err != nil {
			p.addf(key+".profile", "%v", err)
		}
	}
	if g.Count < 1 {
		p.addf(key+".count", "%d must be at least 1", g.Count)
	}
}

func (h HostConfig) validate(p *problems) {
	if _, err := hw.LookupHostCPU(h.CPU); err != nil {
		p.addf("host.cpu", "%v", err)
	}
	if h.Cores < 1 {
		p.addf("host.cores", "%d must be at least 1", h.Cores)
	}
	positive(p, "host.clock", float64(h.Clock), "a frequency above 0Hz, e.g. 3GHz")
	if float64(h.Clock) > maxClockHz {
		p.addf("host.clock", "%v is above %v: the fastest shipping x86 cores boost to 6.2 GHz (Intel Core i9-14900KS, 2024) and the overclocking record under liquid helium is about 9.1 GHz; give the core clock, e.g. 2.3GHz for the xeon-8380", h.Clock, units.Frequency(maxClockHz))
	}
	if !(h.BackgroundLoad >= 0 && h.BackgroundLoad < 1) {
		p.addf("host.background_load", "%v is outside [0%%, 100%%): at 100%% the foreground never runs", float64(h.BackgroundLoad))
	}
	if !slices.Contains(hw.BackgroundModels, hw.BackgroundModel(h.BackgroundModel)) {
		p.addf("host.background_model", "unknown model %q; use one of %v", h.BackgroundModel, hw.BackgroundModels)
	}
	positive(p, "host.sched_slice", float64(h.SchedSlice), "a duration above 0s, e.g. 3ms")
	if !(h.WakeupMiss >= 0 && h.WakeupMiss <= 1) {
		p.addf("host.wakeup_miss", "%v is outside [0%%, 100%%]", float64(h.WakeupMiss))
	}
	nonNegative(p, "host.idle_wake", float64(h.IdleWake))
	if !(h.WakeupMissFloor >= 0 && h.WakeupMissFloor <= 1) {
		p.addf("host.wakeup_miss_floor", "%v is outside [0%%, 100%%]", float64(h.WakeupMissFloor))
	} else if h.WakeupMissFloor+h.WakeupMiss*h.BackgroundLoad > 1 {
		p.addf("host.wakeup_miss_floor", "%v plus background_load x wakeup_miss (%v x %v) is a share above 100%% of wake-ups; lower one of them", float64(h.WakeupMissFloor), float64(h.BackgroundLoad), float64(h.WakeupMiss))
	}
	positive(p, "host.memcpy_bandwidth", float64(h.MemcpyBandwidth), "a bandwidth above 0, e.g. 10GB/s")
	nonNegative(p, "host.interference", float64(h.Interference))
	// alpha stretches host work by 1 + alpha*u with u < 1: measured cache
	// and memory contention slows work by 5-30% (hw catalog: 10%); above
	// 1000% (11x at full load) the value is a typo, not a machine.
	if h.Interference > maxInterference {
		p.addf("host.interference", "%v is above %v: it stretches host work by 1 + alpha x load, and measured contention is 5-30%% (default 10%%)", h.Interference, units.Ratio(maxInterference))
	}
	if h.InputCopy != CopyPageable && h.InputCopy != CopyPinned {
		p.addf("host.input_copy", "unknown copy kind %q; use %q or %q", h.InputCopy, CopyPageable, CopyPinned)
	}
	if _, err := hw.LookupPCIe(h.GPULink); err != nil {
		p.addf("host.gpu_link", "%v", err)
	}
	positive(p, "host.pinned_h2d", float64(h.PinnedH2D), "a bandwidth above 0, e.g. 25GB/s")
	if !(h.PageableFactor > 0 && h.PageableFactor <= 1) {
		p.addf("host.pageable_factor", "%v is outside (0%%, 100%%]: a pageable copy is at most as fast as a pinned one", float64(h.PageableFactor))
	}
	if !(h.PageableD2HFactor > 0 && h.PageableD2HFactor <= 1) {
		p.addf("host.pageable_d2h_factor", "%v is outside (0%%, 100%%]: a pageable copy back from the GPU is at most as fast as a pinned one; leave the key unset to take host.pageable_factor", h.PageableD2HFactor)
	}
	for _, d := range []struct {
		key string
		v   units.Duration
	}{
		{"host.memcpy_issue", h.MemcpyIssue}, {"host.kernel_launch", h.KernelLaunch},
		{"host.sync_wait", h.SyncWait}, {"host.poll_completion", h.PollCompletion},
		{"host.post_send", h.PostSend}, {"host.decision_time", h.DecisionTime},
		{"host.tcp_rx_per_message", h.TCPRxPerMessage}, {"host.tcp_tx_per_message", h.TCPTxPerMessage},
	} {
		if d.v < 0 {
			p.addf(d.key, "%v is negative; use 0s or more", engine.Time(d.v))
		}
	}
	nonNegative(p, "host.tcp_rx_cycles_per_byte", h.TCPRxCyclesPerByte)
	nonNegative(p, "host.tcp_tx_cycles_per_byte", h.TCPTxCyclesPerByte)
	nonNegative(p, "host.price", float64(h.Price))
	nonNegative(p, "host.power", float64(h.Power))
	h.Spread.validate(p)
}

func (n NetworkConfig) validate(p *problems) {
	if _, err := hw.LookupNIC(n.NIC); err != nil {
		p.addf("network.nic", "%v", err)
	}
	positive(p, "network.line_rate", float64(n.LineRate), "a bandwidth above 0, e.g. 200Gbps")
	if !(n.Efficiency > 0 && n.Efficiency <= 1) {
		p.addf("network.efficiency", "%v is outside (0%%, 100%%]", float64(n.Efficiency))
	}
	if n.Latency < 0 {
		p.addf("network.latency", "%v is negative; use 0s or more", engine.Time(n.Latency))
	}
	if n.PerMessage < 0 {
		p.addf("network.per_message", "%v is negative; use 0s or more", engine.Time(n.PerMessage))
	}
	if !(n.CrossRootComplexFactor > 0 && n.CrossRootComplexFactor <= 1) {
		p.addf("network.cross_root_complex_factor", "%v is outside (0%%, 100%%]", float64(n.CrossRootComplexFactor))
	}
	if n.MaxQPs < 1 {
		p.addf("network.max_qps", "%d must be at least 1", n.MaxQPs)
	}
}

func (s SmartNICConfig) validate(p *problems) {
	if _, err := hw.LookupSmartNIC(s.Model); err != nil {
		p.addf("smartnic.model", "%v", err)
	}
	if s.ArmCores < 1 {
		p.addf("smartnic.arm_cores", "%d must be at least 1", s.ArmCores)
	}
	positive(p, "smartnic.arm_speed", float64(s.ArmSpeed), "a ratio above 0%, e.g. 62%")
	positive(p, "smartnic.line_rate", float64(s.LineRate), "a bandwidth above 0, e.g. 200Gbps")
	if s.BufferBytes < 1 {
		p.addf("smartnic.buffer", "%d must be at least 1B", int64(s.BufferBytes))
	}
	if s.BufferPolicy != string(hw.BufferWait) && s.BufferPolicy != string(hw.BufferDrop) {
		p.addf("smartnic.buffer_policy", "unknown policy %q; use %q or %q", s.BufferPolicy, hw.BufferWait, hw.BufferDrop)
	}
	positive(p, "smartnic.dma_bandwidth", float64(s.DMABandwidth), "a bandwidth above 0, e.g. 22GB/s")
	if s.DMAPerOp < 0 {
		p.addf("smartnic.dma_per_op", "%v is negative; use 0s or more", engine.Time(s.DMAPerOp))
	}
	if s.NotifyLatency < 0 {
		p.addf("smartnic.notify_latency", "%v is negative; use 0s or more", engine.Time(s.NotifyLatency))
	}
	nonNegative(p, "smartnic.price", float64(s.Price))
	nonNegative(p, "smartnic.power", float64(s.Power))
}

// validateCapacity checks limits that involve several sections: a request
// must fit the SmartNIC buffer, each client needs a queue pair, and on the
// gpudirect path each client owns a registered buffer in every GPU it may
// write to.
func (c Config) validateCapacity(p *problems) {
	in := int64(c.Request.InputBytesPerItem) * int64(c.Request.Batch)
	if c.Request.Batch < 1 || c.Request.InputBytesPerItem < 1 {
		return
	}
	if c.SmartNIC.BufferBytes >= 1 && in > int64(c.SmartNIC.BufferBytes) && slices.Contains(c.Paths, PathConspirator) {
		p.addf("smartnic.buffer", "%v cannot hold one request of %v (request.batch x request.input_bytes_per_item); use at least %v",
			c.SmartNIC.BufferBytes, units.Bytes(in), units.Bytes(in))
	}
	if c.Clients.Mode == ModeOpen && c.Clients.Count >= 1 && float64(c.Clients.Rate) > 0 && float64(c.Network.LineRate) > 0 {
		// Every request crosses the server's port (tcp, host-rdma and
		// gpudirect through the NIC, conspirator through the SmartNIC's):
		// past its line rate no path can be stable, whatever else it does.
		offered := float64(c.Clients.Rate) * float64(c.Clients.Count) * float64(in) // B/s, as Bandwidth
		port := float64(c.Network.LineRate)
		if slices.Contains(c.Paths, PathConspirator) && float64(c.SmartNIC.LineRate) > 0 {
			port = min(port, float64(c.SmartNIC.LineRate))
		}
		if offered > port {
			p.addf("clients.rate", "%v/s per client x %d clients x %v per request offers %.4g Gbit/s, above the %.4g Gbit/s the server's port carries: every path's queues would grow without bound; use at most %.4g/s per client (and see paper/soc-capacity for where each path saturates below that)",
				float64(c.Clients.Rate), c.Clients.Count, units.Bytes(in), 8*offered/1e9, 8*port/1e9, port/(float64(in)*float64(c.Clients.Count)))
		}
	}
	if c.Network.MaxQPs >= 1 && c.Clients.Count > c.Network.MaxQPs {
		p.addf("clients.count", "%d clients need %d queue pairs, above network.max_qps = %d", c.Clients.Count, c.Clients.Count, c.Network.MaxQPs)
	}
	if !slices.Contains(c.Paths, PathGPUDirect) || c.Clients.Count < 1 {
		return
	}
	for i, g := range c.GPUs {
		spec, err := gpu.Lookup(g.Type)
		if err != nil {
			continue
		}
		mem := spec.MemoryBytes
		if g.Profile != "" {
			prof, err := spec.Profile(g.Profile)
			if err != nil {
				continue
			}
			mem = prof.MemoryBytes
		}
		if need := int64(c.Clients.Count) * in; need > mem {
			p.addf("clients.count", "gpudirect: %d clients x %v registered buffer each need %v in every instance of gpus[%d], which has %v; use at most %d clients",
				c.Clients.Count, units.Bytes(in), units.Bytes(need), i, units.Bytes(mem), mem/in)
		}
	}
}

func positive(p *problems, key string, v float64, want string) {
	if !(v > 0) || math.IsInf(v, 0) {
		p.addf(key, "%v must be %s", v, want)
	}
}

// maxInterference bounds host.interference (see HostConfig.validate).
const maxInterference = 10

// maxClockHz bounds host.clock: above every CPU that exists (see
// HostConfig.validate), so a value past it is a unit slip or a typo.
const maxClockHz = 10e9

func nonNegative(p *problems, key string, v float64) {
	if !(v >= 0) || math.IsInf(v, 0) {
		p.addf(key, "%v must be a finite number >= 0", v)
	}
}
