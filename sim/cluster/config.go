package cluster

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
	"github.com/conspirator-sim/conspirator/hw/mig"
	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/policies/snapshot"
	"github.com/conspirator-sim/conspirator/workloads"
	"github.com/conspirator-sim/conspirator/workloads/train"

	_ "github.com/conspirator-sim/conspirator/policies/builtin" // registers every policy
)

// Tenant modes (Config.Tenants).
const (
	NodeOrderSeeded = "seeded"
	NodeOrderListed = "listed"
	TenantsTrace    = "trace"
	TenantsPerJob   = "per-job"
	TenantsSingle   = "single"
)

// Job kinds (Config.JobKind): how a trace job's duration is read.
const (
	// JobKindByQoS reads the kind from the trace's QoS: LS, Guaranteed and
	// Burstable pods are services, BE pods batch jobs, a job without a
	// QoS (training traces: Philly, Helios, PAI) a batch job.
	JobKindByQoS = "by-qos"
	// JobKindAllBatch makes every job a batch job (fixed work).
	JobKindAllBatch = "all-batch"
	// JobKindAllService makes every job a service (fixed time).
	JobKindAllService = "all-service"
	// JobKindBatchFraction draws each job's kind per seed, whatever its
	// QoS: round(batch_fraction x jobs) of them are batch jobs (regimes.go).
	JobKindBatchFraction = "batch-fraction"
)

// What a seed varies (Config.SeedVaries).
const (
	// SeedVariesCluster: a seed draws the node order and sample only;
	// every seed replays the same jobs (the CI before issue 39).
	SeedVariesCluster = "cluster"
	// SeedVariesWorkload: a seed also resamples the jobs (a bootstrap of
	// the trace's GPU jobs, regimes.go), so the CI covers the workload.
	SeedVariesWorkload = "cluster+workload"
)

// Readings of a censored job (Config.Censored).
const (
	CensoredRecorded = "recorded"
	CensoredKind     = "kind"
)

// ServiceQoS and BatchQoS are the service classes JobKindByQoS knows:
// Alibaba's v2023 README defines qos as the pod's Quality of Service,
// "Burstable, Best Effort (BE), Latency Sensitive (LS)", linking
// Kubernetes' pod QoS classes (Guaranteed, Burstable, BestEffort).
// Latency-sensitive pods are online services and best-effort pods batch
// work, as in Alibaba's colocation traces (v2018: "online services (aka
// long running applications) and batch workloads"); Guaranteed and
// Burstable pods have resource requests set, as long-running deployments
// do, and are read as services here (this project's reading: the FGD
// paper does not tell their run times apart).
var (
	ServiceQoS = []string{"LS", "Guaranteed", "Burstable"}
	BatchQoS   = []string{"BE"}
)

// MIG option modes (Config.MIGOptions).
const (
	MIGOptionsSmallest = "smallest"
	MIGOptionsFitting  = "fitting"
)

// Paths of the openb trace relative to the repository root, where the
// project keeps ../shared beside it.
const (
	OpenBPods  = "../shared/traces/alibaba-gpu-v2023/openb_pod_list_default.csv"
	OpenBNodes = "../shared/traces/alibaba-gpu-v2023/openb_node_list_gpu_node.csv"
)

