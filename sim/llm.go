package sim

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/stats"
	"github.com/conspirator-sim/conspirator/hw/llm"
	"github.com/conspirator-sim/conspirator/internal/inputfile"
	"github.com/conspirator-sim/conspirator/sim/cluster"
	"github.com/conspirator-sim/conspirator/sim/llmserve"
	wllm "github.com/conspirator-sim/conspirator/workloads/llm"
	"github.com/conspirator-sim/conspirator/workloads/trace"
)

// LLMSummary is summary.json's llm section: what the plan resolved (the
// model, the placement, each replica's KV capacity) and the serving
// metrics, means over the seeds with 95% CIs where seeds > 1.
type LLMSummary struct {
	Model       string `json:"model"`
	ModelSource string `json:"model_source"`
	Params      int64  `json:"params"`
	MaxContext  int    `json:"max_context"`
	GPU         string `json:"gpu"`
	MIG         string `json:"mig,omitempty"`
	TP          int    `json:"tp"`
	Replicas    int    `json:"replicas"`
	GPUs        int    `json:"gpus"`
	Scheduler   string `json:"scheduler"`
	// WeightsGBPerGPU is the weights one GPU holds (all over tp).
	WeightsGBPerGPU float64 `json:"weights_gb_per_gpu"`
	// KVBlocks is each replica's KV capacity in blocks of BlockSize
	// tokens; KVTokens the same in tokens.
	KVBlocks   int    `json:"kv_blocks"`
	BlockSize  int    `json:"block_size"`
	KVTokens   int64  `json:"kv_tokens"`
	Efficiency string `json:"efficiency_source"`
	// Workload says what was served: the trace and its format, or the
	// synthetic distribution; Requests the requests of the first seed.
	Workload string `json:"workload"`
	Requests int    `json:"requests"`
	// OfferedPerSec is the first seed's arrival rate: its requests over
	// the time from the first arrival to the last.
	OfferedPerSec float64 `json:"offered_requests_per_s"`
	Seeds         int     `json:"seeds"`
	SLO           LLMSLO  `json:"slo"`
	Result        LLMStat `json:"result"`
	// SLOMet says whether SLO attainment (mean over seeds) reached the
	// SLO's quantile.
	SLOMet bool  `json:"slo_met"`
	Steps  int64 `json:"steps"`
	Events int64 `json:"events"`
	// Notes are the trace's and the run's remarks (the first seed's).
	Notes []string `json:"notes,omitempty"`
	// Disagg is the pools and KV transfers of a disaggregated run (the
	// first seed's transfers).
	Disagg *LLMDisagg `json:"disagg,omitempty"`
	// PerSeed is what each seed gave of the metrics the sweep's maps
	// compare (LLMPerSeedMetrics), in seed order, with two seeds or more:
	// runs that share their seeds draw the same requests, so two of them
	// are compared seed by seed (a paired CI), not by their CIs alone.
	PerSeed map[string][]float64 `json:"per_seed,omitempty"`
}

// LLMPerSeedMetrics are the metrics whose per-seed values a summary keeps.
var LLMPerSeedMetrics = map[string]func(llmserve.Summary) float64{
	"tpot_s.p90": func(s llmserve.Summary) float64 { return s.TPOT.P90 },
	"e2e_s.mean": func(s llmserve.Summary) float64 { return s.E2E.Mean },
}

