// Package llm provides LLM inference requests (an arrival, prompt and
// output token counts and, where the trace has them, prefix-block hashes)
// read from public inference traces or synthesised, with trace statistics,
// rate scaling and time windows.
//
// Formats and their sources:
//
//   - "azure": the Azure LLM inference traces, 2023 (Splitwise, ISCA'24:
//     AzureLLMInferenceTrace_{conv,code}.csv) and the 2024 week (DynamoLLM),
//     from github.com/Azure/AzurePublicDataset, licensed CC BY 4.0. CSV with
//     the header TIMESTAMP,ContextTokens,GeneratedTokens, often after a UTF-8
//     byte-order mark; TIMESTAMP is a UTC date-time such as
//     "2023-11-16 18:15:46.6805900". Arrivals count from the earliest row.
//   - "mooncake": the Mooncake FAST'25 traces (Kimi, Moonshot AI), from
//     github.com/kvcache-ai/Mooncake, FAST25-release/traces, licensed
//     Apache-2.0. JSON lines {"timestamp": ms, "input_length": n,
//     "output_length": n, "hash_ids": [...]}, one hash per 512-token prompt
//     block; arrivals are the timestamps as given.
//   - "burstgpt": BurstGPT (Azure OpenAI GPT service logs), from
//     github.com/HPMLL/BurstGPT, licensed CC BY 4.0. CSV with the header
//     Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type;
//     Timestamp in seconds; rows with 0 response tokens are failed requests
//     and are left out (counted in Trace.Notes).
//   - "synthetic": Synthesize, Poisson or gamma arrivals with lognormal,
//     empirical or fixed lengths.
//
// The package does no file I/O apart from ReadFile: readers take an
// io.Reader and a name for messages, and random draws come from an
// injected source (an *engine.Stream or a *rand.Rand), so a seed gives the
// same trace.
package llm
