package llmserve

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/resource"
	"github.com/conspirator-sim/conspirator/hw"
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

	Compression FetchCompression `yaml:"compression" doc:"the store keeps KV compressed (CacheGen, ShadowServe): a fetch moves ratio times fewer bytes and is decompressed on the GPU (kernels that stretch the replica's next step) or on the SmartNIC's Arm cores (path conspirator: a stage of the transfer, bounded by the cores and the SmartNIC's DRAM)"`
}

// Where a compressed fetch is decompressed.
const (
	DecompressGPU      = "gpu"
	DecompressSmartNIC = "smartnic"
)

// FetchCompression is KV kept compressed in the store.
type FetchCompression struct {
	Ratio      float64         `yaml:"ratio" doc:"uncompressed over compressed bytes; 1: stored as is" default:"1" source:"published: CacheGen (SIGCOMM'24) encodes KV caches 3.5-4.3x smaller than 8-bit quantised ones; 1 leaves compression off" plausible:"1,4.3"`
	Decompress string          `yaml:"decompress" doc:"gpu (decompression kernels on the replica's GPU, run before its next step: they delay every request in it) or smartnic (the SmartNIC's Arm cores decompress between its DRAM and its DMA engine; needs path conspirator)" default:"gpu"`
	GPURate    units.Bandwidth `yaml:"gpu_rate" doc:"decompress gpu: the GPU's decompression rate, in uncompressed bytes" default:"100GB/s" source:"estimate: nvCOMP-class GPU decompressors run at hundreds of GB/s on an A100 for LZ4-like codecs and a few tens for entropy coders such as CacheGen's arithmetic coding; plausible 30 to 300 GB/s" plausible:"30GB/s,300GB/s"`
	ArmRate    units.Bandwidth `yaml:"arm_rate" doc:"decompress smartnic: one Arm core's decompression rate, in uncompressed bytes; every Arm core of the SmartNIC decompresses" default:"1GB/s" source:"estimate: software inflate/LZ4-class decoders run at 0.3 to 4 GB/s a core on server x86; a BlueField-3 Arm core runs control code at 0.62 of one (hw catalog); plausible 0.3 to 3 GB/s" plausible:"300MB/s,3GB/s"`
}

func (c FetchCompression) validate(path string, add func(key, format string, a ...any)) {
	if !(c.Ratio >= 1 && c.Ratio <= 64) {
		add("prefix_fetch.compression.ratio", "%v; want 1 (none) to 64", c.Ratio)
	}
	if c.Decompress != DecompressGPU && c.Decompress != DecompressSmartNIC {
		add("prefix_fetch.compression.decompress", "%q; use %s or %s", c.Decompress, DecompressGPU, DecompressSmartNIC)
	}
	if c.Ratio > 1 && c.Decompress == DecompressSmartNIC && path != kvpath.Conspirator {
		add("prefix_fetch.compression.decompress", "smartnic over path %s: only the conspirator path lands the bytes in the SmartNIC; set prefix_fetch.path: conspirator or decompress: gpu", path)
	}
	for _, r := range []struct {
		key string
		v   units.Bandwidth
	}{{"prefix_fetch.compression.gpu_rate", c.GPURate}, {"prefix_fetch.compression.arm_rate", c.ArmRate}} {
		if v := float64(r.v); !(v > 0) || v > 1e13 {
			add(r.key, "%v; want a rate above 0, e.g. 1GB/s", r.v)
		}
	}
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
	f.Compression.validate(f.Path, add)
	if f.Compression.Ratio > 1 && f.Store == StoreSSD && f.Compression.Decompress == DecompressSmartNIC {
		add("prefix_fetch.compression.decompress", "smartnic with store ssd: the NVMe's bytes do not cross the SmartNIC; use decompress: gpu")
	}
}

// PrefixFetch is a resolved store: what times a fetch alone.
type PrefixFetch struct {
	Always bool
	path   string
	hw     kvpath.Hardware
	// ssd is the NVMe's rate (0: remote DRAM over path).
	ssd float64
	// gpusPerServer places the replicas on servers, whose NICs (or
	// NVMe) their concurrent fetches share.
	gpusPerServer int
	// ratio compresses the stored KV (1: none); decompression runs on
	// the GPU at gpuRate, or on the SmartNIC's armRate (all its cores).
	ratio, gpuRate, armRate float64
	onNIC                   bool
}

// fetchRoute is how one fetch's bytes move: the resources the flow
// crosses (in the flow's bytes, the compressed ones), its cap, the work
// beside the bytes (Control), the latency after them, and the GPU time
// its decompression adds to the replica's next step.
type fetchRoute struct {
	hops    []kvpath.Hop
	cap     float64
	wire    float64 // bytes the flow carries
	control engine.Time
	latency engine.Time
	gpu     engine.Time
}

// armDecompress is the SmartNIC's Arm cores decompressing: a resource of
// the fetch network like the hops kvpath names.
const armDecompress kvpath.Resource = "snic_arm_decompress"

