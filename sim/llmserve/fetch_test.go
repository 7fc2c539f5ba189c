package llmserve

import (
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/kvpath"
	"github.com/conspirator-sim/conspirator/hw/llm"
)

// fetchPlan is testPlan on two replicas (round-robin) with prefix
// caching and a KV store in remote DRAM reached over GPUDirect RDMA.
func fetchPlan(t *testing.T, always bool) Plan {
	t.Helper()
	p := testPlan(t)
	p.Replicas, p.PrefixCaching = 2, true
	p.Fetch = &PrefixFetch{Always: always, path: kvpath.GPUDirect, hw: kvpath.Default()}
	return p
}

// Two requests share a 2,048-token prefix (four 512-token trace blocks)
// and land on different replicas: the second's replica has none of it
// cached, but the store holds the first's blocks, so it waits for a fetch
// of those 2,048 tokens (256 MiB of Llama-3.1-8B KV: kvpath's GPUDirect
// closed form) and then prefills only its last 952 tokens: TTFT = fetch
// + that step. The fetched tokens count among the cached (served without
// recompute). With policy cheaper over a path a hundred times slower the
// fetch takes longer than recomputing the whole prompt, which it does.
func TestPrefixFetch(t *testing.T) {
	h := []uint64{1, 2, 3, 4, 5, 6}
	h2 := []uint64{1, 2, 3, 4, 9, 10}
	tr := trace(req{at: 0, prompt: 3000, output: 2, hashes: h}, req{at: 10 * engine.Second, prompt: 3000, output: 2, hashes: h2})
	p := fetchPlan(t, true)
	res, err := Simulate(p, tr)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Requests[1]
	if r.Replica != 1 || r.FetchedTokens != 2048 || r.CachedTokens != 2048 {
		t.Fatalf("second request: replica %d, fetched %d, cached %d; want replica 1, 2048 fetched (its computed prefix)", r.Replica, r.FetchedTokens, r.CachedTokens)
	}
	bytes := float64(2048 * p.Model.KVBytesPerToken())
	fetch := p.Fetch.time(bytes, kvOps(p.Model, 16, 2048), 1)
	step := stepTime(t, p, llm.Batch{Prefill: []llm.Chunk{{Tokens: 3000 - 2048, ContextBefore: 2048}}})
	if got, want := r.TTFT(), fetch+step; got != want {
		t.Errorf("TTFT %s; want fetch %s + the suffix's step %s = %s", got, fetch, step, want)
	}
	if res.Summary.FetchedShare <= 0 {
		t.Errorf("fetched share %v; want > 0", res.Summary.FetchedShare)
	}
	// Cheaper: the same fetch over a slow path (a hundredth of the NIC)
	// takes longer than recomputing, so the request recomputes.
	slow := fetchPlan(t, false)
	slow.Fetch.hw.NICBytesPerSec /= 100
	res, err = Simulate(slow, tr)
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Requests[1]; r.FetchedTokens != 0 || r.TTFT() != stepTime(t, slow, llm.Batch{Prefill: []llm.Chunk{{Tokens: 3000}}}) {
		t.Errorf("slow path, cheaper: fetched %d, TTFT %s; want a recompute of the whole prompt", r.FetchedTokens, r.TTFT())
	}
}

// The store holds a prompt's blocks once its prefill has computed them:
// a request arriving while the first is still prefilling (1 ms later; a
// 3,000-token prefill takes tens of ms) finds nothing to fetch.
func TestPrefixFetchWaitsForTheKV(t *testing.T) {
	h := []uint64{1, 2, 3, 4, 5, 6}
	tr := trace(req{at: 0, prompt: 3000, output: 2, hashes: h}, req{at: engine.Millisecond, prompt: 3000, output: 2, hashes: h})
	res, err := Simulate(fetchPlan(t, true), tr)
	if err != nil {
		t.Fatal(err)
	}
	if r := res.Requests[1]; r.Replica != 1 || r.FetchedTokens != 0 {
		t.Errorf("second request on replica %d fetched %d tokens; want none: the first's KV did not exist yet", r.Replica, r.FetchedTokens)
	}
}

