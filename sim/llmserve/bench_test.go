package llmserve

import (
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/kvpath"
	wllm "github.com/conspirator-sim/conspirator/workloads/llm"
)

// BenchmarkAzureConv replays a synthetic trace of llm/azure-conv's size
// and length mix (19,366 requests in one hour, lognormal fits of its
// prompt and output lengths) on Llama-3.1-8B, one H100, vLLM v1
// defaults. The bound: under 2 s a run on one core.
func BenchmarkAzureConv(b *testing.B) {
	p := testPlan(b)
	tr := synthetic(b, 19366, 19366.0/3600, 1)
	res := simulateN(b, p, tr)
	b.ReportMetric(float64(res.Steps), "steps")
}

// BenchmarkAzureConvDisagg is BenchmarkAzureConv served disaggregated:
// one prefill and one decode H100 on two servers, each request's KV over
// GPUDirect RDMA layer by layer, every step an engine event and the
// transfers sharing links max-min. Issue 55's bound: under 5 s a run on
// one core.
func BenchmarkAzureConvDisagg(b *testing.B) {
	p := pdPlan(b, 1, 1, 1, kvpath.GPUDirect, true)
	tr := synthetic(b, 19366, 19366.0/3600, 1)
	res := simulateN(b, p, tr)
	b.ReportMetric(float64(res.Disagg.Transfers), "transfers")
}

// BenchmarkMillionOn256 is 1 M requests on 256 replicas, each replica
// loaded as azure-conv loads its one (5.38 requests/s), least outstanding
// tokens routing, samples every second. The bound: under 60 s and
// 2 GiB.
func BenchmarkMillionOn256(b *testing.B) {
	if testing.Short() {
		b.Skip("1 M requests")
	}
	p := testPlan(b)
	p.Replicas, p.Router, p.SampleEvery = 256, RouterLeastTokens, engine.Second
	tr := synthetic(b, 1_000_000, 256*19366.0/3600, 2)
	res := simulateN(b, p, tr)
	b.ReportMetric(float64(res.Steps), "steps")
}

// simulateN runs Simulate(p, tr) b.N times, reporting allocations and the
// time per request, and returns the last result.
func simulateN(b *testing.B, p Plan, tr wllm.Trace) *Result {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	var res *Result
	for range b.N {
		var err error
		if res, err = Simulate(p, tr); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(tr.Requests)), "ns/request")
	return res
}
