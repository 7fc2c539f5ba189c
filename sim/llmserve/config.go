package llmserve

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/llm"
	"github.com/conspirator-sim/conspirator/hw/units"
	wllm "github.com/conspirator-sim/conspirator/workloads/llm"
)

// Workload sources (WorkloadConfig.Source).
const (
	SourceTrace     = "trace"
	SourceSynthetic = "synthetic"
)

// Bounds of the llm section.
const (
	// MaxReplicas bounds replicas: 1,024 replicas of one GPU is a large
	// serving fleet; the router scans them per request.
	MaxReplicas = 1024
	// MaxSeeds bounds seeds.
	MaxSeeds = 1000
	// MaxSamples bounds the KV and batch samples a run keeps (24 bytes
	// each: 240 MB); sample_every is refused where the run would take more.
	MaxSamples = 10_000_000
	// MaxBatchedTokensLimit bounds max_num_batched_tokens: 1M tokens, eight
	// times a 128k context.
	MaxBatchedTokensLimit = 1 << 20
	// MaxSeqsLimit bounds max_num_seqs.
	MaxSeqsLimit = 65536
	// MaxBalanceTokens bounds router_balance_abs: 2^30 tokens, thousands
	// of times a replica's KV cache (0 turns the fall-back off).
	MaxBalanceTokens = 1 << 30
	// MaxBalanceRel bounds router_balance_rel.
	MaxBalanceRel = 1_000_000
)

// A run's memory grows with its requests and with its steps. Each request
// keeps its trace entry, its record, its latencies for the quantiles and
// its line of llm_requests.csv; each step that gives requests their next
// token keeps one inter-token latency pair (16 B, copied once to sort),
// and there are at most as many such pairs as output tokens after each
// request's first. BenchmarkLLMMemory (sim) runs 20,000 requests of
// Azure's mix on one H100: at the trace's load (19 steps a request) the
// heap peaks at 1,150 B a request (5,470 B allocated, -benchmem), with
// every request alone (210 steps) at 7,450 B (11,780 B allocated): about
// 520 B a request and 33 B a pair. A whole `conspirator run` (files and
// report too; peak RSS by /usr/bin/time) takes 1.56 GB for 1,000,000
// requests at the trace's load and 833 MB for 100,000 alone: 844 B a
// request and 36 B a pair. The constants round up the runs under load
// (a step's pair serves its batch); the pathological case, every request
// alone, is bounded at run time instead (maxITLPairs). With sample_every
// 0s the samples, one a step, come on top.
const (
	// BytesPerRequest is a run's memory per request, less its
	// inter-token latencies.
	BytesPerRequest = 1024
	// BytesPerTokenGap is a run's memory per output token after a
	// request's first, as runs under load use it: a step adds one
	// inter-token latency pair (16 B, 36 B with the sort's copy) for its
	// whole batch, so at the Azure trace's load the whole run takes
	// 1,150 B a request (BenchmarkLLMMemory), under 1 B a gap. With every
	// request alone a pair per token is kept; maxITLPairs bounds that
	// case at run time with an error naming the fix, so the estimate
	// need not charge every run for it.
	BytesPerTokenGap = 8
	// MemoryLimit is the largest estimated run accepted (a workload of
	// Azure's mix, 2,704 B a request: 3.18 million requests): past it a run
	// would die with Go's out-of-memory error after minutes, with no
	// result; 8 GiB leaves room on CI's 24 GiB, as the cluster and data
	// path sections' bounds do.
	MemoryLimit = 8 << 30
)

// maxITLPairs bounds the inter-token latency pairs a run keeps (36 B each
// with the sort's copy): half of MemoryLimit. Past it the run stops with
// ErrTooManyGaps rather than grow until Go runs out of memory. A
// variable so that tests can lower it.
var maxITLPairs int64 = MemoryLimit / 2 / 36

// ErrTooManyGaps is the error of a run whose requests ran so far apart
// (one step per token) that their inter-token latencies alone pass
// maxITLPairs.
var ErrTooManyGaps = fmt.Errorf("llmserve: the run kept more than %d inter-token latency records (about %s): its requests ran mostly one at a time, a step per token; serve fewer requests (llm.workload.synthetic.requests, or a trace window: llm.workload.window_start and window_end) or a higher rate", maxITLPairs, gib(MemoryLimit/2))

// EstimateMemory is the memory a run of requests with gaps output tokens
// after their first needs, in bytes (BytesPerRequest, BytesPerTokenGap).
func EstimateMemory(requests, gaps float64) float64 {
	return requests*BytesPerRequest + gaps*BytesPerTokenGap
}

// TraceMemory is EstimateMemory of a trace's requests.
func TraceMemory(tr wllm.Trace) float64 {
	var gaps float64
	for _, r := range tr.Requests {
		gaps += float64(max(r.OutputTokens-1, 0))
	}
	return EstimateMemory(float64(len(tr.Requests)), gaps)
}

// CheckTraceMemory refuses, naming key (the trace's key) and the fix, a
// trace whose run would need more than MemoryLimit.
func CheckTraceMemory(tr wllm.Trace, key string) error {
	if est := TraceMemory(tr); est > MemoryLimit {
		return units.Invalid(key, "%s holds %d requests, whose run needs about %s of memory (%d B a request and %d B an output token after the first), over the %s limit; serve part of it with llm.workload.window_start and window_end",
			tr.Name, len(tr.Requests), gib(est), BytesPerRequest, BytesPerTokenGap, gib(MemoryLimit))
	}
	return nil
}

func gib(b float64) string { return fmt.Sprintf("%.1f GiB", b/(1<<30)) }