// Concurrent fetches share their server's links. The first request
// computes a 2,048-token prefix on replica 0; two more arrive together,
// round-robin to replicas 1 and 2, and each fetches those 2,048 tokens.
// On one server (8 GPUs) the two flows cross its one NIC, the bottleneck
// of GPUDirect here, and finish together after twice the bytes' time:
// each fetch takes Alone(2 x bytes) with one transfer's posting (Control)
// and latency. On two servers (1 GPU each) neither slows the other: each
// takes Alone(bytes), as TestPrefixFetch's lone fetch.
func TestPrefixFetchSharesLinks(t *testing.T) {
	h := []uint64{1, 2, 3, 4, 5, 6}
	h2 := []uint64{1, 2, 3, 4, 9, 10}
	h3 := []uint64{1, 2, 3, 4, 11, 12}
	tr := trace(req{at: 0, prompt: 3000, output: 2, hashes: h},
		req{at: 10 * engine.Second, prompt: 3000, output: 2, hashes: h2}, req{at: 10 * engine.Second, prompt: 3000, output: 2, hashes: h3})
	bytes := float64(2048 * testPlan(t).Model.KVBytesPerToken())
	for _, c := range []struct {
		gpusPerServer int
		shared        bool
	}{{8, true}, {1, false}} {
		p := fetchPlan(t, true)
		p.Replicas = 3
		p.Fetch.gpusPerServer = c.gpusPerServer
		plan, err := p.Fetch.hw.Plan(kvpath.GPUDirect, kvpath.Transfer{Bytes: bytes, Ops: kvOps(p.Model, 16, 2048)})
		if err != nil {
			t.Fatal(err)
		}
		nic := 0.0
		for _, hop := range plan.Hops {
			if hop.Resource == kvpath.NICRx {
				nic = hop.BytesPerSec
			}
		}
		if nic != plan.Rate() || plan.CapBytesPerSec > 0 && plan.CapBytesPerSec < nic/2 {
			t.Fatalf("precondition: the NIC (%g B/s) should bound GPUDirect alone (rate %g, cap %g) and its half stay under the cap", nic, plan.Rate(), plan.CapBytesPerSec)
		}
		res, err := Simulate(p, tr)
		if err != nil {
			t.Fatal(err)
		}
		step := stepTime(t, p, llm.Batch{Prefill: []llm.Chunk{{Tokens: 3000 - 2048, ContextBefore: 2048}}})
		want := plan.Alone(bytes)
		if c.shared {
			want = plan.Alone(2 * bytes)
		}
		for _, i := range []int{1, 2} {
			r := res.Requests[i]
			if r.FetchedTokens != 2048 || r.TTFT() != want+step {
				t.Errorf("%d GPUs a server, request %d on replica %d: fetched %d, TTFT %s; want 2048 fetched, fetch %s + step %s", c.gpusPerServer, i, r.Replica, r.FetchedTokens, r.TTFT(), want, step)
			}
		}
	}
}

