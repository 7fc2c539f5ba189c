package llmserve

import (
	"container/heap"
	"errors"
	"fmt"
	"slices"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/kvpath"
	"github.com/conspirator-sim/conspirator/hw/llm"
	"github.com/conspirator-sim/conspirator/hw/units"
)

// Prefix-fetch stores and policies.
const (
	// StoreRemoteDRAM is a KV store in other servers' host memory
	// (Mooncake's pool): a fetch crosses the network over the path.
	StoreRemoteDRAM = "remote-dram"
	// StoreSSD is the server's own NVMe: a fetch reads it and copies the
	// blocks into the GPU.
	StoreSSD = "ssd"

	// FetchAlways fetches every block the store holds beyond the local
	// cache.
	FetchAlways = "always"
	// FetchCheaper fetches only where the fetch alone takes less time
	// than recomputing those tokens alone would.
	FetchCheaper = "cheaper"
)

// PrefixFetchConfig is a KV store behind the replicas' prefix caches: a
// prompt's leading blocks that an earlier request's prompt held (by the
// trace's block hashes) but the replica's own cache no longer does come
// from the store instead of being recomputed (LMCache, Mooncake Store).
type PrefixFetchConfig struct {
	Enabled bool            `yaml:"enabled" doc:"fetch missing prefix blocks from a KV store holding every prompt block seen before (needs prefix_caching and a trace with block hashes, as Mooncake's); the request waits for its fetch before it is scheduled" default:"false"`
	Store   string          `yaml:"store" doc:"where the store is: remote-dram (other servers' host memory, over path) or ssd (the server's NVMe, at ssd_bandwidth, then over PCIe)" default:"remote-dram"`
	Path    string          `yaml:"path" doc:"remote-dram: the data path of a fetch (tcp, gpudirect, host-rdma, conspirator), on the NIC of llm.disagg's keys (nic, nics, line_rate, gpudirect, smartnic) and llm.host_load" default:"gpudirect"`
	Policy  string          `yaml:"policy" doc:"always (fetch whatever the store holds) or cheaper (fetch only where the fetch alone is faster than recomputing those tokens alone)" default:"cheaper"`
	SSDRate units.Bandwidth `yaml:"ssd_bandwidth" doc:"store ssd: the NVMe's read bandwidth" default:"7GB/s" source:"estimate: a PCIe 4.0 x4 NVMe's sequential read, about 7 GB/s (vendor datasheets of that class); plausible 3.5 to 14 GB/s"`
}

func (f PrefixFetchConfig) validate(add func(key, format string, a ...any), caching bool) {
	if !f.Enabled {
		return
	}
	if f.Store != StoreRemoteDRAM && f.Store != StoreSSD {
		add("prefix_fetch.store", "%q; use %s or %s", f.Store, StoreRemoteDRAM, StoreSSD)
	}
	if !slices.Contains([]string{kvpath.TCP, kvpath.GPUDirect, kvpath.HostRDMA, kvpath.Conspirator}, f.Path) {
		add("prefix_fetch.path", "%q; use tcp, gpudirect, host-rdma or conspirator", f.Path)
	}
	if f.Policy != FetchAlways && f.Policy != FetchCheaper {
		add("prefix_fetch.policy", "%q; use %s or %s", f.Policy, FetchAlways, FetchCheaper)
	}
	if v := float64(f.SSDRate); !(v > 0) || v > 1e12 {
		add("prefix_fetch.ssd_bandwidth", "%v; want a rate above 0, e.g. 7GB/s", f.SSDRate)
	}
	if !caching {
		add("prefix_fetch.enabled", "true with prefix_caching false: fetched blocks land in the prefix cache; set prefix_caching: true")
	}
}

// PrefixFetch is a resolved store: what times a fetch alone.
type PrefixFetch struct {
	Always bool
	path   string
	hw     kvpath.Hardware
	// ssd is the NVMe's rate (0: remote DRAM over path).
	ssd float64
}