// Config is the cluster section of a scenario.
type Config struct {
	Trace       string `yaml:"trace" doc:"job trace file (any format of workloads/trace, detected from name and header); relative to the working directory" default:"../shared/traces/alibaba-gpu-v2023/openb_pod_list_default.csv"`
	TraceFormat string `yaml:"trace_format" doc:"trace format name; empty detects it"`
	Window      Window `yaml:"window" doc:"which jobs of the trace to replay"`
	Synthetic   Synth  `yaml:"synthetic" doc:"replace the trace by synthetic jobs with its statistics"`

	Nodes string `yaml:"nodes" doc:"node list giving the cluster's servers: CPU, memory and GPUs of each (openb_node_list_gpu_node.csv format); empty uses gpus" default:"../shared/traces/alibaba-gpu-v2023/openb_node_list_gpu_node.csv"`
	// NodeOrder fixes the GPU IDs of a node list, which policies that take
	// "the lowest-numbered GPU that fits" (first-fit, naive-share) read:
	// seeded is a random order of the servers drawn from the seed (after
	// sorting them by name, so the file's row order never matters), as
	// the FGD authors' simulator does; listed keeps the file's order.
	NodeOrder string `yaml:"node_order" doc:"GPU IDs of a node list: seeded (servers in a random order drawn from the seed; the file's row order never matters) or listed (the file's order)" default:"seeded" source:"choice: a baseline that reads the node list's row order makes its GPU-hours an artefact of that order (issue 12); the FGD authors' simulator also orders servers by a seeded permutation"`
	// NodeFraction sizes the cluster to the trace: openb's 6,212 GPUs
	// are about 1% busy under its own trace, so packing never binds.
	NodeFraction float64    `yaml:"node_fraction" doc:"share of each GPU model's servers of the node list kept, the first in node_order (at least one per model); 1 keeps them all" default:"1"`
	GPUs         []GPUGroup `yaml:"gpus" doc:"the cluster's GPUs when nodes is empty, in servers of per_server GPUs, in GPU-ID order" default:"[]"`

	// JobKind says what a trace job's duration is: the time a service
	// holds its placement, or the work of a batch job (see the package
	// documentation).
	JobKind string `yaml:"job_kind" doc:"what a trace job's duration is: by-qos (LS, Guaranteed and Burstable pods are services that hold their placement for their duration and need less of a faster GPU; BE pods and jobs without a QoS are batch jobs whose work runs faster on a faster GPU), all-batch (every job fixed work: the model before issue 31), all-service, or batch-fraction (a share of the jobs drawn per seed, batch_fraction, are batch jobs and the rest services, whatever their QoS)" default:"by-qos" source:"choice: Alibaba's v2023 README defines qos as Kubernetes-style QoS with LS = Latency Sensitive and BE = Best Effort; latency-sensitive pods are online services, best-effort ones batch work (Alibaba's colocation traces); Guaranteed and Burstable read as services is this project's reading"`
	// BatchFraction is job_kind batch-fraction's share of batch jobs.
	BatchFraction float64 `yaml:"batch_fraction" doc:"with job_kind batch-fraction: the share of the run's jobs, by count, that are batch jobs, 0..1; the rest are services. Drawn per seed whatever a job's QoS: the round(batch_fraction x jobs) first of a random permutation of the jobs (by ID) drawn from the seed; independent of duration, so the batch share of GPU time is batch_fraction in expectation (openb's heavy tail makes it vary by seed, which the CI shows)" default:"0.405" source:"measured: openb's BE pods are 2,510 of its 6,203 scheduled GPU jobs (40.5%) but 2.5% of their GPU time; by count, as a user knows their jobs, and as no draw by GPU time can meet a share when ten jobs hold half of it"`
	// Censored says how a job still running when the trace ended is read
	// (trace.Job.Censored).
	Censored string `yaml:"censored" doc:"jobs still running when the trace ended (openb: 32 pods with deletion_time 12902960): recorded (each holds its placement for the time the trace recorded, wherever it runs, as the trace knows nothing after; no JCT; counted as censored) or kind (each runs as a job of its kind with that duration as its whole: the model before issue 31)" default:"recorded" source:"choice: a censored duration is a lower bound; holding exactly the recorded time charges what the trace saw and nothing it did not, and keeps the horizon bound a bound (a deadline at the trace's end would let a job that waits hold less)"`
	// LeaveOutLongest reruns every policy without the longest jobs, to
	// show how much of a saving rests on the heavy tail.
	LeaveOutLongest []string `yaml:"leave_out_longest" doc:"also replay every policy without the k longest jobs of the trace (by duration), for each entry: a count (10) or a share of the jobs (1%); summary.json and the table give the saving against the baseline without them, with its 95% CI over seeds; [] for none (each entry is one more replay of every policy and seed; not with synthetic jobs)" default:"[]"`

	// FastShare and FastGPUs set the cluster's heterogeneity (regimes.go).
	FastShare string   `yaml:"fast_share" doc:"share of the sampled GPUs that are of the fast class, 0..1; empty keeps the node list's own mix (node_fraction of each model). Needs a node list: the sample keeps node_fraction's number of GPUs, takes the fast class's servers (in node_order) nearest to the share of them, and fills the rest with the other models' servers in proportion to their GPUs in the list" default:"" source:"choice: openb's node list is 75.6% A100 GPUs (4,704 of 6,212); the sample's size is kept so that only the mix moves"`
	FastGPUs  []string `yaml:"fast_gpus" doc:"the fast class of fast_share: GPU models (catalog names or trace codes); [] = every model of the node list at least 0.9 of the fastest one's speed (speed_model; openb: a100-80gb 1.0 and a100-40gb 0.941, next V100 below 0.5)" default:"[]"`
	// SeedVaries says what the seeds of Seeds vary.
	SeedVaries string `yaml:"seed_varies" doc:"what a seed varies: cluster+workload (the node order and sample, and the jobs: each seed replays a bootstrap of the run's GPU jobs, as many drawn with replacement, so the 95% CI covers the workload too; CPU-only pods are not resampled; synthetic jobs vary by seed anyway) or cluster (only the node order and sample: every seed replays the same jobs)" default:"cluster+workload" source:"choice (issue 39): a CI over the sampled servers alone says nothing of the trace; a bootstrap of the jobs is the standard estimate of what another trace from the same workload would give, and keeps the trace's load, where disjoint windows of 8,152 pods would each replay a different load"`

	TypeMap      string `yaml:"gpu_type_map" doc:"trace GPU codes to catalog names, CODE=gpu pairs over the defaults (G2=a100-40gb, G3=a100-80gb, ...)"`
	ReferenceGPU string `yaml:"reference_gpu" doc:"GPU type on which an unconstrained job's trace run time was measured; empty = the cluster's most common type"`
	SpeedModel   string `yaml:"speed_model" doc:"model whose measured speeds scale work across GPU types and MIG sizes (resnet50, bert)" default:"resnet50"`
	Tenants      string `yaml:"tenants" doc:"trace (the trace's tenant; empty = one shared tenant), per-job (every job isolated), single, or a count N (1 .. the run's jobs): the jobs, in a random order drawn from the seed, are dealt to N tenants in turn, so each holds n/N of them (1 = one shared tenant; N = the number of jobs isolates every job)" default:"trace" source:"choice: openb has no tenant column (one shared tenant under trace); dealing a seeded permutation gives every tenant the same number of jobs and no tenant a kind or size of job"`
	MIGOptions   string `yaml:"mig_options" doc:"MIG profiles a job may use: smallest (the smallest covering its share) or fitting (every covering one)" default:"fitting"`
	// MIGCompute and MIGGeometry are omitted from the resolved inputs
	// when empty, so that adding them left the identity (inputs_sha256)
	// of every cluster scenario as it was.
	MIGCompute  string `yaml:"mig_compute,omitempty" doc:"how a MIG instance's compute is counted when its speed is read on the A100 tables: sms (its SMs over the whole GPU's, where the geometry knows them: the H200's and imported ones; slices elsewhere) or slices (k of 7); empty is sms" default:"" source:"choice: the SMs are what computes; an H200 4g.71gb has 64 of 132 SMs (48%), not 4/7 (57%), and 3g.71gb 60 (45%) (nvidia-smi mig -lgip on an H200, 2026-11-27); on the A100, whose tables these are, SMs are proportional to slices (14 each), so both bases read them alike"`
	MIGGeometry string `yaml:"mig_geometry,omitempty" doc:"MIG geometries in place of the catalog's, TYPE=FILE pairs separated by commas (files written by 'conspirator mig import' from nvidia-smi mig -lgip/-lgipp); relative to the working directory"`
	// Geometries are the files of MIGGeometry, read by Run and Check
	// through Env.Geometry, by catalog GPU name.
	Geometries map[string]*mig.Geometry `yaml:"-"`

	// BadRows: a trace or node list row with a value out of range, a
	// missing field or an unknown GPU type is an error by default; real
	// traces with broken rows can be replayed with skip, which leaves them
	// out and counts them in the input report.
	BadRows string `yaml:"bad_rows" doc:"a bad row of the trace or node list (a value out of range, a missing field, an unknown GPU type): error (exit 2, naming file, row and column) or skip (left out, counted in the input report); rows left out by rule (CPU-only without cpu_pods, never scheduled) are never errors" default:"error"`

	// CPUPods keeps the trace's CPU-only pods: they hold a server's CPU
	// and memory for their run time, placed by the simulator (policies
	// place GPU jobs) as Kubernetes' default scoring does.
	CPUPods bool `yaml:"cpu_pods" doc:"replay the trace's CPU-only pods: each holds CPU and memory of the least allocated server that fits it (Kubernetes' default NodeResourcesLeastAllocated score), waiting while none does; GPU jobs then find less CPU and memory. Dropped with synthetic jobs" default:"true" source:"choice: the FGD paper's workload includes them (issue 12); least allocated is kube-scheduler's default score"`

	// GangSpan lets a multi-GPU job's tasks land on several servers; a
	// batch job that spans them then synchronises its gradients over the
	// servers' NICs (GangComm), which slows its iterations.
	GangSpan bool     `yaml:"gang_span" doc:"let a multi-GPU job (a gang) span servers; a batch job that does runs slower by its communication (gang_comm); false keeps each gang on one server" default:"false"`
	GangComm GangComm `yaml:"gang_comm" doc:"the communication of a batch gang that spans servers (with gang_span): every iteration computes, then all-reduces the gradient of model over the servers' NICs"`

	Seeds    int    `yaml:"seeds" doc:"runs of every policy, seeds seed .. seed+seeds-1, each with its own node order (and node sample, synthetic jobs); metrics are means over them, with 95% CIs" default:"1"`
	Baseline string `yaml:"baseline" doc:"policy the others are compared with (vs_baseline: GPU-hours against it seed by seed, mean and 95% CI); it must be among policies; empty compares with naive-share when it runs, else with nothing" default:""`

	Policies   []string                     `yaml:"policies" doc:"policies to compare, each run on the same jobs" default:"[exclusive, naive-share, first-fit, best-fit, fgd, conspirator]"`
	PolicyArgs map[string]map[string]string `yaml:"policy_args" doc:"arguments per policy name, e.g. {conspirator: {e2: \"0.2\"}}" default:"{}"`

	// TimeshareSlowdown: Gavel (Narayanan et al., OSDI'20) measured
	// pairs of training jobs sharing one GPU; each ran at a mean 0.657 of
	// its isolated throughput on V100 (636 pairs; P100 0.598, K80 0.537).
	TimeshareSlowdown float64        `yaml:"timeshare_slowdown" doc:"speed a job loses time-sharing a non-MIG GPU per unit of the GPU its co-runners hold: speed x (1 - slowdown x their share, at most 1); MIG instances are isolated from each other, and jobs sharing one instance (optimal's instance_sharing) slow each other by the same rule with shares of the instance; 0 = no interference" default:"0.343" source:"measured: Gavel (OSDI'20) simulation_throughputs.json, V100, single-GPU jobs co-located in pairs: mean 0.657 of isolated throughput over 636 pairs (P100 0.598, K80 0.537); linear in the co-runners' share is this project's assumption; plausible 0.17 (half the V100 figure: newer GPUs, not measured) to 0.463 (K80)" plausible:"0.17,0.463"`
	MIGReconfigTime   units.Duration `yaml:"mig_reconfig_time" doc:"time to create or destroy one MIG instance" default:"2s"`
	MigrationTime     units.Duration `yaml:"migration_time" doc:"pause of a migrated job (checkpoint, copy, restore)" default:"30s" source:"estimate: a checkpoint, copy and restore of a training job's state; no measurement found; plausible 10 s to 2 min" plausible:"10s,120s"`
	MigrationCost     float64        `yaml:"migration_cost" doc:"m_i of each running task in the snapshot (policies weigh it by their e2)" default:"1"`
	BatchWindow       units.Duration `yaml:"batch_window" doc:"delay between an event and the policy call it triggers; events within it share one call" default:"0s"`

	VerifyDecisions bool `yaml:"verify_decisions" doc:"check every decision with snapshot.CheckDecision (slow; for tests)" default:"false"`
	RecordJobs      bool `yaml:"record_jobs" doc:"keep one record per job in the result" default:"true"`
	RecordSeries    bool `yaml:"record_series" doc:"keep the active-GPU time series in the result" default:"true"`

	// LLMServices are LLM services resolved, once before the replay, into
	// the replicas of the cheapest configuration meeting their SLO on the
	// cluster's GPU types (llmservices.go), each replica a service job.
	LLMServices []LLMService `yaml:"llm_services,omitempty" doc:"LLM services to place beside the trace's jobs: each is resolved once, before the replay, by the llm capacity search into the cheapest configuration (GPU type, tp and replicas, or MIG slices) meeting its SLO at its rate on the cluster's GPU types, and each replica becomes a service job on that type (a gang of tp GPUs, or one job of the slice's share that MIG policies place on that very profile); a service no configuration serves is reported and left out. With services, trace may be empty (services alone)" default:"[]"`

	// Jobs, when non-nil, replaces the trace (tests and programs).
	Jobs []workloads.Job `yaml:"-"`

	// llm is the resolved LLMServices (Run and Check set it).
	llm *llmPlan

	// snapshotCalls makes every policy call build a snapshot, also for a
	// policy that keeps a session: the tests compare the two.
	snapshotCalls bool
}