// LLMDisagg describes a disaggregated run: its pools, path and the KV
// transfers (time from a transfer's start to the KV on the decode side;
// wait from the prefill's end to the start, for decode blocks).
type LLMDisagg struct {
	Path            string  `json:"path"`
	Layerwise       bool    `json:"layerwise"`
	Policy          string  `json:"policy"`
	PrefillGPU      string  `json:"prefill_gpu"`
	PrefillTP       int     `json:"prefill_tp"`
	PrefillReplicas int     `json:"prefill_replicas"`
	PrefillKVBlocks int     `json:"prefill_kv_blocks"`
	DecodeGPU       string  `json:"decode_gpu"`
	DecodeTP        int     `json:"decode_tp"`
	DecodeReplicas  int     `json:"decode_replicas"`
	DecodeKVBlocks  int     `json:"decode_kv_blocks"`
	Transfers       int     `json:"transfers"`
	NVLink          int     `json:"nvlink_transfers"`
	HostCopy        int     `json:"host_copy_transfers,omitempty"`
	PrefillMIG      string  `json:"prefill_mig,omitempty"`
	DecodeMIG       string  `json:"decode_mig,omitempty"`
	Crossed         int     `json:"path_transfers"`
	GBMoved         float64 `json:"gb_moved"`
	TransferMeanS   float64 `json:"transfer_mean_s"`
	TransferP99S    float64 `json:"transfer_p99_s"`
	WaitMeanS       float64 `json:"wait_mean_s"`
	WaitP99S        float64 `json:"wait_p99_s"`
	// TailMeanS and TailP99S: first token to the KV on the decode side,
	// the transfer the prefill did not hide.
	TailMeanS float64 `json:"tail_mean_s"`
	TailP99S  float64 `json:"tail_p99_s"`
	// TransferTimesS are the first seed's transfer times, seconds,
	// ascending: for callers counting a share under a bound
	// (`conspirator reproduce`); left out of summary.json, whose size
	// would grow with the requests.
	TransferTimesS []float64 `json:"-"`
}

// LLMSLO is the SLO the goodput is counted against.
type LLMSLO struct {
	TTFTS    float64 `json:"ttft_s"`
	TPOTS    float64 `json:"tpot_s"`
	Quantile float64 `json:"quantile"`
}

// Est is a mean over the seeds and the half-width of its 95% CI (absent
// with one seed).
type Est struct {
	Mean float64  `json:"mean"`
	CI95 *float64 `json:"ci95,omitempty"`
}

// LLMQuantiles is a latency's mean and percentiles, in seconds, each over
// the seeds.
type LLMQuantiles struct {
	Mean Est `json:"mean"`
	P50  Est `json:"p50"`
	P90  Est `json:"p90"`
	P99  Est `json:"p99"`
}

// LLMStat is the serving metrics of llmserve.Summary, each over the seeds.
type LLMStat struct {
	TTFT               LLMQuantiles `json:"ttft_s"`
	TPOT               LLMQuantiles `json:"tpot_s"`
	ITL                LLMQuantiles `json:"itl_s"`
	E2E                LLMQuantiles `json:"e2e_s"`
	Queue              LLMQuantiles `json:"queue_s"`
	Completed          Est          `json:"completed"`
	Rejected           Est          `json:"rejected"`
	RequestsPerSec     Est          `json:"requests_per_s"`
	OutputTokensPerSec Est          `json:"output_tokens_per_s"`
	TokensPerSec       Est          `json:"tokens_per_s"`
	Goodput            Est          `json:"goodput_requests_per_s"`
	SLOAttainment      Est          `json:"slo_attainment"`
	PrefixHitShare     Est          `json:"prefix_hit_share"`
	FetchedShare       Est          `json:"fetched_share"`
	MeanBatch          Est          `json:"mean_batch"`
	MeanKVUsed         Est          `json:"mean_kv_used"`
	PeakKVUsed         Est          `json:"peak_kv_used"`
	Preemptions        Est          `json:"preemptions"`
}

// LLMEnv is what the assembly gives the llm section: its file readers.
var LLMEnv = struct {
	ReadModel llmserve.ModelLoader
	ReadTrace func(path, format string) (wllm.Trace, error)
}{ReadModel: readModelConfig, ReadTrace: wllm.ReadFile}

// readModelConfig reads a HuggingFace config.json (at most 1 MiB).
func readModelConfig(path string) (llm.Model, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return llm.Model{}, err
	}
	defer f.Close()
	return llm.ReadHFConfig(&limitedReader{f, 1 << 20}, path)
}

