package llmserve

import (
	"reflect"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/kvpath"
	"github.com/conspirator-sim/conspirator/hw/llm"
	"github.com/conspirator-sim/conspirator/hw/mig"
)

// pdPlan is testPlan split into prefill and decode pools of np and nd
// H100 replicas, gps GPUs to a server, KV over path.
func pdPlan(t testing.TB, np, nd, gps int, path string, layerwise bool) Plan {
	t.Helper()
	p := testPlan(t)
	pp, dp := p, p
	pp.Replicas, dp.Replicas = np, nd
	p.Disagg = &DisaggPlan{Prefill: pp, Decode: dp, Path: path, HW: kvpath.Default(), Layerwise: layerwise, Policy: PolicyLeastLoaded, GPUsPerServer: gps}
	return p
}

// One request, its prefill and decode replicas on two servers, KV sent
// after the prefill over GPUDirect: TTFT is the prompt's step alone; the
// transfer takes kvpath's closed form for the prompt's KV (nothing else
// on the links); the second token comes one decode step after the KV
// lands: TPOT x (output-1) = transfer + the decode steps.
func TestDisaggOneRequest(t *testing.T) {
	p := pdPlan(t, 1, 1, 1, kvpath.GPUDirect, false)
	const prompt, output = 1000, 3
	res, err := Simulate(p, trace(req{at: 0, prompt: prompt, output: output}))
	if err != nil {
		t.Fatal(err)
	}
	rec := res.Requests[0]
	prefill := stepTime(t, p, llm.Batch{Prefill: []llm.Chunk{{Tokens: prompt}}})
	if rec.FirstToken != prefill {
		t.Errorf("first token at %s; want the prefill step alone, %s", rec.FirstToken, prefill)
	}
	m := p.Model
	bytes := float64(int64(prompt) * m.KVBytesPerToken())
	plan, err := kvpath.Default().Plan(kvpath.GPUDirect, kvpath.Transfer{Bytes: bytes, Ops: kvOps(m, 16, prompt)})
	if err != nil {
		t.Fatal(err)
	}
	xfer := plan.Alone(bytes)
	d := res.Disagg
	if d == nil || d.Transfers != 1 || d.Crossed != 1 || d.NVLink != 0 {
		t.Fatalf("disagg stats %+v; want one transfer across servers", d)
	}
	if got := engine.Seconds(d.Time.Mean); absDiff(got, xfer) > 1 {
		t.Errorf("transfer %s; want kvpath's alone time %s", got, xfer)
	}
	d1 := stepTime(t, p, llm.Batch{Decode: []int{prompt + 1}})
	d2 := stepTime(t, p, llm.Batch{Decode: []int{prompt + 2}})
	if want := prefill + xfer + d1 + d2; absDiff(rec.Finish, want) > 2 {
		t.Errorf("finish %s; want prefill %s + transfer %s + two decode steps %s + %s = %s", rec.Finish, prefill, xfer, d1, d2, want)
	}
	if res.GeneratedTokens != output {
		t.Errorf("generated %d tokens; want %d", res.GeneratedTokens, output)
	}
}

func absDiff(a, b engine.Time) engine.Time {
	if a > b {
		return a - b
	}
	return b - a
}

// Two replicas on one server hand KV over NVLink, not the path; the
// transfer is NVLink's closed form.
func TestDisaggSameServerUsesNVLink(t *testing.T) {
	p := pdPlan(t, 1, 1, 8, kvpath.TCP, false)
	res, err := Simulate(p, trace(req{at: 0, prompt: 512, output: 4}))
	if err != nil {
		t.Fatal(err)
	}
	d := res.Disagg
	if d.NVLink != 1 || d.Crossed != 0 {
		t.Fatalf("nvlink %d, crossed %d; want the one transfer on NVLink", d.NVLink, d.Crossed)
	}
	bytes := float64(512 * p.Model.KVBytesPerToken())
	plan, _ := kvpath.Default().Plan(kvpath.NVLink, kvpath.Transfer{Bytes: bytes, Ops: kvOps(p.Model, 16, 512)})
	if got := engine.Seconds(d.Time.Mean); absDiff(got, plan.Alone(bytes)) > 1 {
		t.Errorf("transfer %s; want NVLink's %s", got, plan.Alone(bytes))
	}
}