// Window selects jobs of the trace by position (after sorting by arrival).
type Window struct {
	Skip int `yaml:"skip" doc:"jobs to drop from the start" default:"0"`
	Jobs int `yaml:"jobs" doc:"jobs to keep after skip; 0 = all" default:"0"`
	// Compress divides every arrival time (trace.CompressTime): the same
	// jobs at Compress times the load.
	Compress float64 `yaml:"compress" doc:"divide arrival times by this factor (>1 raises the load); 1 keeps the trace's times" default:"1"`
}

// Synth configures synthetic jobs drawn from the trace.
type Synth struct {
	Jobs int        `yaml:"jobs" doc:"number of synthetic jobs; 0 replays the trace itself" default:"0"`
	Rate units.Rate `yaml:"rate" doc:"Poisson arrival rate; 0/s keeps the trace's rate" default:"0/s"`
}

// GPUGroup is a number of identical GPUs, in servers of PerServer GPUs.
type GPUGroup struct {
	Model     string `yaml:"model" doc:"GPU model from the hardware catalog or a trace code, e.g. a100-40gb, G2"`
	Count     int    `yaml:"count" doc:"number of GPUs" default:"1"`
	PerServer int    `yaml:"per_server" doc:"GPUs per server (the last server takes what is left); 0 = 8, as in a DGX or HGX server" default:"0"`
	CPUMilli  int64  `yaml:"cpu_milli" doc:"CPU of each server for jobs, in thousandths of a core; 0 = not modelled" default:"0"`
	MemoryMiB int64  `yaml:"memory_mib" doc:"memory of each server for jobs, in MiB; 0 = not modelled" default:"0"`
}