type limitedReader struct {
	r interface{ Read([]byte) (int, error) }
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("larger than 1 MiB; a config.json is a few KiB")
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// llmInput is the llm section resolved: its plan and, for a trace, the
// trace as the run serves it (rate scaled and windowed).
type llmInput struct {
	plan  llmserve.Plan
	trace *wllm.Trace
}

// llmPrepare builds the plan and reads the trace, each problem an
// *cluster.InputError naming its key (exit 2).
func llmPrepare(cfg llmserve.Config) (*llmInput, error) {
	plan, err := cfg.Plan(func(p string) (llm.Model, error) {
		m, err := LLMEnv.ReadModel(p)
		if errors.Is(err, fs.ErrNotExist) {
			return m, missingInput("llm.model", p)
		}
		return m, err
	})
	if err != nil {
		var ie *cluster.InputError
		if errors.As(err, &ie) {
			return nil, err
		}
		return nil, &cluster.InputError{Err: prefixKey("llm.", err)}
	}
	in := &llmInput{plan: plan}
	if cfg.Workload.Source != llmserve.SourceTrace {
		return in, nil
	}
	w := cfg.Workload
	tr, err := LLMEnv.ReadTrace(w.Trace, strings.ToLower(w.Format))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, missingInput("llm.workload.trace", w.Trace)
	}
	if err != nil {
		return nil, &cluster.InputError{Err: fmt.Errorf("llm.workload.trace: %w", err)}
	}
	if w.RateScale != 1 {
		if tr, err = wllm.Scale(tr, w.RateScale); err != nil {
			return nil, &cluster.InputError{Err: fmt.Errorf("llm.workload.rate_scale: %w", err)}
		}
	}
	if w.WindowStart != 0 || w.WindowEnd != 0 {
		end := engine.Time(w.WindowEnd)
		if end == 0 {
			end = engine.Horizon
		}
		if tr, err = wllm.Window(tr, engine.Time(w.WindowStart), end); err != nil {
			return nil, &cluster.InputError{Err: fmt.Errorf("llm.workload.window_start: %w", err)}
		}
		if len(tr.Requests) == 0 {
			return nil, &cluster.InputError{Err: fmt.Errorf("llm.workload.window_start: the window [%v, %v) holds no request of %s; move the window into the trace's span", w.WindowStart, w.WindowEnd, w.Trace)}
		}
	}
	if err := llmserve.CheckTraceMemory(tr, "workload.trace"); err != nil {
		return nil, &cluster.InputError{Err: prefixKey("llm.", err)}
	}
	if err := plan.CheckTrace(tr, "workload.trace"); err != nil {
		return nil, &cluster.InputError{Err: prefixKey("llm.", err)}
	}
	in.trace = &tr
	return in, nil
}

// prefixKey puts a section's relative key (a units.FieldError) under the
// section.
func prefixKey(section string, err error) error {
	if f, ok := err.(interface{ ConfigField() string }); ok {
		msg := strings.TrimPrefix(err.Error(), f.ConfigField()+": ")
		return fmt.Errorf("%s%s: %s", section, f.ConfigField(), msg)
	}
	return err
}

// checkLLM is validate's check of the llm section: the run's preparation
// and, for a synthetic workload, the first seed's draw.
func checkLLM(cfg llmserve.Config, seed uint64) error {
	in, err := llmPrepare(cfg)
	if err != nil {
		return err
	}
	if in.trace == nil {
		tr, err := llmSynthetic(cfg, seed)
		if err != nil {
			return err
		}
		if err := in.plan.CheckTrace(tr, "workload.synthetic.prompt"); err != nil {
			return &cluster.InputError{Err: prefixKey("llm.", err)}
		}
	}
	return nil
}

// llmSynthetic draws the synthetic workload of one seed.
func llmSynthetic(cfg llmserve.Config, seed uint64) (wllm.Trace, error) {
	tr, err := wllm.Synthesize(cfg.Synthetic(), engine.NewStream(seed, "llm.workload"))
	if err != nil {
		return tr, &cluster.InputError{Err: fmt.Errorf("llm.workload.synthetic: %w", err)}
	}
	return tr, nil
}

// RunLLM runs an llm section alone, as a run would, and returns its
// summary without the files: what the capacity search probes.
func RunLLM(cfg llmserve.Config, seed uint64) (*LLMSummary, error) {
	ls, err := runLLM(cfg, seed, map[string][]byte{})
	if err != nil {
		return nil, llmError(err)
	}
	return ls, nil
}