// Config is the llm section of a scenario: LLM inference served by
// replicas of one model on GPUs (or MIG slices), each running a vLLM-style
// continuous-batching scheduler over a paged KV cache, fed by a trace or a
// synthetic workload. Its defaults are vLLM's own, each with the version
// it is read from.
type Config struct {
	Model    string `yaml:"model" doc:"the served model: a built-in model (llama-2-7b, llama-2-13b, llama-2-70b, llama-3-8b, llama-3-70b, llama-3.1-8b, llama-3.1-70b, qwen2-7b, qwen2-72b, mixtral-8x7b, opt-13b; hw/llm) or the path of a HuggingFace config.json (relative to the working directory; a data file of the run)" default:"llama-3.1-8b"`
	GPU      string `yaml:"gpu" doc:"GPU type of every replica (hw/gpu catalog; one with roofline figures: a100-40gb, a100-80gb, h100-80gb, h100-94gb, h200-141gb, ...)" default:"h100-80gb"`
	TP       int    `yaml:"tp" doc:"tensor-parallel degree: GPUs per replica, 1 to 8 (one node); it must divide the model's attention heads" default:"1"`
	MIG      string `yaml:"mig" doc:"a MIG profile of gpu (e.g. 3g.40gb): each replica runs on one such instance, with its share of the SMs, memory and bandwidth; tp must be 1; empty: whole GPUs" default:""`
	GPUs     int    `yaml:"gpus" doc:"GPUs in all, a multiple of tp: replicas = gpus / tp; 0: replicas x tp (replicas is used)" default:"0"`
	Replicas int    `yaml:"replicas" doc:"model replicas, each tp GPUs (or one MIG instance) with its own scheduler and KV cache; a router spreads the requests over them. With gpus set, leave it at 1 or give gpus / tp" default:"1"`

	Scheduler            string             `yaml:"scheduler" doc:"vllm-v1 (every step fills the token budget with decodes and prefill chunks together: chunked prefill) or vllm-v0 (a step runs whole prompts up to the budget, prefills first, or decodes; no chunked prefill)" default:"vllm-v1" source:"vendor: vLLM v0.8 made the V1 engine the default (docs.vllm.ai, V1 user guide)"`
	MaxNumBatchedTokens  int                `yaml:"max_num_batched_tokens" doc:"vLLM's max_num_batched_tokens: the tokens one step may run (decodes count one each); under vllm-v0 a prompt longer than it is refused, so raise it to the model's context" default:"8192" source:"vendor: vLLM v0.9 and later, EngineArgs.get_batch_defaults (V1 engine): vllm serve (online serving) on a GPU of at least 70 GiB other than the A100 (H100, H200) defaults to 8192; on other GPUs, the A100 among them, to 2048 (vLLM PR #17885); the offline LLM class to 16384 and 8192. This project takes the H100 online figure for every GPU: set 2048 to match vllm serve on an A100"`
	MaxNumSeqs           int                `yaml:"max_num_seqs" doc:"vLLM's max_num_seqs: the most requests running in one step" default:"256" source:"vendor: vLLM v0.9 and later, EngineArgs.get_batch_defaults: 256 for vllm serve on GPUs below 70 GiB and on the A100; 1024 on larger GPUs (H100, H200). This project keeps 256, the figure of most published vLLM benchmarks; set 1024 to match vllm serve on an H100"`
	BlockSize            int                `yaml:"block_size" doc:"tokens per KV-cache block (vLLM's block_size; PagedAttention pages)" default:"16" source:"vendor: vLLM v0.9 and later, CacheConfig: block_size 16 on CUDA"`
	GPUMemoryUtilization units.Fraction     `yaml:"gpu_memory_utilization" doc:"share of each GPU's (or slice's) memory that weights, activations and the KV cache may take; the KV cache gets what the weights and the activation reserve leave (vLLM's gpu_memory_utilization)" default:"90%" source:"vendor: vLLM v0.9 and later, CacheConfig: gpu_memory_utilization 0.9"`
	KVBlocks             int                `yaml:"kv_blocks" doc:"each replica's KV capacity in blocks, overriding the one the memory gives (vLLM's num_gpu_blocks_override); 0: from the memory: (memory x gpu_memory_utilization - weights/tp - activation reserve) / bytes of a block per GPU" default:"0"`
	Preemption           string             `yaml:"preemption" doc:"what happens to a running request when the KV cache runs out: recompute (its blocks are freed; it waits at the head of the queue and recomputes its prompt and output so far) or swap (its blocks go to host memory over PCIe and come back; vllm-v0 only)" default:"recompute" source:"vendor: vLLM V1 preempts by recomputation only; V0's default preemption_mode was recompute"`
	PrefixCaching        bool               `yaml:"prefix_caching" doc:"keep freed KV blocks, keyed by the prompt prefix they hold, for later requests sharing the prefix (vLLM's automatic prefix caching); needs a trace with prefix hashes (Mooncake); without them it caches nothing" default:"true" source:"vendor: vLLM V1 (v0.8 and later) turns enable_prefix_caching on unless it is set (EngineArgs)"`
	Router               string             `yaml:"router" doc:"which replica takes a request: round-robin, least-outstanding-tokens (the fewest prompt and output tokens still to serve) or prefix-aware (the longest cached prefix, ties to the fewest outstanding tokens, unless that replica is too far ahead of the least-loaded one: router_balance_abs and router_balance_rel)" default:"round-robin" source:"vendor: vLLM production-stack router's default routing logic is round-robin"`
	RouterBalanceAbs     int                `yaml:"router_balance_abs" doc:"prefix-aware: a request leaves its home replica (the longest cached prefix) for the one with the fewest outstanding tokens when the home's outstanding tokens exceed that replica's by more than this many and by more than the factor router_balance_rel; 0: no fall-back (the cache alone decides, load breaks ties)" default:"8192" source:"choice: one step of vLLM's default token budget (max_num_batched_tokens 8192): a home replica less than a full step of work ahead keeps the request and its cache hit. SGLang's cache-aware router has the rule in requests (balance_abs_threshold 64; 32 in early releases); tokens here, the load the least-outstanding-tokens router counts, as Mooncake's prompts run from hundreds to 126,000 tokens (docs/llm.md)"`
	RouterBalanceRel     float64            `yaml:"router_balance_rel" doc:"prefix-aware: the factor by which the home replica's outstanding tokens must exceed the least-loaded replica's, as well as by router_balance_abs, for a request to leave its home; at least 1" default:"1.5" source:"vendor: SGLang router, balance_rel_threshold 1.5 (sglang_router RouterArgs, v0.5; 1.0001 in early releases)"`
	MaxOutstanding       int                `yaml:"max_outstanding" doc:"admission limit: requests in the system across all replicas; a request arriving when it is reached is rejected and counted; 0: no limit" default:"0"`
	Priority             string             `yaml:"priority" doc:"order of the waiting queue: fcfs (arrival) or priority (the shortest prompt first, ties by arrival)" default:"fcfs" source:"vendor: vLLM scheduling_policy default fcfs"`
	SLO                  SLOConfig          `yaml:"slo" doc:"the service-level objective a request meets when both its TTFT and its TPOT are at or below their bounds (goodput and SLO attainment)"`
	SampleEvery          units.Duration     `yaml:"sample_every" doc:"KV-cache use and batch size are sampled this often per replica (llm_samples.csv, the figures); 0s: at every step" default:"1s"`
	Capacity             CapacityConfig     `yaml:"capacity" doc:"the configuration search of conspirator llm capacity: GPU types, TP degrees and rates to try (run ignores it)"`
	Disagg               DisaggConfig       `yaml:"disagg" doc:"prefill/decode disaggregation: a prefill pool and a decode pool, each request's KV cache moved between them over a modelled data path"`
	ControlPlane         ControlPlaneConfig `yaml:"control_plane" doc:"the serving engine's per-step CPU work (scheduling, input preparation, sampling, detokenisation) and where it runs: the host's cores under background load, or a SmartNIC's Arm cores"`
	HostLoad             units.Fraction     `yaml:"host_load" doc:"other work on the servers' host cores (the data-path section's per-core model: work stretches by (1 + 0.1 x load) / (1 - load/2), 1.8x at 80%): it slows the control plane's CPU work with placement host and the host's share of KV transfers (RDMA posting, TCP's copies)" default:"0%"`
	HostDispatch         HostDispatchConfig `yaml:"host_dispatch" doc:"the model runner's host time per step (kernel launches per layer in eager steps, work per sequence), which the GPU cannot run ahead of: a step takes the longer of the two; zero by default (CUDA graphs, a host that keeps ahead)"`
	PrefixFetch          PrefixFetchConfig  `yaml:"prefix_fetch" doc:"a KV store behind the prefix caches (LMCache, Mooncake Store): missing prefix blocks an earlier prompt held are fetched over a data path or from SSD instead of recomputed"`

	Workload WorkloadConfig `yaml:"workload" doc:"the requests served"`
	Seeds    int            `yaml:"seeds" doc:"runs, seeds seed .. seed+seeds-1. A synthetic workload is drawn anew per seed and summary.json gives means with 95% CIs over the seeds; a trace replays as recorded (the model draws nothing), so every seed would give the same result: with a trace, seeds must be 1" default:"1"`
}