// DefaultGPUsPerServer is a declared group's server size when PerServer is
// 0: the 8 GPUs of NVIDIA's DGX and HGX servers.
const DefaultGPUsPerServer = 8

// MaxGPUsPerServer bounds a server's GPUs, in node lists and declared
// groups: 8, as on an HGX/DGX baseboard and in every bundled trace.
const MaxGPUsPerServer = 8

// replaysPods reports whether the run replays the trace's CPU-only pods:
// cpu_pods, and the trace itself rather than synthetic jobs.
func (c Config) replaysPods() bool { return c.CPUPods && c.Synthetic.Jobs == 0 }

// Values of Config.BadRows.
const (
	BadRowsError = "error"
	BadRowsSkip  = "skip"
)

func (g GPUGroup) perServer() int {
	if g.PerServer > 0 {
		return g.PerServer
	}
	return DefaultGPUsPerServer
}

// GangComm is how a batch gang spread over servers communicates. The
// trace names no model, so one model stands for every multi-GPU batch
// job (a stated rule): its compute time on the job's GPU type and its
// gradient size give an iteration on one server, C + T_1 (its ring on the
// GPU link), and spread over servers, C + T_k (train.SyncSeconds); the
// job's work then runs at (C + T_1)/(C + T_k) of its speed. Each spanning
// gang has its servers' NICs to itself: contention between gangs is the
// training model's (sim/training), not this one's.
type GangComm struct {
	Model         string          `yaml:"model" doc:"model a multi-GPU batch job trains (the trace names none); none: spanning costs nothing (an upper bound, the model before issue 30)" default:"bert-large" source:"choice: 98% of the 5,335 jobs of the public Alibaba-derived list of SwitchML-omnetpp train BERT-large"`
	NIC           units.Bandwidth `yaml:"nic" doc:"each server's NIC, each direction" default:"100Gbps" source:"measured: SwitchML and ATP evaluate with 100 Gb/s NICs"`
	NetLatency    units.Duration  `yaml:"net_latency" doc:"alpha: one step of a ring across servers" default:"hw:nic.connectx6.one_way_latency"`
	Intra         string          `yaml:"intra" doc:"GPU link inside a server: nvlink3, nvlink2 or pcie4" default:"nvlink3"`
	AllReduce     string          `yaml:"all_reduce" doc:"ring, hierarchical or ps (as training.sync.all_reduce)" default:"hierarchical"`
	BytesPerValue float64         `yaml:"bytes_per_value" doc:"bytes of one gradient value (4: FP32, 2: FP16)" default:"4"`
}

