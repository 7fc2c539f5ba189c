package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/llm"
	"github.com/spf13/cobra"
)

func (a *app) llmCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "llm",
		Short: "LLM inference: one serving step's time from a roofline fitted to measured profiles",
	}
	var (
		model, gpuName, slice   string
		tp, prefill, prefillCtx int
		decodeBatch, context    int
		asJSON, eager           bool
		hostLayer, hostSeq      time.Duration
	)
	step := &cobra.Command{
		Use:   "step",
		Short: "Time one iteration of a batch (prefill chunk and decode requests) on a GPU type, TP degree or MIG slice",
		Long: `Time one serving iteration: a prefill chunk of --prefill tokens (after
--prefill-context tokens already cached) and --decode-batch requests each
reading --context tokens of KV, on --tp GPUs of type --gpu (or one MIG
instance, --mig). Prints the step's time, what bounds it (compute, memory,
communication, overhead, host), its parts, the memory floor (weights + KV read over
bandwidth: no step is faster) and the model's KV bytes per token.

--model is a built-in model (` + strings.Join(llm.Names(), ", ") + `)
or the path of a HuggingFace config.json.

Efficiencies are fitted to Vidur's measured per-operator profiles on the
A100 and H100 (hw/llm/fitted.go); other GPUs use the same generation's fit
on their own vendor peaks. They assume a host that keeps ahead of the GPU
(CUDA graphs, an overlapped scheduler). For an engine whose host is slower,
--host-per-layer and --host-per-seq give its launch time per layer (eager
steps; --eager runs decodes without CUDA graphs) and its time per
sequence: the step then takes the longer of the GPU's and the host's time
("bound by host"). bench/stepval/RESULTS.md fits them for an eager engine
on DGX servers (A100: 548us and 390us).`,
		Example: `  conspirator llm step --model llama-3.1-8b --gpu h100-80gb --prefill 2048
  conspirator llm step --model llama-2-70b --gpu a100-80gb --tp 4 --decode-batch 64 --context 1024
  conspirator llm step --model llama-2-7b --gpu a100-80gb --mig 3g.40gb --decode-batch 8 --context 512 --json
  conspirator llm step --model llama-2-70b --gpu a100-80gb --tp 8 --decode-batch 1 --context 576 --eager --host-per-layer 548us --host-per-seq 390us`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			if model == "" {
				return usagef("--model is required: a built-in model (%s) or a config.json path", strings.Join(llm.Names(), ", "))
			}
			if gpuName == "" {
				return usagef("--gpu is required: one of %s", strings.Join(llm.RooflineGPUs(), ", "))
			}
			if tp <= 0 {
				return usagef("--tp %d must be >= 1 (the tensor-parallel degree)", tp)
			}
			var b llm.Batch
			if f.Changed("prefill") {
				if prefill <= 0 {
					return usagef("--prefill %d must be > 0 (tokens in the prefill chunk; leave it out for a decode-only step)", prefill)
				}
				if prefillCtx < 0 {
					return usagef("--prefill-context %d must be >= 0 (tokens already cached before the chunk)", prefillCtx)
				}
				b.Prefill = []llm.Chunk{{Tokens: prefill, ContextBefore: prefillCtx}}
			} else if f.Changed("prefill-context") {
				return usagef("--prefill-context needs --prefill")
			}
			if f.Changed("decode-batch") {
				if decodeBatch <= 0 {
					return usagef("--decode-batch %d must be > 0 (decoding requests; leave it out for a prefill-only step)", decodeBatch)
				}
				if !f.Changed("context") {
					return usagef("--decode-batch needs --context (the KV tokens each decode reads)")
				}
				if context <= 0 {
					return usagef("--context %d must be > 0 (the KV tokens each decode reads)", context)
				}
				b.Decode = make([]int, decodeBatch)
				for i := range b.Decode {
					b.Decode[i] = context
				}
			} else if f.Changed("context") {
				return usagef("--context needs --decode-batch")
			}
			if len(b.Prefill) == 0 && len(b.Decode) == 0 {
				return usagef("nothing to time: give --prefill TOKENS and/or --decode-batch B --context C")
			}
			m, err := loadLLMModel(model)
			if err != nil {
				return err
			}
			if m.MaxContext > 0 {
				if n := prefill + prefillCtx; n > m.MaxContext {
					return usagef("--prefill %d + --prefill-context %d = %d tokens exceed %s's context of %d; give a chunk and context within it", prefill, prefillCtx, n, m.Name, m.MaxContext)
				}
				if context > m.MaxContext {
					return usagef("--context %d exceeds %s's context of %d tokens; give a context within it", context, m.Name, m.MaxContext)
				}
			}
			g, err := gpu.Lookup(gpuName)
			if err != nil {
				return usageError{fmt.Errorf("--gpu: %w", err)}
			}
			p := llm.Placement{GPU: g, TP: tp}
			where := fmt.Sprintf("%d x %s (TP %d)", tp, g.Name, tp)
			if slice != "" {
				prof, err := g.Profile(slice)
				if err != nil {
					return usageError{fmt.Errorf("--mig: %w", err)}
				}
				p.Slice = prof
				where = fmt.Sprintf("%s slice %s", g.Name, prof.Name)
			}
			eff, err := llm.FittedEfficiency(g)
			if err != nil {
				return usageError{fmt.Errorf("--gpu: %w", err)}
			}
			if hostLayer < 0 || hostSeq < 0 {
				return usagef("--host-per-layer %v and --host-per-seq %v must be >= 0 (the host's time per layer launched and per sequence; 0: a host that keeps ahead of the GPU)", hostLayer, hostSeq)
			}
			eff.Host = llm.HostDispatch{PerLayer: hostLayer.Seconds(), PerSequence: hostSeq.Seconds()}
			if eager {
				eff.GraphBatchSizes = nil // no captured sizes: decodes launch layer by layer
			}
			if err := llm.CheckFit(m, p, b); err != nil {
				var fe *llm.FitError
				if errors.As(err, &fe) {
					return usageError{fmt.Errorf("--model %s --gpu %s --tp %d: %w", m.Name, g.Name, tp, err)}
				}
				return usageError{fmt.Errorf("--gpu %s --tp %d%s: %w", g.Name, tp, migFlag(slice), err)}
			}
			st, err := llm.Step(m, p, b, eff)
			if err != nil {
				return usageError{err}
			}
			if asJSON {
				return writeStepJSON(a, m, g, p, b, eff, st)
			}
			writeStepText(a, m, where, b, eff, st, p)
			return nil
		},
	}
	fl := step.Flags()
	fl.StringVar(&model, "model", "", "built-in model name or HuggingFace config.json path")
	fl.StringVar(&gpuName, "gpu", "", "GPU type (catalog name, e.g. a100-80gb, h100-80gb, h200-141gb)")
	fl.IntVar(&tp, "tp", 1, "tensor-parallel degree (GPUs of the group, 1-8)")
	fl.StringVar(&slice, "mig", "", "run on one MIG instance of this profile (e.g. 3g.40gb); needs --tp 1")
	fl.IntVar(&prefill, "prefill", 0, "tokens of one prefill chunk")
	fl.IntVar(&prefillCtx, "prefill-context", 0, "tokens already in the KV cache before the prefill chunk")
	fl.IntVar(&decodeBatch, "decode-batch", 0, "decoding requests in the step")
	fl.IntVar(&context, "context", 0, "context length (KV tokens) of each decoding request")
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON")
	fl.BoolVar(&eager, "eager", false, "run decodes eagerly, without CUDA graphs (as an engine that captures none)")
	fl.DurationVar(&hostLayer, "host-per-layer", 0, "host time to launch one layer's kernels in an eager step (e.g. 548us); the step takes max(GPU, host)")
	fl.DurationVar(&hostSeq, "host-per-seq", 0, "host time per sequence of the batch (input preparation, sampling; e.g. 390us)")
	c.AddCommand(step)
	c.AddCommand(a.llmCapacityCmd())
	return c
}

