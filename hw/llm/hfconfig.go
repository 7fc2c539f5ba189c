package llm

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
)

// ReadHFConfig reads a HuggingFace config.json (architectures llama,
// mistral, mixtral, qwen2 and opt, by its model_type) into a Model called
// name. A required key that is missing, or not a number, is an error that
// names the key and where (name is the file, for messages).
func ReadHFConfig(r io.Reader, name string) (Model, error) {
	var raw map[string]any
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return Model{}, fmt.Errorf("%s: not a JSON object: %v (give a HuggingFace config.json)", name, err)
	}
	mt, _ := raw["model_type"].(string)
	mt = strings.ToLower(mt)
	var missing []string
	num := func(key string, required bool, def int) int {
		v, ok := raw[key]
		if !ok || v == nil {
			if required {
				missing = append(missing, key)
			}
			return def
		}
		n, ok := v.(json.Number)
		if !ok {
			missing = append(missing, key+" (not a number)")
			return def
		}
		i, err := n.Int64()
		if err != nil {
			missing = append(missing, key+" (not an integer)")
			return def
		}
		return int(i)
	}
	boolean := func(key string, def bool) bool {
		if b, ok := raw[key].(bool); ok {
			return b
		}
		return def
	}
	m := Model{Name: strings.ToLower(name), Source: "HuggingFace config.json " + name, DTypeBytes: 2}
	switch mt {
	case "llama", "mistral", "mixtral", "qwen2", "qwen2_moe":
		m.Layers = num("num_hidden_layers", true, 0)
		m.Hidden = num("hidden_size", true, 0)
		m.Heads = num("num_attention_heads", true, 0)
		m.KVHeads = num("num_key_value_heads", false, m.Heads)
		m.Intermediate = num("intermediate_size", true, 0)
		m.Vocab = num("vocab_size", true, 0)
		m.MaxContext = num("max_position_embeddings", false, 0)
		m.Gated = true
		m.TiedEmbeddings = boolean("tie_word_embeddings", false)
		if mt == "mixtral" {
			m.Experts = num("num_local_experts", true, 0)
			m.ExpertsPerToken = num("num_experts_per_tok", true, 0)
		}
		if mt == "qwen2_moe" {
			m.Experts = num("num_experts", true, 0)
			m.ExpertsPerToken = num("num_experts_per_tok", true, 0)
			m.Intermediate = num("moe_intermediate_size", true, 0)
		}
		hd := 0
		if m.Heads > 0 {
			hd = m.Hidden / m.Heads
		}
		m.HeadDim = num("head_dim", false, hd)
	case "opt":
		m.Layers = num("num_hidden_layers", true, 0)
		m.Hidden = num("hidden_size", true, 0)
		m.Heads = num("num_attention_heads", true, 0)
		m.KVHeads = m.Heads
		m.Intermediate = num("ffn_dim", true, 0)
		m.Vocab = num("vocab_size", true, 0)
		m.MaxContext = num("max_position_embeddings", false, 0)
		m.TiedEmbeddings = boolean("tie_word_embeddings", true)
		if m.Heads > 0 {
			m.HeadDim = m.Hidden / m.Heads
		}
	case "":
		return Model{}, fmt.Errorf("%s: key model_type is missing (one of llama, mistral, mixtral, qwen2, qwen2_moe, opt)", name)
	default:
		return Model{}, fmt.Errorf("%s: model_type %q is not supported (use llama, mistral, mixtral, qwen2, qwen2_moe or opt)", name, mt)
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return Model{}, fmt.Errorf("%s: model_type %s needs key %s: missing or malformed (copy it from the model's config.json on huggingface.co)", name, mt, strings.Join(missing, ", "))
	}
	switch dt, _ := raw["torch_dtype"].(string); strings.ToLower(dt) {
	case "", "float16", "bfloat16", "fp16", "bf16":
		m.DTypeBytes = 2
	case "float32", "fp32":
		m.DTypeBytes = 4
	case "float8", "fp8", "int8":
		m.DTypeBytes = 1
	default:
		return Model{}, fmt.Errorf("%s: torch_dtype %q is not supported (use float16, bfloat16, float32 or int8)", name, dt)
	}
	if err := m.Validate(); err != nil {
		return Model{}, fmt.Errorf("%s: %v", name, err)
	}
	return m, nil
}