// SLOConfig bounds the two latencies a user of a chat service feels.
type SLOConfig struct {
	TTFT     units.Duration `yaml:"ttft" doc:"time to first token bound: arrival to the first output token" default:"1s" source:"choice: DistServe (OSDI'24) and Splitwise evaluate chat SLOs of hundreds of milliseconds to a few seconds for TTFT"`
	TPOT     units.Duration `yaml:"tpot" doc:"time per output token bound: the mean gap between output tokens after the first" default:"100ms" source:"choice: 100 ms per token (10 tokens/s) is faster than people read; DistServe's chatbot SLOs use 0.1 to 0.2 s"`
	Quantile float64        `yaml:"quantile" doc:"the share of requests that must meet the SLO for a rate to count as served (the capacity search and the console's verdict compare SLO attainment with it), in (0, 1]" default:"0.9" source:"choice: DistServe's SLO attainment target of 90%"`
}

// WorkloadConfig says where the requests come from.
type WorkloadConfig struct {
	Source      string         `yaml:"source" doc:"trace (a recorded trace file) or synthetic (drawn per seed)" default:"synthetic"`
	Trace       string         `yaml:"trace" doc:"trace: the trace file (Azure LLM 2023/2024 CSV, Mooncake JSON lines with prefix hashes, BurstGPT CSV; workloads/llm); relative to the working directory"`
	Format      string         `yaml:"format" doc:"trace: azure, mooncake or burstgpt; empty: detected from the first line" default:""`
	RateScale   float64        `yaml:"rate_scale" doc:"trace: multiply the arrival rate by this factor (arrivals divided by it; lengths kept): 2 replays the same requests in half the time" default:"1"`
	WindowStart units.Duration `yaml:"window_start" doc:"trace: keep the requests arriving from this time on (after rate_scale), re-based to 0" default:"0s"`
	WindowEnd   units.Duration `yaml:"window_end" doc:"trace: keep the requests arriving before this time (after rate_scale); 0s: to the end" default:"0s"`
	Synthetic   SynthConfig    `yaml:"synthetic" doc:"synthetic: the workload drawn per seed"`
}