// time is a fetch of bytes (ops RDMA operations) alone: remote DRAM by
// the path's closed form for that transfer (its posting and staging
// grow with it; the source side's PCIe hop stands for the pool's DRAM),
// the SSD at the slower of its rate and the GPU's PCIe plus a read's
// latency.
func (f *PrefixFetch) time(bytes float64, ops int) engine.Time {
	if f.ssd > 0 {
		return engine.Seconds(bytes/min(f.ssd, f.hw.PCIe.PinnedH2DBytesPerSec)) + 100*engine.Microsecond
	}
	p, err := f.hw.Plan(f.path, kvpath.Transfer{Bytes: bytes, Ops: ops})
	if err != nil {
		return engine.MaxTime // validated when resolved: unreachable
	}
	return p.Alone(bytes)
}

func (c Config) prefixFetch(gpuPCIe float64) (*PrefixFetch, error) {
	f := c.PrefixFetch
	if !f.Enabled {
		return nil, nil
	}
	d := c.Disagg
	d.Path = f.Path // the fetch's path, not the (unused) disaggregation's
	h, err := d.hardware(gpuPCIe, float64(c.HostLoad))
	if f.Store == StoreSSD {
		return &PrefixFetch{Always: f.Policy == FetchAlways, hw: h, ssd: float64(f.SSDRate)}, nil
	}
	if err != nil {
		var fe *units.FieldError
		if errors.As(err, &fe) && fe.Field == "disagg.path" {
			return nil, units.Invalid("prefix_fetch.path", "%s", fe.Msg)
		}
		return nil, err
	}
	return &PrefixFetch{Always: f.Policy == FetchAlways, path: f.Path, hw: h}, nil
}

// fetching is a request waiting for its fetch, until at.
type fetching struct {
	at engine.Time
	q  *request
	r  *replica
}

type fetchHeap []fetching

func (h fetchHeap) Len() int { return len(h) }
func (h fetchHeap) Less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].q.seq < h[j].q.seq
}
func (h fetchHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *fetchHeap) Push(x any)   { *h = append(*h, x.(fetching)) }
func (h *fetchHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// planFetch decides q's fetch on replica r at now: the leading prompt
// blocks the store holds (every trace block hash seen in an earlier
// prompt) beyond those r's cache holds, fetched if the policy says so.
// It returns when q is ready (now where nothing is fetched). A prompt's
// blocks enter the store when its prefill has computed them (finishStep).
func (c *cluster) planFetch(q *request, r *replica, now engine.Time) engine.Time {
	f := c.p.Fetch
	bs := c.p.BlockSize
	// The store's prefix of q, in trace blocks.
	stored := 0
	for _, h := range q.hashes {
		if !c.store[h] {
			break
		}
		stored++
	}
	limit := min(q.keyBlocks, (q.prompt-1)/bs)
	fetchable := min(stored*c.perTrace, limit)
	local := r.cachedPrefix(q)
	if fetchable <= local {
		return now
	}
	tokens := (fetchable - local) * bs
	m := r.pl.p.Model
	bytes := float64(int64(tokens) * m.KVBytesPerToken())
	ft := f.time(bytes, kvOps(m, bs, tokens))
	if !f.Always {
		st, err := llm.Step(m, r.pl.roomy, llm.Batch{Prefill: []llm.Chunk{{Tokens: tokens, ContextBefore: local * bs}}}, r.pl.p.Eff)
		if err == nil && engine.Seconds(st.Seconds) <= ft {
			c.fetchSkipped++
			return now
		}
	}
	q.fetched = fetchable * bs
	q.rec.FetchedTokens = tokens
	c.fetches++
	c.fetchBytes += bytes
	c.fetchTime += ft.Seconds()
	return now + ft
}

// startFetch queues q's wait for its fetch.
func (c *cluster) startFetch(q *request, r *replica, at engine.Time) {
	heap.Push(&c.fetching, fetching{at: at, q: q, r: r})
}

// nextFetch is the earliest fetch end (ok false: none).
func (c *cluster) nextFetch() (engine.Time, bool) {
	if len(c.fetching) == 0 {
		return 0, false
	}
	return c.fetching[0].at, true
}

func fetchNote(n, skipped int, bytes, secs float64) string {
	return fmt.Sprintf("prefix fetch: %d requests fetched %.1f GB of KV from the store (%.1f ms each on average, alone: concurrent fetches do not share links here); %d fetches were slower than recomputing and skipped", n, bytes/1e9, 1e3*secs/float64(max(n, 1)), skipped)
}