func migFlag(slice string) string {
	if slice == "" {
		return ""
	}
	return " --mig " + slice
}

// loadLLMModel reads a built-in model or, for a path, a config.json.
func loadLLMModel(arg string) (llm.Model, error) {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		f, err := os.Open(arg)
		if err != nil {
			return llm.Model{}, usagef("--model %s: %v", arg, err)
		}
		defer f.Close()
		m, err := llm.ReadHFConfig(f, arg)
		if err != nil {
			return llm.Model{}, usageError{fmt.Errorf("--model: %w", err)}
		}
		return m, nil
	}
	if strings.HasSuffix(arg, ".json") {
		return llm.Model{}, usagef("--model %s: no such file (give a config.json path or a built-in model: %s)", arg, strings.Join(llm.Names(), ", "))
	}
	m, err := llm.Lookup(arg)
	if err != nil {
		return llm.Model{}, usageError{fmt.Errorf("--model: %w", err)}
	}
	return m, nil
}

func describeBatch(b llm.Batch) string {
	var parts []string
	for _, c := range b.Prefill {
		s := fmt.Sprintf("prefill %d tokens", c.Tokens)
		if c.ContextBefore > 0 {
			s += fmt.Sprintf(" after %d cached", c.ContextBefore)
		}
		parts = append(parts, s)
	}
	if n := len(b.Decode); n > 0 {
		parts = append(parts, fmt.Sprintf("decode %d x %d context", n, b.Decode[0]))
	}
	return strings.Join(parts, ", ")
}

