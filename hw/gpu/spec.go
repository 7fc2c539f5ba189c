package gpu

import (
	"fmt"
	"sort"
	"strings"

	"github.com/conspirator-sim/conspirator/hw/mig"
	"github.com/conspirator-sim/conspirator/internal/suggest"
)

// Spec describes one GPU type. Catalog values are defaults with a source
// and grade each; scenarios may override them.
type Spec struct {
	Name        string // catalog key, e.g. "a100-40gb"
	MemoryBytes int64  // device memory
	// MIG is the GPU's MIG geometry (hw/mig), nil when the GPU has no MIG.
	// Shared with the catalog: read-only.
	MIG      *mig.Geometry
	TDPWatts float64 // board power limit
	// PricePerHour is the on-demand cloud price of one GPU, USD per GPU-hour,
	// unless PriceBasis says otherwise.
	PricePerHour float64
	// PriceBasis names a price that is not on-demand ("capacity block"):
	// comparisons across GPUs must say so, as it is lower. Empty: on-demand.
	PriceBasis string
	// RelSpeed is the throughput of the whole GPU relative to a whole
	// A100-80GB, per model ("resnet50", "bert"); see speed.go.
	RelSpeed map[string]float64
	Source   string // citations and grades of the numbers above

	// Roofline figures, used by the LLM step model (hw/llm). Zero where no
	// figure is sourced: the step model refuses such a GPU.
	//
	// PeakDenseBF16 is the dense (no structured sparsity) tensor-core
	// BF16 rate in FLOP/s; FP16 on parts without BF16 (V100, T4).
	PeakDenseBF16 float64
	// PeakDenseFP8 is the dense tensor-core FP8 rate in FLOP/s on parts
	// with FP8 tensor cores (Ada, Hopper: twice the BF16 rate), 0 on
	// parts without them (Volta, Turing, Ampere), where an FP8 model's
	// GEMMs run at PeakDenseBF16 (hw/llm).
	PeakDenseFP8 float64
	// MemoryBandwidth is the device-memory bandwidth in B/s.
	MemoryBandwidth float64
	// NVLinkBandwidth is the NVLink bandwidth per direction to the GPU's
	// peers in B/s (half the "total" datasheet figure); 0 without NVLink.
	NVLinkBandwidth float64
	// NVLinkPeers is how many GPUs one NVLink domain joins: 8 on an HGX
	// board (NVSwitch or hybrid cube mesh), 2 with an NVLink bridge. A
	// tensor-parallel group larger than this talks over PCIe.
	NVLinkPeers int
	// PCIeBandwidth is the host-interface bandwidth per direction in B/s
	// (x16 link).
	PCIeBandwidth float64
	// RooflineSource gives the citation and grade of the figures above.
	RooflineSource string
}

// GB is 10^9 bytes, the unit of bandwidth datasheets; TFLOPS is 10^12.
const (
	gbps   = 1e9
	tflops = 1e12
)

// GiB is 2^30 bytes. GPU memory sizes in product names ("40GB") are binary
// gigabytes: an A100-40GB has 40960 MiB of HBM2 (nvidia-smi shows 40536 MiB
// after the driver's reserve).
const GiB int64 = 1 << 30

// catalog holds every GPU type by canonical name. Built once; Lookup hands
// out copies so that callers cannot change it.
var catalog = buildCatalog()

// aliases maps other spellings to canonical names.
var aliases = map[string]string{
	"v100m16":   "v100",      // Alibaba openb code; the 16 GB V100 (p3.2xlarge kind)
	"a100":      "a100-40gb", // the first A100 part
	"h100":      "h100-80gb",
	"h100-nvl":  "h100-94gb",
	"h200":      "h200-141gb",
	"b200":      "b200-180gb",
	"a30":       "a30-24gb",
	"a10g":      "a10", // AWS g5 variant of the A10 (same GA102; E: treated as equal)
	"tesla-t4":  "t4",
	"tesla-k80": "k80",
}

