package llm

import (
	"fmt"
	"sort"
	"strings"

	"github.com/conspirator-sim/conspirator/internal/suggest"
)

// Model is a decoder-only transformer's architecture: what its step time
// and memory follow from.
type Model struct {
	Name   string // as users type it, lower case: "llama-3.1-8b"
	Source string // where the figures come from

	Layers       int  // decoder blocks
	Hidden       int  // model (embedding) width
	Heads        int  // query heads
	KVHeads      int  // key/value heads (== Heads without GQA)
	HeadDim      int  // width of one head
	Intermediate int  // FFN width (per expert for MoE)
	Gated        bool // gated FFN (SwiGLU: gate and up projections)
	Vocab        int
	DTypeBytes   int // bytes per weight and KV value: 2 for FP16/BF16

	// Experts is the FFN experts per layer (0 or 1: dense);
	// ExpertsPerToken how many a token is routed to.
	Experts, ExpertsPerToken int

	MaxContext     int  // max_position_embeddings
	TiedEmbeddings bool // the LM head reuses the embedding matrix
}

// MoE says whether the model routes tokens to experts.
func (m Model) MoE() bool { return m.Experts > 1 }

// KVBytesPerToken is the key and value cache one token holds over all
// layers: 2 x layers x KV heads x head size x bytes per value (GQA counted:
// Llama-2-70B holds 320 KiB, not the 2.5 MiB of 64 heads).
func (m Model) KVBytesPerToken() int64 {
	return 2 * int64(m.Layers) * int64(m.KVHeads) * int64(m.HeadDim) * int64(m.DTypeBytes)
}

// attnParams is one layer's attention weights: Q, K, V and O projections.
func (m Model) attnParams() int64 {
	q := int64(m.Heads) * int64(m.HeadDim)
	kv := int64(m.KVHeads) * int64(m.HeadDim)
	h := int64(m.Hidden)
	return h*q + 2*h*kv + q*h
}

// expertParams is one FFN (one expert's) weights.
func (m Model) expertParams() int64 {
	n := int64(2)
	if m.Gated {
		n = 3
	}
	return n * int64(m.Hidden) * int64(m.Intermediate)
}

func (m Model) experts() int {
	if m.Experts > 1 {
		return m.Experts
	}
	return 1
}

// layerParams is one decoder block's weights: attention, FFN (all
// experts and the router) and the two norms.
func (m Model) layerParams() int64 {
	p := m.attnParams() + int64(m.experts())*m.expertParams() + 2*int64(m.Hidden)
	if m.MoE() {
		p += int64(m.Hidden) * int64(m.Experts)
	}
	return p
}

// Params is the weight count: embedding, blocks, final norm and the LM head
// unless tied. Biases and OPT's learned positions are left out (< 0.1%).
func (m Model) Params() int64 {
	emb := int64(m.Vocab) * int64(m.Hidden)
	p := emb + int64(m.Layers)*m.layerParams() + int64(m.Hidden)
	if !m.TiedEmbeddings {
		p += emb
	}
	return p
}

// WeightBytes is the weights' size at the model's dtype.
func (m Model) WeightBytes() int64 { return m.Params() * int64(m.DTypeBytes) }

// Validate says what is missing or inconsistent, naming the field.
func (m Model) Validate() error {
	var bad []string
	pos := func(name string, v int) {
		if v <= 0 {
			bad = append(bad, fmt.Sprintf("%s must be > 0 (got %d)", name, v))
		}
	}
	pos("layers", m.Layers)
	pos("hidden", m.Hidden)
	pos("heads", m.Heads)
	pos("kv heads", m.KVHeads)
	pos("head dim", m.HeadDim)
	pos("intermediate", m.Intermediate)
	pos("vocab", m.Vocab)
	pos("dtype bytes", m.DTypeBytes)
	if m.Heads > 0 && m.KVHeads > 0 && m.Heads%m.KVHeads != 0 {
		bad = append(bad, fmt.Sprintf("heads %d is not a multiple of kv heads %d", m.Heads, m.KVHeads))
	}
	if m.Experts > 1 && (m.ExpertsPerToken < 1 || m.ExpertsPerToken > m.Experts) {
		bad = append(bad, fmt.Sprintf("experts per token %d must be in [1, %d]", m.ExpertsPerToken, m.Experts))
	}
	if len(bad) > 0 {
		return fmt.Errorf("model %s: %s", m.Name, strings.Join(bad, "; "))
	}
	return nil
}