// SynthConfig is a synthetic workload (workloads/llm.SyntheticConfig).
type SynthConfig struct {
	Requests int          `yaml:"requests" doc:"requests drawn" default:"1000"`
	Rate     units.Rate   `yaml:"rate" doc:"mean arrival rate" default:"5/s" source:"measured: the Azure 2023 conversation trace holds 19,366 requests in one hour, 5.4/s"`
	Arrival  string       `yaml:"arrival" doc:"poisson (exponential gaps) or gamma (gamma gaps with coefficient of variation cv: above 1 burstier than Poisson)" default:"poisson"`
	CV       float64      `yaml:"cv" doc:"gamma: the gaps' coefficient of variation, (0, 10]; 0 with poisson" default:"0"`
	Prompt   LengthConfig `yaml:"prompt" doc:"prompt lengths" default:"{kind: lognormal, mean: 1155, sigma: 0.99}" source:"measured: the Azure 2023 conversation trace's mean prompt, 1,154.7 tokens, and standard deviation of the log prompt length, 0.985"`
	Output   LengthConfig `yaml:"output" doc:"output lengths" default:"{kind: lognormal, mean: 211, sigma: 0.86}" source:"measured: the Azure 2023 conversation trace's mean output, 211.1 tokens, and standard deviation of the log output, 0.86"`
}

// LengthConfig is a token-length distribution.
type LengthConfig struct {
	Kind  string  `yaml:"kind" doc:"lognormal (mean and sigma) or fixed (every request mean tokens)"`
	Mean  float64 `yaml:"mean" doc:"lognormal: the mean length in tokens (not of the log); fixed: the length"`
	Sigma float64 `yaml:"sigma" doc:"lognormal: the standard deviation of the log length, 0 to 4; 0 with fixed"`
}

// ModelLoader reads a HuggingFace config.json named by the section's model
// key: the assembly gives one (this package reads no file).
type ModelLoader func(path string) (llm.Model, error)