// route plans a fetch of bytes (uncompressed; ops RDMA operations) into
// a replica of tp GPUs: the shards land in parallel, each over its own
// GPU's PCIe, so a per-GPU resource and the flow's cap count tp times
// (as a disaggregated hand-off's do).
func (f *PrefixFetch) route(bytes float64, ops, tp int) (fetchRoute, error) {
	rt, err := f.route1(bytes, ops)
	if err != nil || tp <= 1 {
		return rt, err
	}
	k := float64(tp)
	for i := range rt.hops {
		if rt.hops[i].Resource.PerGPU() {
			rt.hops[i].BytesPerSec *= k
		}
	}
	if rt.cap > 0 {
		rt.cap *= k
	}
	rt.gpu = engine.Time(float64(rt.gpu) / k) // each GPU decompresses its shard
	return rt, nil
}

// route1 is route for one GPU.
func (f *PrefixFetch) route1(bytes float64, ops int) (fetchRoute, error) {
	ratio := max(f.ratio, 1)
	rt := fetchRoute{wire: bytes / ratio}
	if ratio > 1 && !f.onNIC {
		rt.gpu = engine.Seconds(bytes / f.gpuRate)
	}
	if f.ssd > 0 {
		rt.hops = []kvpath.Hop{{Side: kvpath.Dst, Resource: "nvme", BytesPerSec: f.ssd}, {Side: kvpath.Dst, Resource: kvpath.PCIeH2D, BytesPerSec: f.hw.PCIe.PinnedH2DBytesPerSec}}
		rt.latency = ssdLatency
		return rt, nil
	}
	// The same operations carry fewer bytes each.
	p, err := f.hw.Plan(f.path, kvpath.Transfer{Bytes: rt.wire, Ops: ops})
	if err != nil {
		return fetchRoute{}, err
	}
	rt.hops, rt.cap, rt.control, rt.latency = p.Hops, p.CapBytesPerSec, p.Control, p.Latency
	if ratio > 1 && f.onNIC {
		// Past the Arm cores the bytes are ratio times more: the DRAM
		// takes the compressed bytes in and out and the uncompressed in
		// and out (2 + 2 ratio per flow byte), the DMA engine and the
		// GPU's PCIe the uncompressed; the cores put out cores x armRate.
		hops := make([]kvpath.Hop, 0, len(rt.hops)+1)
		for _, h := range rt.hops {
			switch {
			case h.Side == kvpath.Dst && h.Resource == kvpath.SmartNICDRAM:
				h.BytesPerSec = f.hw.SmartNICDRAMBytesPerSec / (2 + 2*ratio)
			case h.Side == kvpath.Dst && (h.Resource == kvpath.SmartNICDMA || h.Resource == kvpath.PCIeH2D):
				h.BytesPerSec /= ratio
			}
			hops = append(hops, h)
		}
		cores := 1
		if f.hw.SmartNIC != nil {
			cores = f.hw.SmartNIC.ArmCores
		}
		rt.hops = append(hops, kvpath.Hop{Side: kvpath.Dst, Resource: armDecompress, BytesPerSec: float64(cores) * f.armRate / ratio})
	}
	return rt, nil
}

// alone is the route's time with nothing else in the system, its GPU
// decompression included: as kvpath's Plan.Alone over its hops.
func (rt fetchRoute) alone() engine.Time {
	rate := rt.cap
	if !(rate > 0) {
		rate = math.Inf(1)
	}
	for _, h := range rt.hops {
		rate = min(rate, h.BytesPerSec)
	}
	return max(hw.SerializationTime(rt.wire, rate, 0), rt.control) + rt.latency + rt.gpu
}

// ssdLatency is an NVMe read's latency before its bytes flow.
const ssdLatency = 100 * engine.Microsecond

// time is a fetch of bytes (ops RDMA operations) alone: remote DRAM by
// the path's closed form for that transfer (its posting and staging
// grow with it; the source side's PCIe hop stands for the pool's DRAM),
// the SSD at the slower of its rate and the GPU's PCIe plus a read's
// latency.
func (f *PrefixFetch) time(bytes float64, ops, tp int) engine.Time {
	rt, err := f.route(bytes, ops, tp)
	if err != nil {
		return engine.MaxTime // validated when resolved: unreachable
	}
	return rt.alone()
}