func writeStepText(a *app, m llm.Model, where string, b llm.Batch, eff llm.Efficiency, st llm.StepTime, p llm.Placement) {
	w := a.stdout
	ms := func(s float64) string { return fmt.Sprintf("%.3f ms", s*1e3) }
	fmt.Fprintf(w, "%s on %s, %s\n", m.Name, where, describeBatch(b))
	fmt.Fprintf(w, "step: %s, bound by %s\n", ms(st.Seconds), st.Bound)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  compute\t%s\n  memory\t%s\n  communication\t%s\n  overhead\t%s\n", ms(st.Compute), ms(st.Memory), ms(st.Communication), ms(st.Overhead))
	if eff.Host != (llm.HostDispatch{}) {
		fmt.Fprintf(tw, "  host wait\t%s\t(the host's %s: %.0f us a layer launched, %.0f us a sequence)\n", ms(st.Host), ms(st.HostSeconds), eff.Host.PerLayer*1e6, eff.Host.PerSequence*1e6)
	}
	tw.Flush()
	fmt.Fprintf(w, "memory floor: %s (%.2f GB of weights + %.3f GB of KV read per GPU over its bandwidth)\n", ms(st.MemoryFloor), st.WeightBytesRead/1e9, st.KVBytesRead/1e9)
	if st.CUDAGraph {
		fmt.Fprintf(w, "CUDA graph: batch padded to %d (%d padding)\n", st.Tokens, st.PaddedTokens)
	}
	fmt.Fprintf(w, "KV bytes per token: %d (%d per GPU at TP %d)\n", st.KVBytesPerToken, m.KVBytesPerTokenPerGPU(p.TP), p.TP)
	fmt.Fprintln(w, "operators (per GPU):")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  OP\tCALLS\tMS/CALL\tTOTAL MS\tBOUND")
	for _, o := range st.Ops {
		fmt.Fprintf(tw, "  %s\t%d\t%.4f\t%.3f\t%s\n", o.Name, o.Calls, o.Seconds*1e3, o.Seconds*1e3*float64(o.Calls), o.Bound)
	}
	tw.Flush()
	fmt.Fprintf(w, "efficiencies: %s\n", eff.Source)
}