// llama builds a Llama-family entry (gated SiLU FFN, head dim hidden/heads).
func llama(name, src string, layers, hidden, heads, kv, inter, vocab, maxCtx int) Model {
	return Model{Name: name, Source: src, Layers: layers, Hidden: hidden, Heads: heads, KVHeads: kv,
		HeadDim: hidden / heads, Intermediate: inter, Gated: true, Vocab: vocab, DTypeBytes: 2, MaxContext: maxCtx}
}

// catalog holds the built-in models, each from its HuggingFace
// config.json (V: the publisher's own file on huggingface.co).
var catalog = func() map[string]Model {
	ms := []Model{
		llama("llama-2-7b", "V: meta-llama/Llama-2-7b-hf config.json", 32, 4096, 32, 32, 11008, 32000, 4096),
		llama("llama-2-13b", "V: meta-llama/Llama-2-13b-hf config.json", 40, 5120, 40, 40, 13824, 32000, 4096),
		llama("llama-2-70b", "V: meta-llama/Llama-2-70b-hf config.json", 80, 8192, 64, 8, 28672, 32000, 4096),
		llama("llama-3-8b", "V: meta-llama/Meta-Llama-3-8B config.json", 32, 4096, 32, 8, 14336, 128256, 8192),
		llama("llama-3-70b", "V: meta-llama/Meta-Llama-3-70B config.json", 80, 8192, 64, 8, 28672, 128256, 8192),
		llama("llama-3.1-8b", "V: meta-llama/Llama-3.1-8B config.json", 32, 4096, 32, 8, 14336, 128256, 131072),
		llama("llama-3.1-70b", "V: meta-llama/Llama-3.1-70B config.json", 80, 8192, 64, 8, 28672, 128256, 131072),
		llama("qwen2-7b", "V: Qwen/Qwen2-7B config.json (QKV biases left out)", 28, 3584, 28, 4, 18944, 152064, 131072),
		llama("qwen2-72b", "V: Qwen/Qwen2-72B config.json (QKV biases left out)", 80, 8192, 64, 8, 29568, 152064, 131072),
		func() Model {
			m := llama("mixtral-8x7b", "V: mistralai/Mixtral-8x7B-v0.1 config.json", 32, 4096, 32, 8, 14336, 32000, 32768)
			m.Experts, m.ExpertsPerToken = 8, 2
			return m
		}(),
		{Name: "opt-13b", Source: "V: facebook/opt-13b config.json (ReLU FFN, tied embeddings; biases and learned positions left out)",
			Layers: 40, Hidden: 5120, Heads: 40, KVHeads: 40, HeadDim: 128, Intermediate: 20480, Vocab: 50272,
			DTypeBytes: 2, MaxContext: 2048, TiedEmbeddings: true},
	}
	out := make(map[string]Model, len(ms))
	for _, m := range ms {
		out[m.Name] = m
	}
	return out
}()

// modelAliases maps HuggingFace repository names and common spellings to
// catalog names.
var modelAliases = map[string]string{
	"meta-llama/llama-2-7b-hf":    "llama-2-7b",
	"meta-llama/llama-2-13b-hf":   "llama-2-13b",
	"meta-llama/llama-2-70b-hf":   "llama-2-70b",
	"meta-llama/meta-llama-3-8b":  "llama-3-8b",
	"meta-llama/meta-llama-3-70b": "llama-3-70b",
	"meta-llama/llama-3.1-8b":     "llama-3.1-8b",
	"meta-llama/llama-3.1-70b":    "llama-3.1-70b",
	"mixtral-8x7b-v0.1":           "mixtral-8x7b",
	"facebook/opt-13b":            "opt-13b",
}

// Names returns the catalog's model names, sorted.
func Names() []string {
	out := make([]string, 0, len(catalog))
	for n := range catalog {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the catalog model called name (case-insensitive; the
// HuggingFace repository name accepted). An unknown name gives an error
// listing the catalog and suggesting the nearest name.
func Lookup(name string) (Model, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	if a, ok := modelAliases[key]; ok {
		key = a
	}
	if m, ok := catalog[key]; ok {
		return m, nil
	}
	hint := ""
	if near := suggest.Nearest(key, Names()); near != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", near)
	}
	return Model{}, fmt.Errorf("unknown model %q%s; built-in models: %s (or give a HuggingFace config.json path)", name, hint, strings.Join(Names(), ", "))
}