func (c Config) prefixFetch(gpuPCIe float64) (*PrefixFetch, error) {
	f := c.PrefixFetch
	if !f.Enabled {
		return nil, nil
	}
	d := c.Disagg
	d.Path = f.Path // the fetch's path, not the (unused) disaggregation's
	h, err := d.hardware(gpuPCIe, float64(c.HostLoad))
	cc := f.Compression
	comp := func(pf *PrefixFetch) *PrefixFetch {
		pf.ratio, pf.gpuRate, pf.armRate, pf.onNIC = cc.Ratio, float64(cc.GPURate), float64(cc.ArmRate), cc.Decompress == DecompressSmartNIC
		return pf
	}
	if f.Store == StoreSSD {
		return comp(&PrefixFetch{Always: f.Policy == FetchAlways, hw: h, ssd: float64(f.SSDRate), gpusPerServer: d.GPUsPerServer}), nil
	}
	if err != nil {
		var fe *units.FieldError
		if errors.As(err, &fe) && fe.Field == "disagg.path" {
			return nil, units.Invalid("prefix_fetch.path", "%s", fe.Msg)
		}
		return nil, err
	}
	return comp(&PrefixFetch{Always: f.Policy == FetchAlways, path: f.Path, hw: h, gpusPerServer: d.GPUsPerServer}), nil
}

// fetching is a request waiting for its fetch, until at.
type fetching struct {
	at  engine.Time
	q   *request
	r   *replica
	gpu engine.Time // decompression the replica's GPU runs before its next step
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
	rt, err := f.route(bytes, kvOps(m, bs, tokens), r.pl.p.Placement.TP)
	if err != nil {
		c.fail(fmt.Errorf("llmserve: request %d's prefix fetch: %w", q.rec.ID, err))
		return now
	}
	ft := rt.alone()
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
	c.fetchAlone += ft.Seconds()
	if err := c.fnet.start(c, q, r, rt, now); err != nil {
		c.fail(err)
	}
	return engine.MaxTime // ready when its flow ends (fetchNet.start)
}

// nextFetch is the earliest fetch end (ok false: none).
func (c *cluster) nextFetch() (engine.Time, bool) {
	if len(c.fetching) == 0 {
		return 0, false
	}
	return c.fetching[0].at, true
}

func fetchNote(n, skipped int, bytes, secs, alone float64) string {
	d := float64(max(n, 1))
	return fmt.Sprintf("prefix fetch: %d requests fetched %.1f GB of KV from the store, %.1f ms each on average (%.1f ms alone: concurrent fetches share their servers' links max-min); %d fetches were slower than recomputing and skipped", n, bytes/1e9, 1e3*secs/d, 1e3*alone/d, skipped)
}

// fetchNet is where the fetches' bytes flow: a network of each server's
// resources the path crosses (its NICs, host DRAM, SmartNIC; or its NVMe)
// and each replica's PCIe, shared max-min among concurrent fetches
// (engine/resource), on its own event clock that the cluster's loop runs
// up to each of its events. The store is spread over the servers' memory
// (Mooncake's pool), so a fetch's source-side resources are its own
// server's counterparts: each server draws on as much store bandwidth as
// it has.
type fetchNet struct {
	f     *PrefixFetch
	sim   *engine.Simulator
	net   *resource.Network
	links map[linkKey]resource.LinkID
	live  int
}

func newFetchNet(f *PrefixFetch) (*fetchNet, error) {
	s := engine.New(nil)
	n, err := resource.NewNetwork(s)
	if err != nil {
		return nil, err
	}
	return &fetchNet{f: f, sim: s, net: n, links: map[linkKey]resource.LinkID{}}, nil
}

// start sends q's fetch, routed as rt, to replica r at now; when its
// bytes have flowed, its control work (posting) is done and its latency
// has passed, q joins the fetch heap to wait for the loop.
func (n *fetchNet) start(c *cluster, q *request, r *replica, rt fetchRoute, now engine.Time) error {
	server := r.id * r.pl.p.Placement.TP / max(n.f.gpusPerServer, 1)
	hops := rt.hops
	path := make([]resource.LinkID, 0, len(hops))
	for _, h := range hops {
		k := linkKey{where: server, res: h.Resource}
		if h.Side == kvpath.Src {
			k.where = -1 - server // the store's share on the same server
		}
		if h.Resource.PerGPU() {
			k.where = 1<<20 + r.id
			if h.Side == kvpath.Src {
				k.where = -(1 << 20) - r.id
			}
		}
		id, ok := n.links[k]
		if !ok {
			var err error
			if id, err = n.net.AddLink(h.BytesPerSec); err != nil {
				return err
			}
			n.links[k] = id
		}
		path = append(path, id)
	}
	n.live++
	t0 := now
	n.net.Start(rt.wire, path, rt.cap, func() {
		end := max(n.sim.Now(), t0+rt.control) + rt.latency
		c.fetchTime += (end - t0 + rt.gpu).Seconds()
		heap.Push(&c.fetching, fetching{at: end, q: q, r: r, gpu: rt.gpu})
		n.live--
	})
	return nil
}

// next is the time of the fetch network's next event (ok false: none).
func (n *fetchNet) next() (engine.Time, bool) {
	if n == nil {
		return 0, false
	}
	return n.sim.NextAt()
}

// runUntil runs the fetch network's events up to t.
func (n *fetchNet) runUntil(t engine.Time) {
	if n != nil {
		n.sim.RunUntil(t)
	}
}

// busy reports fetches whose bytes are still flowing.
func (n *fetchNet) busy() bool { return n != nil && n.live > 0 }