// runLLM runs the llm section, seed by seed, and adds its files.
func runLLM(cfg llmserve.Config, seed uint64, files map[string][]byte) (*LLMSummary, error) {
	in, err := llmPrepare(cfg)
	if err != nil {
		return nil, err
	}
	p := in.plan
	var sums []llmserve.Summary
	var first *llmserve.Result
	var firstTrace wllm.Trace
	for s := 0; s < cfg.Seeds; s++ {
		var tr wllm.Trace
		if in.trace != nil {
			tr = *in.trace
		} else {
			if tr, err = llmSynthetic(cfg, seed+uint64(s)); err != nil {
				return nil, err
			}
			if err := p.CheckTrace(tr, "workload.synthetic.prompt"); err != nil {
				return nil, &cluster.InputError{Err: prefixKey("llm.", err)}
			}
		}
		res, err := llmserve.Simulate(p, tr)
		if err != nil {
			// Simulate refuses requests the plan cannot serve (too long
			// for a replica's KV cache): an input problem, exit 2.
			return nil, &cluster.InputError{Err: fmt.Errorf("llm: %w", err)}
		}
		if s == 0 {
			first, firstTrace = res, tr
		}
		sums = append(sums, res.Summary)
	}
	files["llm_requests.csv"] = llmRequestsCSV(first)
	files["llm_samples.csv"] = llmSamplesCSV(first)
	out := &LLMSummary{
		Model: p.Model.Name, ModelSource: p.Model.Source, Params: p.Model.Params(), MaxContext: p.Model.MaxContext,
		GPU: p.Placement.GPU.Name, TP: p.Placement.TP, Replicas: p.Replicas, GPUs: p.Replicas * p.Placement.TP,
		Scheduler: p.Scheduler, WeightsGBPerGPU: float64(p.Model.WeightBytes()) / float64(p.Placement.TP) / 1e9,
		KVBlocks: p.KVBlocks, BlockSize: p.BlockSize, KVTokens: int64(p.KVBlocks) * int64(p.BlockSize),
		Efficiency: p.Eff.Source, Requests: len(firstTrace.Requests), Seeds: cfg.Seeds,
		SLO:    LLMSLO{TTFTS: p.SLO.TTFT.Seconds(), TPOTS: p.SLO.TPOT.Seconds(), Quantile: p.SLO.Quantile},
		Result: llmStat(sums), Steps: first.Steps, Events: first.Events,
	}
	if p.Placement.Slice != nil {
		out.MIG = p.Placement.Slice.Name
	}
	if len(sums) > 1 {
		out.PerSeed = map[string][]float64{}
		for k, f := range LLMPerSeedMetrics {
			for _, s := range sums {
				out.PerSeed[k] = append(out.PerSeed[k], f(s))
			}
		}
	}
	if d := p.Disagg; d != nil {
		// The pools replace llm.gpu, tp and replicas: report them.
		out.GPU, out.TP, out.KVBlocks = d.Decode.Placement.GPU.Name, d.Decode.Placement.TP, d.Decode.KVBlocks
		out.KVTokens = int64(d.Decode.KVBlocks) * int64(p.BlockSize)
		out.Replicas = d.Prefill.Replicas + d.Decode.Replicas
		out.GPUs = d.Prefill.Replicas*d.Prefill.Placement.TP + d.Decode.Replicas*d.Decode.Placement.TP
		st := first.Disagg
		out.GPUs = st.GPUs
		slice := func(pl llm.Placement) string {
			if pl.Slice != nil {
				return pl.Slice.Name
			}
			return ""
		}
		out.Disagg = &LLMDisagg{
			PrefillMIG: slice(d.Prefill.Placement), DecodeMIG: slice(d.Decode.Placement),
			Path: d.Path, Layerwise: d.Layerwise, Policy: d.Policy,
			PrefillGPU: d.Prefill.Placement.GPU.Name, PrefillTP: d.Prefill.Placement.TP, PrefillReplicas: d.Prefill.Replicas, PrefillKVBlocks: d.Prefill.KVBlocks,
			DecodeGPU: d.Decode.Placement.GPU.Name, DecodeTP: d.Decode.Placement.TP, DecodeReplicas: d.Decode.Replicas, DecodeKVBlocks: d.Decode.KVBlocks,
			Transfers: st.Transfers, NVLink: st.NVLink, HostCopy: st.HostCopy, Crossed: st.Crossed, GBMoved: st.Bytes / 1e9,
			TransferMeanS: st.Time.Mean, TransferP99S: st.Time.P99, WaitMeanS: st.Wait.Mean, WaitP99S: st.Wait.P99,
			TailMeanS: st.Tail.Mean, TailP99S: st.Tail.P99, TransferTimesS: st.Times,
		}
	}
	out.OfferedPerSec = offeredPerSec(firstTrace)
	if in.trace != nil {
		out.Workload = fmt.Sprintf("trace %s (%s)", cfg.Workload.Trace, firstTrace.Format)
	} else {
		out.Workload = "synthetic"
	}
	out.Notes = append(append(out.Notes, firstTrace.Notes...), first.Notes...)
	out.SLOMet = out.Result.SLOAttainment.Mean >= p.SLO.Quantile
	return out, nil
}

