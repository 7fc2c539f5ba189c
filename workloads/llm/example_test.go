package llm_test

import (
	"fmt"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/workloads/llm"
)

// Read detects the format; Scale doubles the rate; Window keeps the
// first half second of the scaled trace.
func ExampleRead() {
	azure := "\ufeffTIMESTAMP,ContextTokens,GeneratedTokens\n" +
		"2023-11-16 18:15:46.6805900,374,44\n" +
		"2023-11-16 18:15:46.8805900,1200,10\n" +
		"2023-11-16 18:15:47.6805900,90,300\n"
	tr, err := llm.Read("", strings.NewReader(azure), "conv.csv")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tr.Format, tr.Stats())
	fast, _ := llm.Scale(tr, 2)
	first, _ := llm.Window(fast, 0, 500*engine.Millisecond)
	for _, r := range first.Requests {
		fmt.Println(r.ID, r.Arrival, r.PromptTokens, r.OutputTokens)
	}
	fmt.Println(first.Notes)
	// Output:
	// azure 3 requests over 1s (2/s); prompt tokens mean 554.7 p50 374 p99 1200 max 1200; output tokens mean 118.0 p50 44 p99 300 max 300
	// 0 0s 374 44
	// 1 100ms 1200 10
	// [arrivals count from the first request, 2023-11-16 18:15:46.6805900 UTC (line 2) rate scaled by 2: arrivals divided by 2 window [0s, 500ms): 2 of 3 requests, arrivals re-based to 0s]
}

// A bad row is refused with its file, line, column and the fix.
func ExampleReadAzure_badRow() {
	_, err := llm.ReadAzure(strings.NewReader("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,0,5\n"), "conv.csv")
	fmt.Println(err)
	// Output:
	// conv.csv:2:21: ContextTokens: 0 prompt tokens; a request has at least 1 (remove the row or correct the count)
}

// A synthetic workload from a named stream: the same seed gives the same
// requests.
func ExampleSynthesize() {
	cfg := llm.SyntheticConfig{
		Requests: 3, Rate: 2, Arrival: llm.ArrivalPoisson,
		Prompt: llm.LengthDist{Kind: llm.KindFixed, Mean: 512},
		Output: llm.Empirical([]int{16, 64}),
	}
	a, _ := llm.Synthesize(cfg, engine.NewStream(42, "llm/arrivals"))
	b, _ := llm.Synthesize(cfg, engine.NewStream(42, "llm/arrivals"))
	fmt.Println(len(a.Requests), a.Requests[0].Arrival, a.Requests[2].Arrival == b.Requests[2].Arrival)
	// Output:
	// 3 0s true
}