// Defaults returns the configuration of the paper/gpu-hours scenario: the
// openb default trace on its own node list, every heuristic policy.
func Defaults() Config {
	return Config{
		Trace:             OpenBPods,
		Nodes:             OpenBNodes,
		Window:            Window{Compress: 1},
		SpeedModel:        "resnet50",
		Tenants:           TenantsTrace,
		JobKind:           JobKindByQoS,
		BatchFraction:     0.405,
		SeedVaries:        SeedVariesWorkload,
		Censored:          CensoredRecorded,
		MIGOptions:        MIGOptionsFitting,
		NodeOrder:         NodeOrderSeeded,
		NodeFraction:      1,
		Seeds:             1,
		Policies:          []string{"exclusive", "naive-share", "first-fit", "best-fit", "fgd", "conspirator"},
		MIGReconfigTime:   units.Duration(mig.DefaultReconfigTime),
		MigrationTime:     units.Duration(30 * engine.Second),
		MigrationCost:     1,
		TimeshareSlowdown: 0.343,
		CPUPods:           true,
		BadRows:           BadRowsError,
		RecordJobs:        true,
		RecordSeries:      true,
		GangComm:          DefaultGangComm(),
	}
}

// DefaultGangComm is GangComm's defaults.
func DefaultGangComm() GangComm {
	nic, _ := hw.LookupNIC("connectx6")
	return GangComm{Model: "bert-large", NIC: units.Bandwidth(100e9 / 8), NetLatency: units.Duration(nic.OneWayLatency), Intra: "nvlink3", AllReduce: "hierarchical", BytesPerValue: 4}
}

