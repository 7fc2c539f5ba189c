// Package llm provides transformer models (a built-in catalog and
// HuggingFace config.json files) and a roofline model of one serving
// iteration's time on a GPU, a tensor-parallel group or a MIG slice.
package llm