// offeredPerSec is a trace's arrival rate: its requests over the time from
// the first arrival to the last (0 with fewer than two).
func offeredPerSec(tr wllm.Trace) float64 {
	if n := len(tr.Requests); n > 1 {
		if span := tr.Requests[n-1].Arrival - tr.Requests[0].Arrival; span > 0 {
			return float64(n) / span.Seconds()
		}
	}
	return 0
}

// LLMTraceRate is the arrival rate, in requests per second, of an llm
// section's trace as a run serves it (rate scaled and windowed), read
// without serving it: what the capacity search scales a trace from.
func LLMTraceRate(cfg llmserve.Config) (float64, error) {
	in, err := llmPrepare(cfg)
	if err != nil {
		return 0, llmError(err)
	}
	if in.trace == nil {
		return 0, fmt.Errorf("llm: the workload is %s, not a trace", cfg.Workload.Source)
	}
	return offeredPerSec(*in.trace), nil
}

// llmStat takes every metric's mean and 95% CI over the seeds.
func llmStat(ss []llmserve.Summary) LLMStat {
	est := func(f func(llmserve.Summary) float64) Est {
		xs := make([]float64, len(ss))
		for i, s := range ss {
			xs[i] = f(s)
		}
		m, hw := stats.MeanCI(xs, 0.95)
		if math.IsNaN(m) || math.IsInf(m, 0) {
			m = 0 // JSON has no NaN; an empty distribution reads 0
		}
		e := Est{Mean: m}
		if len(xs) > 1 && !math.IsNaN(hw) {
			e.CI95 = &hw
		}
		return e
	}
	q := func(f func(llmserve.Summary) llmserve.Quantiles) LLMQuantiles {
		return LLMQuantiles{
			Mean: est(func(s llmserve.Summary) float64 { return f(s).Mean }),
			P50:  est(func(s llmserve.Summary) float64 { return f(s).P50 }),
			P90:  est(func(s llmserve.Summary) float64 { return f(s).P90 }),
			P99:  est(func(s llmserve.Summary) float64 { return f(s).P99 }),
		}
	}
	return LLMStat{
		TTFT:               q(func(s llmserve.Summary) llmserve.Quantiles { return s.TTFT }),
		TPOT:               q(func(s llmserve.Summary) llmserve.Quantiles { return s.TPOT }),
		ITL:                q(func(s llmserve.Summary) llmserve.Quantiles { return s.ITL }),
		E2E:                q(func(s llmserve.Summary) llmserve.Quantiles { return s.E2E }),
		Queue:              q(func(s llmserve.Summary) llmserve.Quantiles { return s.Queue }),
		Completed:          est(func(s llmserve.Summary) float64 { return float64(s.Completed) }),
		Rejected:           est(func(s llmserve.Summary) float64 { return float64(s.Rejected) }),
		RequestsPerSec:     est(func(s llmserve.Summary) float64 { return s.RequestsPerSec }),
		OutputTokensPerSec: est(func(s llmserve.Summary) float64 { return s.OutputTokensPerSec }),
		TokensPerSec:       est(func(s llmserve.Summary) float64 { return s.TokensPerSec }),
		Goodput:            est(func(s llmserve.Summary) float64 { return s.Goodput }),
		SLOAttainment:      est(func(s llmserve.Summary) float64 { return s.SLOAttainment }),
		PrefixHitShare:     est(func(s llmserve.Summary) float64 { return s.PrefixHitShare }),
		FetchedShare:       est(func(s llmserve.Summary) float64 { return s.FetchedShare }),
		MeanBatch:          est(func(s llmserve.Summary) float64 { return s.MeanBatch }),
		MeanKVUsed:         est(func(s llmserve.Summary) float64 { return s.MeanKVUsed }),
		PeakKVUsed:         est(func(s llmserve.Summary) float64 { return s.PeakKVUsed }),
		Preemptions:        est(func(s llmserve.Summary) float64 { return float64(s.Preemptions) }),
	}
}