// Layerwise: the KV streams while the prompt's step runs, so it lands
// sooner after the first token than when sent after it; the TTFT is the
// same.
func TestDisaggLayerwiseOverlaps(t *testing.T) {
	tr := trace(req{at: 0, prompt: 4000, output: 2})
	after, err := Simulate(pdPlan(t, 1, 1, 1, kvpath.GPUDirect, false), tr)
	if err != nil {
		t.Fatal(err)
	}
	lw, err := Simulate(pdPlan(t, 1, 1, 1, kvpath.GPUDirect, true), tr)
	if err != nil {
		t.Fatal(err)
	}
	a, l := after.Requests[0], lw.Requests[0]
	if a.FirstToken != l.FirstToken {
		t.Errorf("TTFT %s layerwise vs %s after; want equal", l.FirstToken, a.FirstToken)
	}
	if !(l.Finish < a.Finish) {
		t.Errorf("finish %s layerwise, %s after; want layerwise earlier", l.Finish, a.Finish)
	}
	// The non-overlapped tail is about the last layer's share of the
	// transfer: at most a tenth of the whole for 32 layers.
	tailGap := l.Finish - l.FirstToken
	fullGap := a.Finish - a.FirstToken
	if tailGap > fullGap/2 {
		t.Errorf("layerwise gap %s vs after %s; want most of the transfer hidden", tailGap, fullGap)
	}
}

// Two transfers from two prefill servers into one decode server at once
// share its NIC and the decode GPU's PCIe: each takes about twice its
// time alone; every request completes, and the run is deterministic.
func TestDisaggSharedLinksAndConservation(t *testing.T) {
	p := pdPlan(t, 2, 1, 1, kvpath.GPUDirect, false)
	tr := trace(req{at: 0, prompt: 2000, output: 5}, req{at: 0, prompt: 2000, output: 5})
	res, err := Simulate(p, tr)
	if err != nil {
		t.Fatal(err)
	}
	bytes := float64(2000 * p.Model.KVBytesPerToken())
	plan, _ := kvpath.Default().Plan(kvpath.GPUDirect, kvpath.Transfer{Bytes: bytes, Ops: kvOps(p.Model, 16, 2000)})
	alone := plan.Alone(bytes).Seconds()
	shared := 2*bytes/plan.Rate() + plan.Latency.Seconds()
	if got := res.Disagg.Time.Mean; got < 0.99*shared || got > 1.01*shared {
		t.Errorf("mean transfer %.4f s; want %.4f s, twice the wire time (alone %.4f s)", got, shared, alone)
	}
	if res.GeneratedTokens != 10 || res.Summary.Completed != 2 {
		t.Errorf("generated %d tokens, %d completed; want 10 and 2", res.GeneratedTokens, res.Summary.Completed)
	}
	again, _ := Simulate(p, tr)
	if !reflect.DeepEqual(res, again) {
		t.Error("two runs differ")
	}
}

// A decode replica short of blocks holds transfers until its running
// requests free theirs: the later transfers wait, none is lost.
func TestDisaggDecodeBlocksBackpressure(t *testing.T) {
	p := pdPlan(t, 2, 1, 1, kvpath.GPUDirect, false)
	p.Disagg.Decode.KVBlocks = 200 // 3,200 tokens: one 2,000-token KV at a time
	var rs []req
	for i := range 4 {
		rs = append(rs, req{at: engine.Time(i) * engine.Millisecond, prompt: 2000, output: 20})
	}
	res, err := Simulate(p, trace(rs...))
	if err != nil {
		t.Fatal(err)
	}
	if res.Summary.Completed != 4 || res.GeneratedTokens != 80 {
		t.Fatalf("%d completed, %d tokens; want 4 and 80", res.Summary.Completed, res.GeneratedTokens)
	}
	if res.Disagg.Wait.P99 <= 0 {
		t.Errorf("wait p99 %v; want transfers held for decode blocks", res.Disagg.Wait.P99)
	}
}