// Validate reports every problem of c, one per line, each with its key
// (a units.FieldError, so that the scenario loader places it at the key's
// own line).
func (c Config) Validate() error {
	var p []error
	add := func(key, format string, args ...any) {
		p = append(p, units.Invalid(key, format, args...))
	}
	if c.Jobs == nil && strings.TrimSpace(c.Trace) == "" {
		switch {
		case len(c.LLMServices) == 0:
			add("trace", "empty; name a trace file, e.g. %s (or give llm_services alone)", OpenBPods)
		case c.Synthetic.Jobs > 0:
			add("synthetic.jobs", "%d synthetic jobs but no trace to draw them from; name a trace, or use 0 (llm_services alone)", c.Synthetic.Jobs)
		}
	}
	if c.Window.Skip < 0 {
		add("window.skip", "%d is negative; use 0 or more", c.Window.Skip)
	}
	if !(c.Window.Compress >= 1) || math.IsInf(c.Window.Compress, 0) {
		add("window.compress", "%v; want a finite factor >= 1", c.Window.Compress)
	}
	if c.Window.Jobs < 0 {
		add("window.jobs", "%d is negative; use 0 (all) or more", c.Window.Jobs)
	}
	if c.Synthetic.Jobs < 0 {
		add("synthetic.jobs", "%d is negative; use 0 (replay the trace) or more", c.Synthetic.Jobs)
	}
	if r := float64(c.Synthetic.Rate); r < 0 || math.IsNaN(r) || math.IsInf(r, 0) {
		add("synthetic.rate", "%v; want a finite rate >= 0/s", r)
	}
	if c.Nodes == "" && len(c.GPUs) == 0 {
		add("gpus", "empty and no nodes file; give at least one group, e.g. {model: a100-40gb, count: 8}")
	}
	tm, err := gpu.ParseTraceTypeMap(c.TypeMap)
	if err != nil {
		add("gpu_type_map", "%v", err)
	}
	for i, g := range c.GPUs {
		if g.Count < 1 {
			add(fmt.Sprintf("gpus[%d].count", i), "%d; want at least 1", g.Count)
		}
		if _, err := resolveType(g.Model, tm); err != nil {
			add(fmt.Sprintf("gpus[%d].model", i), "%v", err)
		}
		if g.PerServer < 0 || g.PerServer > MaxGPUsPerServer {
			add(fmt.Sprintf("gpus[%d].per_server", i), "%d; want 1..%d GPUs per server, or 0 for %d", g.PerServer, MaxGPUsPerServer, DefaultGPUsPerServer)
		}
		if g.CPUMilli < 0 || g.MemoryMiB < 0 {
			add(fmt.Sprintf("gpus[%d]", i), "cpu_milli %d, memory_mib %d; want >= 0 (0: not modelled)", g.CPUMilli, g.MemoryMiB)
		}
	}
	if c.ReferenceGPU != "" {
		if _, err := resolveType(c.ReferenceGPU, tm); err != nil {
			add("reference_gpu", "%v", err)
		}
	}
	if c.MIGCompute != "" && !slices.Contains(mig.Bases, c.MIGCompute) {
		add("mig_compute", "%q; use %s (empty is %s)", c.MIGCompute, strings.Join(mig.Bases, " or "), mig.BasisSMs)
	}
	if _, err := c.geometryFiles(tm); err != nil {
		add("mig_geometry", "%v", err)
	}
	if !slices.Contains(gpu.Models(), c.SpeedModel) {
		add("speed_model", "%q has no speed table; use one of %s", c.SpeedModel, strings.Join(gpu.Models(), ", "))
	}
	if c.BadRows != BadRowsError && c.BadRows != BadRowsSkip {
		add("bad_rows", "%q; use %s or %s", c.BadRows, BadRowsError, BadRowsSkip)
	}
	if c.NodeOrder != NodeOrderSeeded && c.NodeOrder != NodeOrderListed {
		add("node_order", "%q; use %s or %s", c.NodeOrder, NodeOrderSeeded, NodeOrderListed)
	}
	if !(c.NodeFraction > 0 && c.NodeFraction <= 1) {
		add("node_fraction", "%v; want a share in (0, 1], e.g. 0.02 for 2%% of each model's servers", c.NodeFraction)
	}
	if c.Seeds < 1 || c.Seeds > 1000 {
		add("seeds", "%d; want 1 to 1000 runs per policy", c.Seeds)
	}
	if !slices.Contains([]string{JobKindByQoS, JobKindAllBatch, JobKindAllService, JobKindBatchFraction}, c.JobKind) {
		add("job_kind", "%q; use %s, %s, %s or %s", c.JobKind, JobKindByQoS, JobKindAllBatch, JobKindAllService, JobKindBatchFraction)
	}
	c.validateRegimes(add)
	if c.Censored != CensoredRecorded && c.Censored != CensoredKind {
		add("censored", "%q; use %s or %s", c.Censored, CensoredRecorded, CensoredKind)
	}
	for i, lo := range c.LeaveOutLongest {
		if _, err := parseLeaveOut(lo); err != nil {
			add(fmt.Sprintf("leave_out_longest[%d]", i), "%v", err)
		}
	}
	if len(c.LeaveOutLongest) > 0 && c.Synthetic.Jobs > 0 {
		add("leave_out_longest", "not with synthetic jobs (they are drawn as the replay goes, not a list whose longest can be left out); use [] or replay the trace")
	}
	if c.MIGOptions != MIGOptionsSmallest && c.MIGOptions != MIGOptionsFitting {
		add("mig_options", "%q; use %s or %s", c.MIGOptions, MIGOptionsSmallest, MIGOptionsFitting)
	}
	if len(c.Policies) == 0 {
		add("policies", "empty; list at least one of %s", strings.Join(snapshot.Names(), ", "))
	}
	seen := map[string]bool{}
	for i, name := range c.Policies {
		key := fmt.Sprintf("policies[%d]", i)
		if seen[name] {
			add(key, "%q listed twice", name)
			continue
		}
		seen[name] = true
		if _, err := snapshot.New(name, c.PolicyArgs[name]); err != nil {
			add(key, "%v", err)
		}
	}
	if c.Baseline != "" && !slices.Contains(c.Policies, c.Baseline) {
		add("baseline", "%q is not among policies (%s); list it there, or leave baseline empty", c.Baseline, strings.Join(c.Policies, ", "))
	}
	for _, name := range sortedKeys(c.PolicyArgs) {
		if !seen[name] && len(c.PolicyArgs[name]) > 0 { // an emptied entry ({}) is as good as none

			add("policy_args."+name, "arguments for a policy that is not in policies (%s); list it there, or drop its arguments: --set %s.policy_args={} clears them all, --set '%s.policy_args.%s={}' this one's", strings.Join(c.Policies, ", "), "cluster", "cluster", name)
		}
	}
	if c.MIGReconfigTime < 0 {
		add("mig_reconfig_time", "%v is negative", c.MIGReconfigTime)
	}
	if c.MigrationTime < 0 {
		add("migration_time", "%v is negative", c.MigrationTime)
	}
	if c.BatchWindow < 0 {
		add("batch_window", "%v is negative", c.BatchWindow)
	}
	if !(c.TimeshareSlowdown >= 0 && c.TimeshareSlowdown < 1) {
		add("timeshare_slowdown", "%v; want a value in [0, 1), e.g. 0.343 (Gavel's V100 pairs) or 0 for no interference", c.TimeshareSlowdown)
	}
	if c.MigrationCost < 0 || math.IsNaN(c.MigrationCost) || math.IsInf(c.MigrationCost, 0) {
		add("migration_cost", "%v; want a finite value >= 0", c.MigrationCost)
	}
	c.validateMemory(add)
	c.validateTimes(add) // bounds.go
	c.validateLLMServices(add, tm)
	if gc := c.GangComm; gc.Model != "none" {
		if _, err := train.Lookup(gc.Model); err != nil {
			add("gang_comm.model", "%v; or none (spanning is free)", err)
		}
		if !(float64(gc.NIC) > 0) || float64(gc.NIC) > 1e13 {
			add("gang_comm.nic", "%v; want a line rate above 0, e.g. 100Gbps", gc.NIC)
		}
		if gc.NetLatency < 0 {
			add("gang_comm.net_latency", "%v is negative", gc.NetLatency)
		}
		if _, err := hw.LookupIntraServerLink(gc.Intra); err != nil {
			add("gang_comm.intra", "%v", err)
		}
		if _, err := train.SyncSeconds(gc.AllReduce, 1, []int{1, 1}, train.Links{NICBytesPerSec: 1, IntraBytesPerSec: 1}); err != nil {
			add("gang_comm.all_reduce", "%q; use ring, hierarchical or ps", gc.AllReduce)
		}
		if !(gc.BytesPerValue > 0 && gc.BytesPerValue <= 8) {
			add("gang_comm.bytes_per_value", "%v; want 1 to 8 bytes (4: FP32, 2: FP16)", gc.BytesPerValue)
		}
	}
	return errors.Join(p...)
}