// IsModelPath says whether model names a config.json file rather than a
// catalog model: it ends in .json or holds a path separator.
func IsModelPath(model string) bool {
	m := strings.TrimSpace(model)
	return strings.HasSuffix(strings.ToLower(m), ".json") || strings.ContainsAny(m, `/\`) && !isCatalogAlias(m)
}

// isCatalogAlias: HuggingFace repository names such as
// meta-llama/Llama-3.1-8B are catalog aliases, not paths.
func isCatalogAlias(m string) bool {
	_, err := llm.Lookup(m)
	return err == nil
}

// Files lists the data files c reads, with the key naming each.
func (c Config) Files() (keys, paths []string) {
	if IsModelPath(c.Model) {
		keys, paths = append(keys, "llm.model"), append(paths, c.Model)
	}
	if c.Workload.Source == SourceTrace {
		keys, paths = append(keys, "llm.workload.trace"), append(paths, c.Workload.Trace)
	}
	return keys, paths
}

// Synthetic is the synthetic workload as workloads/llm draws it.
func (c Config) Synthetic() wllm.SyntheticConfig {
	s := c.Workload.Synthetic
	dist := func(l LengthConfig) wllm.LengthDist {
		return wllm.LengthDist{Kind: l.Kind, Mean: l.Mean, Sigma: l.Sigma}
	}
	return wllm.SyntheticConfig{Requests: s.Requests, Rate: float64(s.Rate), Arrival: s.Arrival, CV: s.CV, Prompt: dist(s.Prompt), Output: dist(s.Output)}
}

// ReplicaCount is the replicas the section asks for: gpus / tp when gpus
// is set, else replicas.
func (c Config) ReplicaCount() int {
	if c.GPUs > 0 && c.TP > 0 {
		return c.GPUs / c.TP
	}
	return c.Replicas
}

// Validate reports every problem of c that needs no file, each at its key.
// A config.json model is checked by Plan, which reads it.
func (c Config) Validate() error {
	var p []error
	add := func(key, format string, a ...any) { p = append(p, units.Invalid(key, format, a...)) }
	var model *llm.Model
	if strings.TrimSpace(c.Model) == "" {
		add("model", "empty; name a built-in model (%s) or a HuggingFace config.json path", strings.Join(llm.Names(), ", "))
	} else if !IsModelPath(c.Model) {
		if m, err := llm.Lookup(c.Model); err != nil {
			add("model", "%v", err)
		} else {
			model = &m
		}
	}
	if _, err := c.placement(); err != nil {
		var fe *units.FieldError
		if errors.As(err, &fe) {
			p = append(p, err)
		} else {
			add("gpu", "%v", err)
		}
	}
	if c.Replicas < 1 || c.Replicas > MaxReplicas {
		add("replicas", "%d; want 1 to %d replicas", c.Replicas, MaxReplicas)
	}
	if c.GPUs < 0 || c.GPUs > MaxReplicas*llm.MaxTP {
		add("gpus", "%d; want 0 (replicas x tp) or 1 to %d GPUs", c.GPUs, MaxReplicas*llm.MaxTP)
	} else if c.GPUs > 0 && c.TP >= 1 {
		switch {
		case c.GPUs%c.TP != 0:
			add("tp", "%d does not divide gpus %d: every replica takes tp GPUs; use a tp that divides %d (%s), or gpus a multiple of %d", c.TP, c.GPUs, c.GPUs, divisors(c.GPUs, llm.MaxTP), c.TP)
		case c.Replicas != 1 && c.Replicas != c.GPUs/c.TP:
			add("replicas", "%d, but gpus %d / tp %d gives %d replicas; give one of gpus and replicas, or make them agree", c.Replicas, c.GPUs, c.TP, c.GPUs/c.TP)
		}
	}
	if c.Scheduler != SchedulerV1 && c.Scheduler != SchedulerV0 {
		add("scheduler", "%q; use %s or %s", c.Scheduler, SchedulerV1, SchedulerV0)
	}
	if c.MaxNumBatchedTokens < 1 || c.MaxNumBatchedTokens > MaxBatchedTokensLimit {
		add("max_num_batched_tokens", "%d; want 1 to %d tokens a step (vLLM's default 8192)", c.MaxNumBatchedTokens, MaxBatchedTokensLimit)
	}
	if c.MaxNumSeqs < 1 || c.MaxNumSeqs > MaxSeqsLimit {
		add("max_num_seqs", "%d; want 1 to %d requests a step (vLLM's default 256)", c.MaxNumSeqs, MaxSeqsLimit)
	} else if c.MaxNumBatchedTokens >= 1 && c.MaxNumSeqs > c.MaxNumBatchedTokens {
		add("max_num_seqs", "%d is above max_num_batched_tokens %d: each running request takes at least one token of a step's budget; lower max_num_seqs or raise max_num_batched_tokens", c.MaxNumSeqs, c.MaxNumBatchedTokens)
	}
	if !slices.Contains([]int{1, 8, 16, 32, 64, 128}, c.BlockSize) {
		add("block_size", "%d; vLLM's CUDA blocks are 8, 16 or 32 tokens (16 by default); use 1, 8, 16, 32, 64 or 128", c.BlockSize)
	}
	if u := float64(c.GPUMemoryUtilization); !(u > 0 && u <= 1) {
		add("gpu_memory_utilization", "%v; want a share above 0%% and at most 100%% (vLLM's default 90%%)", u)
	}
	if c.KVBlocks < 0 || c.KVBlocks > 1<<30 {
		add("kv_blocks", "%d; want 0 (from the memory) or 1 to %d blocks", c.KVBlocks, 1<<30)
	}
	switch c.Preemption {
	case PreemptRecompute:
	case PreemptSwap:
		if c.Scheduler == SchedulerV1 {
			add("preemption", "swap under scheduler vllm-v1: vLLM's V1 engine preempts by recomputation only; use recompute, or scheduler vllm-v0")
		}
	default:
		add("preemption", "%q; use %s or %s", c.Preemption, PreemptRecompute, PreemptSwap)
	}
	if !slices.Contains([]string{RouterRoundRobin, RouterLeastTokens, RouterPrefix}, c.Router) {
		add("router", "%q; use %s, %s or %s", c.Router, RouterRoundRobin, RouterLeastTokens, RouterPrefix)
	}
	if c.RouterBalanceAbs < 0 || c.RouterBalanceAbs > MaxBalanceTokens {
		add("router_balance_abs", "%d; want 0 (no fall-back) or a number of tokens up to %d, e.g. 8192 (one step of vLLM's default budget)", c.RouterBalanceAbs, MaxBalanceTokens)
	}
	if r := c.RouterBalanceRel; !(r >= 1 && r <= MaxBalanceRel) {
		add("router_balance_rel", "%v; want a factor of at least 1 and at most %d, e.g. 1.5 (SGLang's default): the home replica's outstanding tokens must exceed the least-loaded replica's times it", r, MaxBalanceRel)
	}
	if c.MaxOutstanding < 0 || c.MaxOutstanding > wllm.MaxSyntheticRequests {
		add("max_outstanding", "%d; want 0 (no limit) or 1 to %d requests", c.MaxOutstanding, wllm.MaxSyntheticRequests)
	}
	if c.Priority != PriorityFCFS && c.Priority != PriorityShortest {
		add("priority", "%q; use %s or %s", c.Priority, PriorityFCFS, PriorityShortest)
	}
	if c.SLO.TTFT <= 0 || c.SLO.TTFT > units.Duration(engine.Horizon) {
		add("slo.ttft", "%v; want a bound above 0s, e.g. 1s", c.SLO.TTFT)
	}
	if c.SLO.TPOT <= 0 || c.SLO.TPOT > units.Duration(engine.Horizon) {
		add("slo.tpot", "%v; want a bound above 0s, e.g. 100ms", c.SLO.TPOT)
	}
	if !(c.SLO.Quantile > 0 && c.SLO.Quantile <= 1) {
		add("slo.quantile", "%v; want the share of requests that must meet the SLO, in (0, 1], e.g. 0.9", c.SLO.Quantile)
	}
	if c.SampleEvery < 0 || c.SampleEvery > units.Duration(engine.Horizon) {
		add("sample_every", "%v; want 0s (every step) or a period above 0s", c.SampleEvery)
	}
	if c.Seeds < 1 || c.Seeds > MaxSeeds {
		add("seeds", "%d; want 1 to %d", c.Seeds, MaxSeeds)
	}
	c.Capacity.validate(add)
	c.Disagg.validate(add)
	c.ControlPlane.validate(add)
	c.HostDispatch.validate(c.ControlPlane, add)
	c.PrefixFetch.validate(add, c.PrefixCaching)
	if c.PrefixFetch.Enabled && c.Disagg.Enabled {
		add("prefix_fetch.enabled", "true with disagg: fetching into a prefill pool is not modelled yet; use one of them")
	}
	if u := float64(c.HostLoad); !(u >= 0 && u < 1) {
		add("host_load", "%v; want 0%% up to but not 100%% (at 100%% the engine would never run)", c.HostLoad)
	}
	w := c.Workload
	switch w.Source {
	case SourceTrace:
		if strings.TrimSpace(w.Trace) == "" {
			add("workload.trace", "empty; name an LLM trace file (Azure, Mooncake or BurstGPT), or set workload.source: synthetic")
		}
		if w.Format != "" && !slices.Contains(wllm.Formats(), strings.ToLower(w.Format)) {
			add("workload.format", "%q; use %s, or leave it empty to detect the format", w.Format, strings.Join(wllm.Formats(), ", "))
		}
		if !(w.RateScale > 0) || w.RateScale > 1e9 || math.IsInf(w.RateScale, 0) {
			add("workload.rate_scale", "%v; want a factor above 0 and at most 1e9 (2 doubles the rate, 0.5 halves it)", w.RateScale)
		}
		if w.WindowStart < 0 || w.WindowStart > units.Duration(engine.Horizon) {
			add("workload.window_start", "%v; want 0s or later, within the simulator's horizon (%s)", w.WindowStart, engine.HorizonText)
		}
		if w.WindowEnd < 0 || w.WindowEnd > units.Duration(engine.Horizon) {
			add("workload.window_end", "%v; want 0s (to the end) or a time within the simulator's horizon (%s)", w.WindowEnd, engine.HorizonText)
		} else if w.WindowEnd != 0 && w.WindowEnd <= w.WindowStart {
			add("workload.window_end", "%v is not after window_start %v; want window_end > window_start, or 0s for the end of the trace", w.WindowEnd, w.WindowStart)
		}
		if c.Seeds > 1 {
			add("seeds", "%d with a trace: a trace replays as recorded and the model draws nothing, so every seed gives the same result; use seeds: 1, or workload.source: synthetic for a CI over drawn workloads", c.Seeds)
		}
	case SourceSynthetic:
		// The memory bound and the synthetic checks (the horizon among
		// them) are both reported: either fix may be the one wanted.
		if n, out := w.Synthetic.Requests, w.Synthetic.Output.Mean; n >= 1 && n <= wllm.MaxSyntheticRequests && out >= 1 {
			per := EstimateMemory(1, out-1)
			if est := float64(n) * per; est > MemoryLimit {
				add("workload.synthetic.requests", "%d requests of %v output tokens on average need about %s of memory (%.0f B each: %d B a request and %d B an output token after the first), over the %s limit; draw fewer requests (%d fit)",
					n, out, gib(est), per, BytesPerRequest, BytesPerTokenGap, gib(MemoryLimit), int(MemoryLimit/per))
			}
		}
		if err := c.Synthetic().Validate(); err != nil {
			for _, e := range flatten(err) {
				key, msg := syntheticKey(e.Error())
				add(key, "%s", msg)
			}
		}
		if model != nil && model.MaxContext > 0 {
			if pr := w.Synthetic.Prompt; pr.Kind == wllm.KindFixed && pr.Mean+w.Synthetic.Output.Mean > float64(model.MaxContext) && w.Synthetic.Output.Kind == wllm.KindFixed {
				add("workload.synthetic.prompt.mean", "%v prompt + %v output tokens exceed %s's context of %d tokens; shorten them, or serve a model with a longer context", pr.Mean, w.Synthetic.Output.Mean, model.Name, model.MaxContext)
			} else if pr.Kind == wllm.KindFixed && pr.Mean > float64(model.MaxContext) {
				add("workload.synthetic.prompt.mean", "%v tokens exceed %s's context of %d tokens; shorten the prompt, or serve a model with a longer context", pr.Mean, model.Name, model.MaxContext)
			}
		}
	default:
		add("workload.source", "%q; use %s or %s", w.Source, SourceTrace, SourceSynthetic)
	}
	if err := errors.Join(p...); err != nil {
		return err
	}
	if model != nil {
		if _, err := c.plan(*model); err != nil {
			return err
		}
	}
	return nil
}

// flatten undoes errors.Join.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// syntheticKey places a workloads/llm synthetic error ("llm: synthetic:
// rate 0/s; want ...") at its key under workload.synthetic.
func syntheticKey(msg string) (key, rest string) {
	msg = strings.TrimPrefix(msg, "llm: synthetic: ")
	for _, k := range []string{"requests", "rate", "arrival", "cv", "prompt.mean", "prompt.sigma", "prompt.kind", "prompt.values", "prompt", "output.mean", "output.sigma", "output.kind", "output.values", "output"} {
		if r, ok := strings.CutPrefix(msg, k+" "); ok {
			return "workload.synthetic." + k, r
		}
		if r, ok := strings.CutPrefix(msg, k+": "); ok {
			return "workload.synthetic." + k, r
		}
	}
	// The span check names no single key: the requests over the rate.
	return "workload.synthetic.requests", msg
}

func divisors(n, most int) string {
	var ds []string
	for d := 1; d <= most && d <= n; d++ {
		if n%d == 0 {
			ds = append(ds, fmt.Sprint(d))
		}
	}
	return strings.Join(ds, ", ")
}

// placement resolves gpu, tp and mig; an error of a key other than gpu is
// a *units.FieldError at it.
func (c Config) placement() (llm.Placement, error) {
	g, err := gpu.Lookup(c.GPU)
	if err != nil {
		return llm.Placement{}, err
	}
	if g.PeakDenseBF16 <= 0 || g.MemoryBandwidth <= 0 {
		return llm.Placement{}, fmt.Errorf("%s has no sourced peak FLOP/s or memory bandwidth, so a serving step cannot be timed on it; use one of %s", g.Name, strings.Join(llm.RooflineGPUs(), ", "))
	}
	if c.TP < 1 || c.TP > llm.MaxTP {
		return llm.Placement{}, units.Invalid("tp", "%d; want 1 to %d GPUs a replica (one node)", c.TP, llm.MaxTP)
	}
	pl := llm.Placement{GPU: g, TP: c.TP}
	if c.MIG != "" {
		if g.MIG == nil {
			return pl, units.Invalid("mig", "%q, but %s has no MIG; leave mig empty, or use a MIG GPU (a100-80gb, h100-80gb, h200-141gb)", c.MIG, g.Name)
		}
		prof, err := g.MIG.Lookup(c.MIG)
		if err != nil {
			return pl, units.Invalid("mig", "%v", err)
		}
		if c.TP > 1 {
			return pl, units.Invalid("tp", "%d on MIG slice %s: MIG instances have no peer-to-peer path (no NVLink or PCIe P2P between them); use tp 1, or whole GPUs (mig empty)", c.TP, c.MIG)
		}
		pl.Slice = prof
	}
	return pl, nil
}

// Plan resolves c once: the model (a catalog name, or a config.json read
// through load), the GPU, the MIG slice, the fitted efficiencies and each
// replica's KV capacity. Its errors name the key and the fix.
func (c Config) Plan(load ModelLoader) (Plan, error) {
	var m llm.Model
	if IsModelPath(c.Model) {
		if load == nil {
			return Plan{}, units.Invalid("model", "%s is a config.json path, but no loader was given (the assembly passes one)", c.Model)
		}
		var err error
		if m, err = load(c.Model); err != nil {
			return Plan{}, units.Invalid("model", "%v", err)
		}
		if m.MaxContext <= 0 {
			return Plan{}, units.Invalid("model", "%s gives no max_position_embeddings, so no request's length can be checked against the context; add the key to the config.json", c.Model)
		}
	} else {
		var err error
		if m, err = llm.Lookup(c.Model); err != nil {
			return Plan{}, units.Invalid("model", "%v", err)
		}
	}
	return c.plan(m)
}

// ActivationReserveBytes is the memory per GPU vLLM's profiling run finds
// the forward pass of one full step to need, which the KV cache cannot
// have: the FFN's widest activation (gate and up, intermediate/tp each)
// and four hidden-wide buffers for every token of the step's budget, plus
// the FP32 logits of every running request. E: vLLM logs a peak of about
// 1.2 GiB for Llama-3.1-8B at 8,192 tokens on an H100; this gives 0.87 GB.
func ActivationReserveBytes(m llm.Model, tp, maxBatchedTokens, maxSeqs int) float64 {
	perToken := float64(2*m.Intermediate/tp+4*m.Hidden) * float64(m.DTypeBytes)
	return float64(maxBatchedTokens)*perToken + float64(maxSeqs)*float64(m.Vocab)*4
}

func (c Config) plan(m llm.Model) (Plan, error) {
	pl, err := c.placement()
	if err != nil {
		return Plan{}, err
	}
	eff, err := llm.FittedEfficiency(pl.GPU)
	if err != nil {
		return Plan{}, units.Invalid("gpu", "%v", err)
	}
	if err := c.HostDispatch.apply(&eff, float64(c.HostLoad)); err != nil {
		return Plan{}, err
	}
	// The TP degree against the model's heads, and the weights alone.
	if err := llm.CheckFit(m, pl, llm.Batch{Decode: []int{1}}); err != nil {
		var fe *llm.FitError
		if !errors.As(err, &fe) {
			return Plan{}, units.Invalid("tp", "%v", err)
		}
	}
	mem := float64(pl.GPU.MemoryBytes)
	where := pl.GPU.Name
	if pl.Slice != nil {
		mem = float64(pl.Slice.MemoryBytes)
		where += " slice " + pl.Slice.Name
	}
	util := float64(c.GPUMemoryUtilization)
	weights := float64(m.WeightBytes()) / float64(pl.TP)
	reserve := ActivationReserveBytes(m, pl.TP, c.MaxNumBatchedTokens, c.MaxNumSeqs)
	out := Plan{
		Model: m, Placement: pl, Eff: eff, Replicas: c.ReplicaCount(),
		Scheduler: c.Scheduler, MaxBatchedTokens: c.MaxNumBatchedTokens, MaxSeqs: c.MaxNumSeqs, BlockSize: c.BlockSize,
		KVBlocks: c.KVBlocks, GPUMemoryUtilization: util, Preemption: c.Preemption, HostLinkBytesPerSec: pl.GPU.PCIeBandwidth,
		PrefixCaching: c.PrefixCaching, Router: c.Router, MaxOutstanding: c.MaxOutstanding, Priority: c.Priority,
		RouterBalanceAbs: int64(c.RouterBalanceAbs), RouterBalanceRel: c.RouterBalanceRel,
		SLO:         SLO{TTFT: engine.Time(c.SLO.TTFT), TPOT: engine.Time(c.SLO.TPOT), Quantile: c.SLO.Quantile},
		SampleEvery: engine.Time(c.SampleEvery),
	}
	blocks := c.KVBlocks
	if fit, err := KVCapacity(out); blocks == 0 {
		blocks = fit // none left: refused below, with the figures
	} else if err == nil && blocks > fit {
		// An override may hold fewer blocks than the memory (a cache kept
		// small on purpose), never more: they would not be there.
		return Plan{}, units.Invalid("kv_blocks", "%d blocks of %d tokens need %.1f GB of KV per GPU, but %s at TP %d leaves room for %d (%.1f GB: memory x %.2f less weights and activations); lower kv_blocks to %d or less, or set 0 to size the cache from the memory",
			blocks, c.BlockSize, float64(blocks)*float64(int64(c.BlockSize)*m.KVBytesPerTokenPerGPU(pl.TP))/1e9, where, pl.TP, fit,
			float64(fit)*float64(int64(c.BlockSize)*m.KVBytesPerTokenPerGPU(pl.TP))/1e9, util, fit)
	}
	out.KVBlocks = blocks
	if f, err := c.prefixFetch(pl.GPU.PCIeBandwidth); err != nil {
		return Plan{}, err
	} else {
		out.Fetch = f
	}
	if cp, err := c.ControlPlane.resolve(float64(c.HostLoad)); err != nil {
		return Plan{}, err
	} else if cp != nil {
		// The control plane's parts replace the step model's own fixed
		// per-step costs, which stood for the same CPU work.
		out.Control = cp
		out.Eff.EagerStep, out.Eff.GraphStep = 0, 0
	}
	if c.Disagg.Enabled {
		dp, err := c.disaggPlan(m)
		if err != nil {
			return Plan{}, err
		}
		out.Disagg = dp
		return out, nil
	}
	// A replica must hold at least one full step of one request: a
	// budget's worth of tokens, or the model's context where shorter.
	need := (min(c.MaxNumBatchedTokens, max(m.MaxContext, 1)) + c.BlockSize - 1) / c.BlockSize
	if blocks < need && c.KVBlocks > 0 {
		return Plan{}, units.Invalid("kv_blocks", "%d blocks of %d tokens hold fewer tokens than one step of %d needs (%d blocks); raise kv_blocks to %d or more, or set 0 to size the cache from the memory",
			c.KVBlocks, c.BlockSize, min(c.MaxNumBatchedTokens, max(m.MaxContext, 1)), need, need)
	}
	if blocks < need {
		// On a MIG slice the fix is the slice, not the TP (refused there).
		key := "tp"
		if pl.Slice != nil {
			key = "mig"
		}
		if fix := c.fitHint(m, pl); fix != "" {
			return Plan{}, units.Invalid(key, "%s does not fit %s at tp %d: %.1f GB of weights and %.2f GB of activations per GPU leave %.2f GB of the %.1f GB usable (%.0f%% of %.1f GB) for the KV cache, fewer than the %d blocks of %d tokens one step of %d tokens needs; %s",
				m.Name, where, pl.TP, weights/1e9, reserve/1e9, max(0, mem*util-weights-reserve)/1e9, mem*util/1e9, util*100, mem/1e9, need, c.BlockSize, min(c.MaxNumBatchedTokens, max(m.MaxContext, 1)), fix)
		}
		return Plan{}, units.Invalid(key, "%s does not fit %s at tp %d: %.1f GB of weights and %.2f GB of activations per GPU leave %.2f GB of the %.1f GB usable (%.0f%% of %.1f GB) for the KV cache, %d blocks of %d tokens, fewer than the %d one step of %d tokens needs; use a larger tp, a larger GPU or slice, a smaller max_num_batched_tokens, or a higher gpu_memory_utilization",
			m.Name, where, pl.TP, weights/1e9, reserve/1e9, max(0, mem*util-weights-reserve)/1e9, mem*util/1e9, util*100, mem/1e9, blocks, c.BlockSize, need, min(c.MaxNumBatchedTokens, max(m.MaxContext, 1)))
	}
	return out, nil
}

// CheckTrace refuses, naming key (the workload's key) and the fix, a trace
// the plan cannot serve: a request longer than the model's context, and a
// sample period that would keep more than MaxSamples samples over the
// trace's span.
func (p Plan) CheckTrace(tr wllm.Trace, key string) error {
	for _, r := range tr.Requests {
		if p.Model.MaxContext > 0 && r.PromptTokens+r.OutputTokens > p.Model.MaxContext {
			return units.Invalid(key, "%s request %d has %d prompt + %d output tokens, more than %s's context of %d; serve a model with a longer context (llm.model), or leave such requests out (a window)",
				tr.Name, r.ID, r.PromptTokens, r.OutputTokens, p.Model.Name, p.Model.MaxContext)
		}
	}
	for _, r := range tr.Requests {
		if need := (r.PromptTokens + r.OutputTokens - 1 + p.BlockSize - 1) / p.BlockSize; p.KVBlocks > 0 && need > p.KVBlocks {
			where, fix := p.Placement.GPU.Name, "use a larger tp or GPU"
			if sl := p.Placement.Slice; sl != nil {
				where, fix = where+" slice "+sl.Name, "use a larger slice or a whole GPU"
			}
			return units.Invalid(key, "%s request %d has %d prompt + %d output tokens, %d KV blocks of %d tokens, more than a replica's whole KV cache (%d blocks on %s at tp %d); %s, a higher gpu_memory_utilization, or leave such requests out (a window)",
				tr.Name, r.ID, r.PromptTokens, r.OutputTokens, need, p.BlockSize, p.KVBlocks, where, p.Placement.TP, fix)
		}
		if p.Scheduler == SchedulerV0 && r.PromptTokens > p.MaxBatchedTokens {
			return units.Invalid(key, "%s request %d has a prompt of %d tokens, more than max_num_batched_tokens %d, and vllm-v0 (no chunked prefill) runs a prompt whole in one step; raise max_num_batched_tokens to at least %d, or use scheduler vllm-v1",
				tr.Name, r.ID, r.PromptTokens, p.MaxBatchedTokens, r.PromptTokens)
		}
	}
	if p.SampleEvery > 0 && len(tr.Requests) > 0 {
		span := tr.Requests[len(tr.Requests)-1].Arrival
		if n := float64(span) / float64(p.SampleEvery) * float64(p.Replicas); n > MaxSamples {
			return units.Invalid("sample_every", "%v over the %s of arrivals on %d replicas keeps %.3g samples, more than %d; use a sample_every of at least %v",
				units.Duration(p.SampleEvery), units.Duration(span), p.Replicas, n, MaxSamples, units.Duration(engine.Time(math.Ceil(float64(span)*float64(p.Replicas)/MaxSamples))))
		}
	}
	return nil
}

// fitHint names the smallest tp at which m fits whole GPUs of pl's type
// with room for one step, or "" where none up to llm.MaxTP does (or a MIG
// slice is asked for).
func (c Config) fitHint(m llm.Model, pl llm.Placement) string {
	if pl.Slice != nil {
		return "use a larger slice or whole GPUs (mig empty), a smaller max_num_batched_tokens, or a higher gpu_memory_utilization"
	}
	for tp := pl.TP + 1; tp <= llm.MaxTP; tp++ {
		if m.Heads%tp != 0 || (m.KVHeads%tp != 0 && tp%m.KVHeads != 0) {
			continue
		}
		free := float64(pl.GPU.MemoryBytes)*float64(c.GPUMemoryUtilization) - float64(m.WeightBytes())/float64(tp) - ActivationReserveBytes(m, tp, c.MaxNumBatchedTokens, c.MaxNumSeqs)
		block := float64(m.KVBytesPerTokenPerGPU(tp)) * float64(c.BlockSize)
		if free/block >= float64(min(c.MaxNumBatchedTokens, max(m.MaxContext, 1)))/float64(c.BlockSize)+1 {
			return fmt.Sprintf("use tp %d or more (and gpus a multiple of it), a larger GPU, or a smaller max_num_batched_tokens", tp)
		}
	}
	return ""
}