// llmRequestsCSV writes one row per request (the first seed's). A
// rejected request has no times: -1.
func llmRequestsCSV(r *llmserve.Result) []byte {
	var b bytes.Buffer
	b.WriteString("id,replica,arrival_s,prompt_tokens,output_tokens,cached_tokens,rejected,preemptions,queue_s,ttft_s,tpot_s,e2e_s\n")
	sec := func(t engine.Time) string { return num(t.Seconds()) }
	for _, q := range r.Requests {
		if q.Rejected {
			fmt.Fprintf(&b, "%d,%d,%s,%d,%d,%d,1,%d,-1,-1,-1,-1\n", q.ID, q.Replica, sec(q.Arrival), q.PromptTokens, q.OutputTokens, q.CachedTokens, q.Preemptions)
			continue
		}
		fmt.Fprintf(&b, "%d,%d,%s,%d,%d,%d,0,%d,%s,%s,%s,%s\n", q.ID, q.Replica, sec(q.Arrival), q.PromptTokens, q.OutputTokens, q.CachedTokens, q.Preemptions,
			sec(q.Queue()), sec(q.TTFT()), sec(q.TPOT()), sec(q.E2E()))
	}
	return b.Bytes()
}

// llmSamplesCSV writes the KV-use and batch samples (the first seed's).
func llmSamplesCSV(r *llmserve.Result) []byte {
	var b bytes.Buffer
	b.WriteString("time_s,replica,kv_used,running,waiting\n")
	for _, s := range r.Samples {
		fmt.Fprintf(&b, "%s,%d,%s,%d,%d\n", num(s.T.Seconds()), s.Replica, num(s.KVUsed), s.Running, s.Waiting)
	}
	return b.Bytes()
}

// llmSource says where an LLM trace comes from, for a missing file.
func llmSource(path string) string {
	base := strings.ToLower(path)
	switch {
	case strings.Contains(base, "azurellminference") || strings.Contains(base, "azure"):
		return "the Azure LLM inference traces (2023: AzureLLMInferenceTrace_conv.csv and _code.csv) are at https://github.com/Azure/AzurePublicDataset (folder data/)"
	case strings.Contains(base, "mooncake") || strings.HasSuffix(base, "_trace.jsonl"):
		return "the Mooncake traces (conversation_trace.jsonl, synthetic_trace.jsonl) are at https://github.com/kvcache-ai/Mooncake (folder FAST25-release/traces/)"
	case strings.Contains(base, "burstgpt"):
		return "the BurstGPT traces are at https://github.com/HPMLL/BurstGPT (folder data/)"
	}
	return "the public LLM traces are at https://github.com/Azure/AzurePublicDataset (Azure LLM inference, folder data/), https://github.com/kvcache-ai/Mooncake (FAST25-release/traces/) and https://github.com/HPMLL/BurstGPT"
}

// llmMissing is the message for a missing llm input file.
func llmMissing(key, path string) error {
	if key == "llm.model" {
		return &cluster.InputError{Err: fmt.Errorf("%s: file %s not found%s; a model is a built-in name (%s) or a HuggingFace config.json (huggingface.co/<org>/<model>/blob/main/config.json)", key, path, trace.Resolved(path), strings.Join(llm.Names(), ", "))}
	}
	return &cluster.InputError{Err: fmt.Errorf("%s: file %s not found%s; %s; download the file there, or point %s at your copy", key, path, trace.Resolved(path), llmSource(path), key)}
}

// llmError keeps an input problem (exit 2) as it is and puts any other
// error of the model under the section's name.
func llmError(err error) error {
	var ie *cluster.InputError
	if errors.As(err, &ie) {
		return err
	}
	return fmt.Errorf("llm: %w", err)
}