// Memory a replay needs, from bench/scale.sh on one core (docs/cluster.md): 10^6
// synthetic jobs on 1,024 GPUs peak at 163 MB of heap and 10^4 at 12 MB,
// about 152 B per job (the jobs alive and the exact JCT and queueing
// samples); 10^6 jobs on 102,400 GPUs peak at 314 MB, about 1.5 KB per
// GPU. Rounded up, so that the estimate bounds the run.
const (
	bytesPerJob = 256
	bytesPerGPU = 2048
	// MemoryLimit is the largest estimated replay accepted: past it a run
	// would die with Go's out-of-memory error after minutes, with no
	// result; 8 GiB leaves room on CI's 24 GiB for the replays of other
	// seeds running beside it.
	MemoryLimit = 8 << 30
)

// validateMemory refuses declared GPUs and synthetic jobs whose replay
// would need more than MemoryLimit (a trace's jobs and a node list's
// servers are bounded by their files).
func (c Config) validateMemory(add func(key, format string, args ...any)) {
	gpus := 0.0
	for _, g := range c.GPUs {
		gpus += float64(max(g.Count, 0))
	}
	jobs := float64(max(c.Synthetic.Jobs-max(c.Window.Skip, 0), 0))
	if c.Window.Jobs > 0 {
		jobs = min(jobs, float64(c.Window.Jobs))
	}
	est := gpus*bytesPerGPU + jobs*bytesPerJob
	if est <= MemoryLimit {
		return
	}
	gib := func(b float64) string { return fmt.Sprintf("%.3g GiB", b/(1<<30)) }
	switch {
	case gpus*bytesPerGPU > MemoryLimit/2:
		add("gpus", "%.4g GPUs (%.0f B each) and %.4g synthetic jobs (%.0f B each) need about %s, over the %s limit; declare fewer GPUs (%.4g fit alone)",
			gpus, float64(bytesPerGPU), jobs, float64(bytesPerJob), gib(est), gib(MemoryLimit), float64(MemoryLimit/bytesPerGPU))
	default:
		add("synthetic.jobs", "%.4g synthetic jobs (%.0f B each) and %.4g GPUs (%.0f B each) need about %s, over the %s limit; replay fewer jobs, or cut them with window.jobs (%.4g fit alone)",
			jobs, float64(bytesPerJob), gpus, float64(bytesPerGPU), gib(est), gib(MemoryLimit), float64(MemoryLimit/bytesPerJob))
	}
}