// A compressed store, decompressed on the GPU: the flow carries a
// quarter of the bytes over the same resources, and the GPU's
// decompression (the uncompressed bytes at gpu_rate) runs before the
// step that prefills the request, so TTFT = the compressed fetch alone +
// the decompression + the suffix's step. On the SmartNIC (path
// conspirator) decompression is a stage of the flow: the Arm cores put
// out 16 x arm_rate, i.e. 16 x arm_rate / 4 of compressed bytes; the
// SmartNIC's DRAM carries 2 + 2 x 4 bytes per flow byte; its DMA engine and
// the GPU's PCIe a quarter of their rate in flow bytes; no GPU time.
func TestPrefixFetchCompressed(t *testing.T) {
	h := []uint64{1, 2, 3, 4, 5, 6}
	h2 := []uint64{1, 2, 3, 4, 9, 10}
	tr := trace(req{at: 0, prompt: 3000, output: 2, hashes: h}, req{at: 10 * engine.Second, prompt: 3000, output: 2, hashes: h2})
	p := fetchPlan(t, true)
	p.Fetch.ratio, p.Fetch.gpuRate, p.Fetch.armRate = 4, 50e9, 1e9
	bytes := float64(2048 * p.Model.KVBytesPerToken())
	ops := kvOps(p.Model, 16, 2048)
	plan, err := p.Fetch.hw.Plan(kvpath.GPUDirect, kvpath.Transfer{Bytes: bytes / 4, Ops: ops})
	if err != nil {
		t.Fatal(err)
	}
	decomp := engine.Seconds(bytes / 50e9)
	if got, want := p.Fetch.time(bytes, ops, 1), plan.Alone(bytes/4)+decomp; got != want {
		t.Fatalf("compressed fetch alone %s, want the compressed transfer %s + decompression %s", got, plan.Alone(bytes/4), decomp)
	}
	res, err := Simulate(p, tr)
	if err != nil {
		t.Fatal(err)
	}
	step := stepTime(t, p, llm.Batch{Prefill: []llm.Chunk{{Tokens: 3000 - 2048, ContextBefore: 2048}}})
	if r := res.Requests[1]; r.FetchedTokens != 2048 || r.TTFT() != plan.Alone(bytes/4)+decomp+step {
		t.Errorf("GPU decompression: fetched %d, TTFT %s; want fetch %s + decompression %s + step %s", r.FetchedTokens, r.TTFT(), plan.Alone(bytes/4), decomp, step)
	}

	nic := fetchPlan(t, true)
	nic.Fetch.path = kvpath.Conspirator
	nic.Fetch.ratio, nic.Fetch.gpuRate, nic.Fetch.armRate, nic.Fetch.onNIC = 4, 50e9, 1e9, true
	rt, err := nic.Fetch.route(bytes, ops, 1)
	if err != nil {
		t.Fatal(err)
	}
	hwr := nic.Fetch.hw
	raw, err := hwr.Plan(kvpath.Conspirator, kvpath.Transfer{Bytes: bytes / 4, Ops: ops})
	if err != nil {
		t.Fatal(err)
	}
	want := map[kvpath.Resource]float64{armDecompress: 16 * 1e9 / 4, kvpath.SmartNICDRAM: hwr.SmartNICDRAMBytesPerSec / 10}
	for _, hop := range raw.Hops {
		if hop.Side == kvpath.Dst && (hop.Resource == kvpath.SmartNICDMA || hop.Resource == kvpath.PCIeH2D) {
			want[hop.Resource] = hop.BytesPerSec / 4
		}
	}
	seen := 0
	for _, hop := range rt.hops {
		if w, ok := want[hop.Resource]; ok && hop.Side == kvpath.Dst {
			seen++
			if hop.BytesPerSec != w {
				t.Errorf("SmartNIC decompression: %s at %g B/s of flow, want %g", hop.Resource, hop.BytesPerSec, w)
			}
		}
	}
	if seen != len(want) || rt.gpu != 0 || rt.wire != bytes/4 {
		t.Errorf("SmartNIC decompression: %d of %d hops adjusted, GPU time %s, wire %g bytes; want all, none, %g", seen, len(want), rt.gpu, rt.wire, bytes/4)
	}
}

// A fetch into a TP-4 replica lands its four shards in parallel, each
// over its own GPU's PCIe: per-GPU resources and the flow's cap count
// four times, server resources (the NIC) once, and GPU decompression is
// a quarter of the time, each GPU decompressing its shard.
func TestPrefixFetchTensorParallel(t *testing.T) {
	p := fetchPlan(t, true)
	p.Fetch.ratio, p.Fetch.gpuRate = 4, 50e9
	bytes := float64(2048 * p.Model.KVBytesPerToken())
	ops := kvOps(p.Model, 16, 2048)
	one, err := p.Fetch.route(bytes, ops, 1)
	if err != nil {
		t.Fatal(err)
	}
	four, err := p.Fetch.route(bytes, ops, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(one.hops) != len(four.hops) || four.cap != 4*one.cap || four.gpu != one.gpu/4 {
		t.Fatalf("TP 4: %d hops, cap %g, GPU %s; want %d hops, cap %g, GPU %s", len(four.hops), four.cap, four.gpu, len(one.hops), 4*one.cap, one.gpu/4)
	}
	for i, h := range four.hops {
		want := one.hops[i].BytesPerSec
		if h.Resource.PerGPU() {
			want *= 4
		}
		if h.BytesPerSec != want {
			t.Errorf("TP 4: %s at %g B/s, want %g", h.Resource, h.BytesPerSec, want)
		}
	}
}