func buildCatalog() map[string]Spec {
	specs := []Spec{
		{
			Name: "a100-40gb", MemoryBytes: 40 * GiB,
			MIG: mig.SevenSlice("a100-40gb", 40*GiB, [6]string{"1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"}, "V: MIG guide v580 A100 table"),
			// 400 W: SXM4 part (A: thundercompute, upb-pc2 wiki), as in AWS p4d whose price we use; the PCIe card is 250 W (V/A).
			TDPWatts: 400,
			// 4.10 USD/GPU-h: D 32.77/8, AWS p4d.24xlarge (8x A100-40GB SXM4) on-demand (A: usage.ai, xither.com).
			PricePerHour: 4.10,
			RelSpeed:     relSpeedA100_40,
			Source:       "memory V (product name); MIG profiles V (MIG guide v580); TDP A (SXM4 400 W); price D from A (p4d 32.77/8); speed D (MLPerf v0.7 vs v1.1)",
			// V: A100 datasheet (nvidia.com a100-80gb-datasheet-update, SXM column): BF16 312 TFLOPS dense (624 sparse), HBM2 1,555 GB/s (40 GB), NVLink 600 GB/s total, PCIe Gen4 64 GB/s total.
			PeakDenseBF16: 312 * tflops, MemoryBandwidth: 1555 * gbps, NVLinkBandwidth: 300 * gbps, NVLinkPeers: 8, PCIeBandwidth: 32 * gbps,
			RooflineSource: "V: A100 datasheet, SXM4 40GB (BF16 312 TFLOPS dense, 1,555 GB/s, NVLink 600 GB/s total = 300 per direction, PCIe Gen4 x16 32 GB/s per direction); 8 peers: HGX A100 NVSwitch; no FP8 tensor cores: the datasheet lists no FP8 rate",
		},
		{
			Name: "a100-80gb", MemoryBytes: 80 * GiB,
			MIG:      mig.SevenSlice("a100-80gb", 80*GiB, [6]string{"1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}, "V: MIG guide v580 A100 table (80 GB names)"),
			TDPWatts: 400, // A: SXM (thundercompute; upb-pc2 wiki; glennklockwood). PCIe 80GB: 300 W (A).
			// 5.12 USD/GPU-h: E 40.97/8, AWS p4de.24xlarge on-demand as widely quoted (not in hardware.md; unverified).
			PricePerHour: 5.12,
			RelSpeed:     relSpeedA100_80,
			Source:       "memory V; MIG profiles V (MIG guide v580); TDP A (SXM 400 W); price E (p4de 40.97/8); speed = reference (1.0)",
			// V: A100 datasheet, SXM 80GB column: BF16 312 TFLOPS dense, HBM2e 2,039 GB/s, NVLink 600 GB/s total. The PCIe 80GB card (1,935 GB/s, 300 W, NVLink bridge to one peer) is not a catalog entry.
			PeakDenseBF16: 312 * tflops, MemoryBandwidth: 2039 * gbps, NVLinkBandwidth: 300 * gbps, NVLinkPeers: 8, PCIeBandwidth: 32 * gbps,
			RooflineSource: "V: A100 datasheet, SXM4 80GB (BF16 312 TFLOPS dense, 2,039 GB/s, NVLink 600 GB/s total = 300 per direction, PCIe Gen4 x16 32 GB/s per direction); 8 peers: HGX A100 NVSwitch; no FP8 tensor cores: the datasheet lists no FP8 rate",
		},
		{
			Name: "h100-80gb", MemoryBytes: 80 * GiB,
			MIG:      mig.SevenSlice("h100-80gb", 80*GiB, [6]string{"1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}, "V: MIG guide v580 H100-80GB table"),
			TDPWatts: 700, // A/V: SXM "up to 700W" (hawkvelt, gpu.blog; MIG guide nvidia-smi shows /700W). PCIe: 350 W (V).
			// 12.29 USD/GPU-h: D 98.32/8, AWS p5.48xlarge on-demand (A: usage.ai, deploybase, computespec).
			PricePerHour: 12.29,
			RelSpeed:     relSpeedH100,
			Source:       "memory V; MIG profiles V (MIG guide v580, H100-80GB table); TDP A (SXM 700 W); price D from A (p5 98.32/8); speed D (MLPerf v3.1 vs v3.0/v1.1)",
			// V: H100 datasheet, SXM5 column: BF16 1,979 TFLOPS with sparsity = 989.5 dense, FP8 3,958 with sparsity = 1,979 dense, HBM3 3.35 TB/s, NVLink 900 GB/s total, PCIe Gen5 128 GB/s total.
			PeakDenseBF16: 989.5 * tflops, PeakDenseFP8: 1979 * tflops, MemoryBandwidth: 3350 * gbps, NVLinkBandwidth: 450 * gbps, NVLinkPeers: 8, PCIeBandwidth: 64 * gbps,
			RooflineSource: "V: H100 datasheet, SXM5 (BF16 989.5 TFLOPS dense = 1,979 sparse / 2, FP8 1,979 dense = 3,958 sparse / 2, 3.35 TB/s, NVLink 900 GB/s total = 450 per direction, PCIe Gen5 x16 64 GB/s per direction); 8 peers: HGX H100 NVSwitch",
		},
		{
			Name: "h100-94gb", MemoryBytes: 94 * GiB, // H100 NVL (PCIe, 94 GB HBM3)
			MIG:      mig.SevenSlice("h100-94gb", 94*GiB, [6]string{"1g.12gb", "1g.24gb", "2g.24gb", "3g.47gb", "4g.47gb", "7g.94gb"}, "V: MIG guide v580 H100-94GB table; starts V (H100 NVL -lgipp copy, hardware.md 6c)"),
			TDPWatts: 400, // E: H100 NVL is configurable 350-400 W as commonly quoted; the H100 PCIe brief says 350 W (V).
			// E: no on-demand cloud price found for the NVL part; the h100-80gb (p5) price per GPU-hour is used.
			PricePerHour: 12.29,
			RelSpeed:     relSpeedH100NVL,
			Source:       "memory V (product name); MIG profiles V (MIG guide v580); TDP E (350-400 W); price E (as h100-80gb); speed D/E (MLPerf v3.1 H100-PCIe stands for NVL)",
			// V: H100 datasheet, NVL column: BF16 1,671 TFLOPS sparse = 835.5 dense, FP8 3,341 sparse = 1,670.5 dense (the datasheet's rounding: not exactly twice BF16), HBM3 3.9 TB/s, NVLink bridge 600 GB/s total to one peer, PCIe Gen5 128 GB/s total.
			PeakDenseBF16: 835.5 * tflops, PeakDenseFP8: 1670.5 * tflops, MemoryBandwidth: 3900 * gbps, NVLinkBandwidth: 300 * gbps, NVLinkPeers: 2, PCIeBandwidth: 64 * gbps,
			RooflineSource: "V: H100 datasheet, NVL (BF16 835.5 TFLOPS dense = 1,671 sparse / 2, FP8 1,670.5 dense = 3,341 sparse / 2, 3.9 TB/s, NVLink bridge 600 GB/s total = 300 per direction to one peer, PCIe Gen5 x16 64 GB/s per direction)",
		},
		{
			Name: "h200-141gb", MemoryBytes: 141 * GiB,
			// Memory per instance and SMs: measured, `nvidia-smi mig -lgip`
			// on an H200 (driver 580.159.04, CUDA 13.0, 2026-11-27;
			// ../shared/reference/measured-h200-2026-11-27). Its -lgipp
			// placements are the seven-slice shapes', so starts are now V.
			MIG: mig.SevenSlice("h200-141gb", 141*GiB, [6]string{"1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"}, "V: MIG guide v580 H200-141GB table").
				WithDevice([]int64{16384, 33280, 33280, 71424, 71424, 143360}, []int{16, 26, 32, 60, 64, 132},
					"memory per instance, SMs and starts measured: nvidia-smi mig -lgip/-lgipp on an H200, driver 580.159.04, 2026-11-27"),
			TDPWatts: 700, // A: SXM 700 W (saulelectric.com H200 page; gmicloud); same board power as H100 SXM.
			// 5.408 USD/GPU-h: V, AWS Capacity Block for p5e (8x H200) 43.26/8 (hardware.md 8). A capacity-block price, lower than on-demand.
			PricePerHour: 5.408,
			PriceBasis:   "capacity block",
			RelSpeed:     relSpeedH200,
			Source:       "memory V; MIG profiles V (MIG guide v580); TDP A (SXM 700 W); price V (capacity block 43.26/8, not on-demand); speed E (as H100 SXM: same GH100 compute)",
			// V: H200 datasheet, SXM column: BF16 1,979 TFLOPS sparse = 989.5 dense, FP8 3,958 sparse = 1,979 dense (same GH100 compute as H100 SXM), HBM3e 4.8 TB/s, NVLink 900 GB/s total.
			PeakDenseBF16: 989.5 * tflops, PeakDenseFP8: 1979 * tflops, MemoryBandwidth: 4800 * gbps, NVLinkBandwidth: 450 * gbps, NVLinkPeers: 8, PCIeBandwidth: 64 * gbps,
			RooflineSource: "V: H200 datasheet, SXM (BF16 989.5 TFLOPS dense, FP8 1,979 dense = 3,958 sparse / 2, 4.8 TB/s, NVLink 900 GB/s total = 450 per direction, PCIe Gen5 x16 64 GB/s per direction); 8 peers: HGX H200",
		},
		{
			Name: "b200-180gb", MemoryBytes: 180 * GiB,
			MIG:      mig.SevenSlice("b200-180gb", 180*GiB, [6]string{"1g.23gb", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb", "7g.180gb"}, "V: MIG guide v580 B200 table; A: NVIDIA/go-nvml mock dgxb200 (names, counts, 184320 MiB); starts D (as A100/H100)"),
			TDPWatts: 1000, // E: commonly quoted HGX B200 board power; not in hardware.md.
			// No sourced price and no sourced speed: a cluster or data-path
			// run on a b200 stops with "no relative speed" rather than
			// inventing one; MIG layouts and policy checks work. No
			// roofline figures either (not even PeakDenseFP8, though
			// Blackwell has FP8 tensor cores): without a sourced BF16 peak
			// and bandwidth hw/llm refuses it, so an FP8 peak alone would
			// time nothing.
			Source: "memory A (go-nvml mock, 180 GB); MIG profiles V (MIG guide v580); TDP E; price and speed: none sourced (not usable in timed runs)",
		},
		{
			Name: "a30-24gb", MemoryBytes: 24 * GiB,
			MIG:      mig.FourSlice("a30-24gb", 24*GiB, [3]string{"1g.6gb", "2g.12gb", "4g.24gb"}, "V: MIG guide v580 A30-24GB table; starts A (go-nvml A30 mock)"),
			TDPWatts: 165, // E: commonly quoted A30 board power; not in hardware.md.
			// E: no on-demand cloud price found; the A10 (g5.xlarge) figure of the same generation stands in.
			PricePerHour: 1.006,
			RelSpeed:     relSpeedA30,
			Source:       "memory V; MIG profiles V (MIG guide v580 A30 table); TDP E (165 W); price E (as a10); speed D (MLPerf v1.1 A30 vs A100-SXM-80GB)",
			// V: A30 datasheet: BF16 165 TFLOPS dense (330 sparse), HBM2 933 GB/s, NVLink bridge 200 GB/s total to one peer, PCIe Gen4 64 GB/s total.
			PeakDenseBF16: 165 * tflops, MemoryBandwidth: 933 * gbps, NVLinkBandwidth: 100 * gbps, NVLinkPeers: 2, PCIeBandwidth: 32 * gbps,
			RooflineSource: "V: A30 datasheet (BF16 165 TFLOPS dense, 933 GB/s, NVLink bridge 200 GB/s total = 100 per direction to one peer, PCIe Gen4 x16 32 GB/s per direction); no FP8 tensor cores: the datasheet lists no FP8 rate",
		},
		{
			Name: "v100", MemoryBytes: 16 * GiB,
			TDPWatts: 300, // A: nvidia-smi "300W" cap of a Tesla V100-SXM2 (public file).
			// 3.06 USD/GPU-h: E, AWS p3.2xlarge (1x V100-SXM2-16GB) as widely quoted (hardware.md 8: not found).
			PricePerHour: 3.06,
			RelSpeed:     relSpeedV100,
			Source:       "memory V (V100 16GB, Alibaba V100M16); TDP A; price E (p3.2xlarge); speed E (0.33 x A100, hardware.md 7)",
			// V: V100 datasheet, SXM2: tensor (FP16) 125 TFLOPS, HBM2 900 GB/s, NVLink 300 GB/s total; no BF16.
			PeakDenseBF16: 125 * tflops, MemoryBandwidth: 900 * gbps, NVLinkBandwidth: 150 * gbps, NVLinkPeers: 8, PCIeBandwidth: 16 * gbps,
			RooflineSource: "V: V100 datasheet, SXM2 (FP16 tensor 125 TFLOPS, no BF16; 900 GB/s; NVLink 300 GB/s total = 150 per direction; PCIe Gen3 x16 16 GB/s per direction); 8 peers: p3.16xlarge hybrid cube mesh; no FP8 tensor cores: the datasheet lists no FP8 rate",
		},
		{
			Name: "v100m32", MemoryBytes: 32 * GiB,
			TDPWatts: 300, // A: same part family as v100 (SXM2 300 W cap).
			// 3.90 USD/GPU-h: E 31.212/8, AWS p3dn.24xlarge (8x V100-32GB) as widely quoted; unverified.
			PricePerHour: 3.90,
			RelSpeed:     relSpeedV100, // E: same GV100 chip as the 16 GB part
			Source:       "memory V (V100 32GB); TDP A; price E (p3dn 31.212/8); speed E (as v100)",
			// V: V100 datasheet, SXM2 32GB: same figures as the 16 GB part.
			PeakDenseBF16: 125 * tflops, MemoryBandwidth: 900 * gbps, NVLinkBandwidth: 150 * gbps, NVLinkPeers: 8, PCIeBandwidth: 16 * gbps,
			RooflineSource: "V: V100 datasheet, SXM2 32GB (as v100); no FP8 tensor cores: the datasheet lists no FP8 rate",
		},
		{
			Name: "p100", MemoryBytes: 16 * GiB,
			TDPWatts: 250, // E: PCIe P100 as commonly quoted (SXM2: 300 W); not in hardware.md.
			// 1.46 USD/GPU-h: E, Google Cloud P100 on-demand list price as widely quoted; unverified.
			PricePerHour: 1.46,
			RelSpeed:     relSpeedP100,
			Source:       "memory V (P100 16GB); TDP E; price E (GCP P100); speed D (v100 E x Gavel P100/V100 M)",
		},
		{
			Name: "k80", MemoryBytes: 12 * GiB, // V: one GK210 of the dual-GPU K80 board (24 GB per board)
			TDPWatts: 150, // D: 300 W per K80 board (V, commonly quoted) / 2 GPUs
			// 0.90 USD/GPU-h: E, AWS p2.xlarge (1 K80 GPU) as widely quoted; unverified.
			PricePerHour: 0.90,
			RelSpeed:     relSpeedK80,
			Source:       "memory V (half a K80 board); TDP D (300 W / 2); price E (p2.xlarge); speed D (v100 E x Gavel K80/V100 M); stands for Alibaba v2020 MISC (K40m/K80/M60)",
		},
		{
			Name: "t4", MemoryBytes: 16 * GiB,
			TDPWatts: 70, // A: networkoutlet, aiminingco (Tom's Hardware launch article: 75 W).
			// 0.526 USD/GPU-h: E, AWS g4dn.xlarge (hardware.md 8: not found; widely quoted).
			PricePerHour: 0.526,
			RelSpeed:     relSpeedT4,
			Source:       "memory V; TDP A; price E (g4dn.xlarge); speed D (MLPerf v0.7 T4 vs A100-40GB)",
			// V: T4 datasheet: mixed-precision (FP16) 65 TFLOPS, GDDR6 320 GB/s, PCIe Gen3 x16; no BF16, no NVLink.
			PeakDenseBF16: 65 * tflops, MemoryBandwidth: 320 * gbps, PCIeBandwidth: 16 * gbps,
			RooflineSource: "V: T4 datasheet (FP16 tensor 65 TFLOPS, no BF16; 320 GB/s; PCIe Gen3 x16 16 GB/s per direction; no NVLink); no FP8 tensor cores: the datasheet lists no FP8 rate",
		},
		{
			Name: "a10", MemoryBytes: 24 * GiB,
			TDPWatts: 150, // E: commonly quoted (hardware.md 8: not found).
			// 1.006 USD/h: A, AWS g5.xlarge (1x A10G, us-east-1, June 2026 blog), whole instance incl. 4 vCPU.
			PricePerHour: 1.006,
			RelSpeed:     relSpeedA10,
			Source:       "memory V; TDP E; price A (g5.xlarge, A10G); speed D (MLPerf v1.1 same round)",
			// V: A10 datasheet: BF16 125 TFLOPS dense (250 sparse), GDDR6 600 GB/s, PCIe Gen4 64 GB/s total; no NVLink.
			PeakDenseBF16: 125 * tflops, MemoryBandwidth: 600 * gbps, PCIeBandwidth: 32 * gbps,
			RooflineSource: "V: A10 datasheet (BF16 125 TFLOPS dense, 600 GB/s, PCIe Gen4 x16 32 GB/s per direction; no NVLink); no FP8 tensor cores: the datasheet lists no FP8 rate",
		},
		{
			Name: "l4", MemoryBytes: 24 * GiB,
			TDPWatts: 72, // A: fpsbench; grokipedia.
			// 0.805 USD/h: E, AWS g6.xlarge (1x L4) as widely quoted; not in hardware.md.
			PricePerHour: 0.805,
			RelSpeed:     relSpeedL4,
			Source:       "memory V; TDP A; price E (g6.xlarge); speed D (MLPerf v3.1 vs v3.0/v1.1)",
			// V: L4 datasheet: BF16 242 TFLOPS with sparsity = 121 dense, FP8 485 with sparsity = 242.5 dense (Ada: FP8 tensor cores), GDDR6 300 GB/s, PCIe Gen4 x16; no NVLink.
			PeakDenseBF16: 121 * tflops, PeakDenseFP8: 242.5 * tflops, MemoryBandwidth: 300 * gbps, PCIeBandwidth: 32 * gbps,
			RooflineSource: "V: L4 datasheet (BF16 121 TFLOPS dense = 242 sparse / 2, FP8 242.5 dense = 485 sparse / 2, 300 GB/s, PCIe Gen4 x16 32 GB/s per direction; no NVLink)",
		},
	}
	m := make(map[string]Spec, len(specs))
	for _, s := range specs {
		m[s.Name] = s
	}
	return m
}

// Profile returns the MIG profile called name ("3g.20gb"), or an error
// that says the GPU has no MIG or lists its profiles.
func (s Spec) Profile(name string) (*mig.Profile, error) {
	if s.MIG == nil {
		return nil, fmt.Errorf("gpu %s does not support MIG, so it has no profile %q (use the whole GPU)", s.Name, name)
	}
	return s.MIG.Lookup(name)
}

// Names returns the canonical catalog names, sorted.
func Names() []string {
	out := make([]string, 0, len(catalog))
	for n := range catalog {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Aliases returns the other accepted spellings and the canonical name each
// stands for, as "alias=name", sorted.
func Aliases() []string {
	out := make([]string, 0, len(aliases))
	for a, n := range aliases {
		out = append(out, a+"="+n)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the spec of the GPU called name (case-insensitive; aliases
// such as "v100m16" accepted). The spec is a copy: changing it does not
// change the catalog. An unknown name gives an error that lists the known
// names and suggests the nearest.
func Lookup(name string) (Spec, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	if a, ok := aliases[key]; ok {
		key = a
	}
	s, ok := catalog[key]
	if !ok {
		hint := ""
		if near := nearest(key); near != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", near)
		}
		return Spec{}, fmt.Errorf("unknown gpu %q%s; known gpus: %s", name, hint, strings.Join(Names(), ", "))
	}
	return s.clone(), nil
}

// clone deep-copies the geometry and map of s.
func (s Spec) clone() Spec {
	c := s
	c.MIG = s.MIG.Clone()
	if s.RelSpeed != nil {
		c.RelSpeed = make(map[string]float64, len(s.RelSpeed))
		for k, v := range s.RelSpeed {
			c.RelSpeed[k] = v
		}
	}
	return c
}

// nearest returns the catalog name or alias closest to key if it is a
// plausible typo (internal/suggest), "" otherwise.
func nearest(key string) string {
	cands := Names()
	for a := range aliases {
		cands = append(cands, a)
	}
	sort.Strings(cands)
	return suggest.Nearest(key, cands)
}