// leaveOut is one entry of Config.LeaveOutLongest: a count of jobs or a
// share of them.
type leaveOut struct {
	label string
	count int     // jobs, when share is 0
	share float64 // of the jobs, in (0, 1)
}

// parseLeaveOut reads "10" or "1%".
func parseLeaveOut(s string) (leaveOut, error) {
	t := strings.TrimSpace(s)
	if strings.HasSuffix(t, "%") {
		v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
		if err != nil || !(v > 0 && v < 100) {
			return leaveOut{}, fmt.Errorf("%q; want a share above 0%% and below 100%%, e.g. 1%%", s)
		}
		return leaveOut{label: t, share: v / 100}, nil
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 1 {
		return leaveOut{}, fmt.Errorf("%q; want a count of jobs (at least 1, e.g. 10) or a share (e.g. 1%%)", s)
	}
	return leaveOut{label: t, count: n}, nil
}

// jobs is how many of n jobs the entry leaves out (a share rounds up: 1%
// of 50 jobs is one).
func (l leaveOut) jobs(n int) int {
	if l.share > 0 {
		return min(n, int(math.Ceil(l.share*float64(n))))
	}
	return min(n, l.count)
}

// knownQoS is what the trace importer accepts under JobKind (nil: any).
func (c Config) knownQoS() []string {
	if c.JobKind != JobKindByQoS {
		return nil
	}
	return append(slices.Clone(ServiceQoS), BatchQoS...)
}

// isService reads a job's kind under JobKind (batch-fraction's kinds are
// drawn per seed: planner.isService).
func (c Config) isService(j *workloads.Job) bool {
	switch c.JobKind {
	case JobKindAllService:
		return true
	case JobKindByQoS:
		return slices.Contains(ServiceQoS, j.QoS)
	}
	return false
}

// baseline returns the policy the others are compared with: Baseline, or
// naive-share when it is left empty and naive-share runs; "" for none.
func (c Config) baseline() string {
	if c.Baseline != "" {
		return c.Baseline
	}
	if slices.Contains(c.Policies, "naive-share") {
		return "naive-share"
	}
	return ""
}

// resolveType turns a catalog name or a trace code into a catalog spec name.
func resolveType(name string, tm gpu.TraceTypeMap) (string, error) {
	if strings.TrimSpace(name) == "" {
		return "", errors.New("empty GPU model; name one of the catalog, e.g. a100-40gb")
	}
	if s, err := gpu.Lookup(name); err == nil {
		return s.Name, nil
	}
	n, err := gpu.ResolveTraceType(name, tm)
	if err != nil {
		return "", fmt.Errorf("%q is neither a catalog GPU (%s) nor a known trace code: %w", name, strings.Join(gpu.Names(), ", "), err)
	}
	return n, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// geometryFiles parses MIGGeometry: catalog GPU name -> file.
func (c Config) geometryFiles(tm gpu.TraceTypeMap) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(c.MIGGeometry) == "" {
		return out, nil
	}
	for _, pair := range strings.Split(c.MIGGeometry, ",") {
		typ, file, ok := strings.Cut(strings.TrimSpace(pair), "=")
		typ, file = strings.TrimSpace(typ), strings.TrimSpace(file)
		if !ok || typ == "" || file == "" {
			return nil, fmt.Errorf("%q is not TYPE=FILE, e.g. h200-141gb=h200-mig.yaml (written by conspirator mig import)", pair)
		}
		name, err := resolveType(typ, tm)
		if err != nil {
			return nil, err
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%s given twice", name)
		}
		out[name] = file
	}
	return out, nil
}

// migBasis is MIGCompute with its default.
func (c Config) migBasis() string {
	if c.MIGCompute == "" {
		return mig.BasisSMs
	}
	return c.MIGCompute
}