// stepJSON is the --json form of a step: the text's figures as fields,
// times in milliseconds.
type stepJSON struct {
	Model                 string       `json:"model"`
	GPU                   string       `json:"gpu"`
	TP                    int          `json:"tp"`
	MIG                   string       `json:"mig,omitempty"`
	PrefillTokens         int          `json:"prefill_tokens"`
	PrefillContext        int          `json:"prefill_context"`
	DecodeBatch           int          `json:"decode_batch"`
	Context               int          `json:"context"`
	StepMs                float64      `json:"step_ms"`
	Bound                 string       `json:"bound"`
	ComputeMs             float64      `json:"compute_ms"`
	MemoryMs              float64      `json:"memory_ms"`
	CommunicationMs       float64      `json:"communication_ms"`
	OverheadMs            float64      `json:"overhead_ms"`
	HostWaitMs            float64      `json:"host_wait_ms"`
	HostMs                float64      `json:"host_ms"`
	MemoryFloorMs         float64      `json:"memory_floor_ms"`
	WeightBytesRead       float64      `json:"weight_bytes_read_per_gpu"`
	KVBytesRead           float64      `json:"kv_bytes_read_per_gpu"`
	KVBytesPerToken       int64        `json:"kv_bytes_per_token"`
	KVBytesPerTokenPerGPU int64        `json:"kv_bytes_per_token_per_gpu"`
	WeightBytes           int64        `json:"weight_bytes"`
	CUDAGraph             bool         `json:"cuda_graph"`
	PaddedTokens          int          `json:"padded_tokens"`
	Ops                   []stepOpJSON `json:"ops"`
	EfficiencySource      string       `json:"efficiency_source"`
}

type stepOpJSON struct {
	Name      string  `json:"name"`
	Calls     int     `json:"calls"`
	MsPerCall float64 `json:"ms_per_call"`
	TotalMs   float64 `json:"total_ms"`
	FLOPs     float64 `json:"flops_per_call"`
	Bytes     float64 `json:"bytes_per_call"`
	Bound     string  `json:"bound"`
}

func writeStepJSON(a *app, m llm.Model, g gpu.Spec, p llm.Placement, b llm.Batch, eff llm.Efficiency, st llm.StepTime) error {
	out := stepJSON{Model: m.Name, GPU: g.Name, TP: p.TP, StepMs: st.Seconds * 1e3, Bound: st.Bound,
		ComputeMs: st.Compute * 1e3, MemoryMs: st.Memory * 1e3, CommunicationMs: st.Communication * 1e3, OverheadMs: st.Overhead * 1e3,
		HostWaitMs: st.Host * 1e3, HostMs: st.HostSeconds * 1e3,
		MemoryFloorMs: st.MemoryFloor * 1e3, WeightBytesRead: st.WeightBytesRead, KVBytesRead: st.KVBytesRead,
		KVBytesPerToken: st.KVBytesPerToken, KVBytesPerTokenPerGPU: m.KVBytesPerTokenPerGPU(p.TP), WeightBytes: m.WeightBytes(),
		CUDAGraph: st.CUDAGraph, PaddedTokens: st.PaddedTokens, EfficiencySource: eff.Source, DecodeBatch: len(b.Decode)}
	if p.Slice != nil {
		out.MIG = p.Slice.Name
	}
	if len(b.Prefill) > 0 {
		out.PrefillTokens, out.PrefillContext = b.Prefill[0].Tokens, b.Prefill[0].ContextBefore
	}
	if len(b.Decode) > 0 {
		out.Context = b.Decode[0]
	}
	for _, o := range st.Ops {
		out.Ops = append(out.Ops, stepOpJSON{Name: o.Name, Calls: o.Calls, MsPerCall: o.Seconds * 1e3, TotalMs: o.Seconds * 1e3 * float64(o.Calls), FLOPs: o.FLOPs, Bytes: o.Bytes, Bound: o.Bound})
	}
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