// Three hundred requests of mixed lengths through one prefill and one
// decode replica, KV sent after or layerwise: every request completes
// with all its tokens, and both caches have every block back at the end
// (a request handed off and then lost by the decode replica would keep
// its blocks).
func TestDisaggConservesBlocks(t *testing.T) {
	for _, lw := range []bool{false, true} {
		p := pdPlan(t, 1, 1, 1, kvpath.GPUDirect, lw)
		var rs []req
		want := int64(0)
		for i := range 300 {
			r := req{at: engine.Time(i) * 50 * engine.Millisecond, prompt: 1000 + (i*37)%900, output: 1 + (i*13)%300}
			rs = append(rs, r)
			want += int64(r.output)
		}
		tr := trace(rs...)
		c, err := newCluster(p, tr)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.runPD(tr)
		if err != nil {
			t.Fatal(err)
		}
		if res.Summary.Completed != 300 || res.GeneratedTokens != want {
			t.Errorf("layerwise %v: %d completed, %d tokens; want 300 and %d", lw, res.Summary.Completed, res.GeneratedTokens, want)
		}
		for _, r := range append([]*replica{c.replicas[0]}, c.pd.decode...) {
			if r.kv.available() != r.kv.total || r.kv.held != 0 {
				t.Errorf("layerwise %v: replica %d ends with %d of %d blocks available, %d held; want all back", lw, r.id, r.kv.available(), r.kv.total, r.kv.held)
			}
		}
	}
}

// Prefill and decode on two 3g.40gb slices of one H100 (half of it each:
// both fit one GPU): the KV goes through host memory, never NVLink (MIG
// instances have no peer-to-peer path), and takes kvpath's host-copy
// closed form; a third slice opens the next GPU.
func TestDisaggMIGSlicesCopyThroughHost(t *testing.T) {
	p := pdPlan(t, 1, 2, 8, kvpath.GPUDirect, false)
	prof, err := p.Placement.GPU.Profile("3g.40gb")
	if err != nil {
		t.Fatal(err)
	}
	p.Disagg.Prefill.Placement.Slice = prof
	p.Disagg.Decode.Placement.Slice = prof
	tr := trace(req{at: 0, prompt: 1000, output: 3})
	c, err := newCluster(p, tr)
	if err != nil {
		t.Fatal(err)
	}
	if g := []int{c.replicas[0].gpu, c.pd.decode[0].gpu, c.pd.decode[1].gpu}; g[0] != 0 || g[1] != 0 || g[2] != 1 {
		t.Errorf("slices on GPUs %v; want the prefill and first decode slice on GPU 0, the second on GPU 1", g)
	}
	res, err := c.runPD(tr)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Disagg
	if d.HostCopy != 1 || d.NVLink != 0 || d.Crossed != 0 {
		t.Fatalf("host copies %d, nvlink %d, crossed %d; want the one transfer through host memory", d.HostCopy, d.NVLink, d.Crossed)
	}
	bytes := float64(1000 * p.Model.KVBytesPerToken())
	plan, _ := kvpath.Default().Plan(kvpath.HostCopy, kvpath.Transfer{Bytes: bytes, Ops: kvOps(p.Model, 16, 1000)})
	if got := engine.Seconds(d.Time.Mean); absDiff(got, plan.Alone(bytes)) > 1 {
		t.Errorf("transfer %s; want host-copy's %s", got, plan.Alone(bytes))
	}
}

// MIG slices pack by compute and memory slices apart, as NVIDIA's
// layouts allow: on an H100 a 4g.40gb (4 of 7 compute, 4 of 8 memory)
// and a 3g.40gb (3, 4) share one GPU; a second 3g.40gb opens the next.
func TestGPUCursorPacksSlices(t *testing.T) {
	p := testPlan(t)
	four, _ := p.Placement.GPU.Profile("4g.40gb")
	three, _ := p.Placement.GPU.Profile("3g.40gb")
	var g gpuCursor
	var got []int
	for _, s := range []*mig.Profile{four, three, three} {
		r := &replica{}
		pl := p.Placement
		pl.Slice = s
		g.place(r, pl)
		got = append(got, r.gpu)
	}
	if got[0] != 0 || got[1] != 0 || got[2] != 1 {
		t.Errorf("GPUs %v; want 4g and 3g on GPU 0, the next 3g on GPU 1", got)
	}
}
