package reproduce

import (
	"fmt"
	"math"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw"
	"github.com/conspirator-sim/conspirator/hw/kvpath"
)

// Mooncake (FAST'25) anchors: its transfer engine's rate for 40 GB
// against TCP, and its mean TTFT against the network's bandwidth.

// mooncakeNode is one of the servers Mooncake's transfer engine was
// measured between: its RDMA NICs and the PCIe generation of its GPUs.
type mooncakeNode struct {
	key, label string
	nic        string // hw catalog
	nics       int
	pcie       string
	paper      float64 // the published rate, GB/s
	paperRatio float64 // the published speed-up over TCP
}

// mooncakeNodes: the A800 servers of the paper's cluster carry 4 x 200
// Gb/s (ConnectX-6, PCIe Gen4); the 8 x 400 Gb/s servers are taken as
// H800s, PCIe Gen5, since a 400 Gb/s ConnectX-7 needs a Gen5 x16 slot to
// reach its line rate (the paper's summary does not name the GPU).
var mooncakeNodes = []mooncakeNode{
	{key: "4x200", label: "4 x 200 Gb/s", nic: "connectx6", nics: 4, pcie: "gen4-x16", paper: 87, paperRatio: 2.4},
	{key: "8x400", label: "8 x 400 Gb/s", nic: "connectx7", nics: 8, pcie: "gen5-x16", paper: 190, paperRatio: 4.6},
}

const (
	// mooncakeBytes is the transfer measured: 40 GB, "the KV cache of
	// 128k tokens of LLaMA3-70B" (Mooncake's README).
	mooncakeBytes = 40e9
	// mooncakeStripes is how many buffers a server's transfer is spread
	// over: its 8 GPUs (or the DRAM their PCIe hop stands for), each with
	// its own PCIe link, sharing the server's NICs and host memory.
	mooncakeStripes = 8
	// mooncakeWorkersPerNIC is the transfer engine's posting threads per
	// NIC (MC_WORKERS_PER_CTX, 2 by default): its 64 KiB slices' posting
	// is spread over them, where one thread would take 0.49 s for 40 GB.
	mooncakeWorkersPerNIC = 2
	// mooncakeRateTolerance is how close a modelled rate must be to the
	// published one to read as reproduced, stated before running.
	mooncakeRateTolerance = 0.15
	// mooncakeTTFT is the published knee's level: mean TTFT stays under
	// it above about mooncakeKneeGbps.
	mooncakeTTFT     = 2.0
	mooncakeKneeGbps = 100.0
)

// mooncakeKneeRates are the link rates (Gb/s, one NIC a server) the knee
// is swept over; a quick run takes four of them.
var (
	mooncakeKneeRates      = []float64{10, 25, 50, 100, 200, 400}
	mooncakeKneeRatesQuick = []float64{10, 25, 100, 400}
)

// mooncakeKneeSets is llm/mooncake-knee at one link rate (its servers
// have one NIC each), as typed.
func mooncakeKneeSets(gbps float64) []string {
	return []string{fmt.Sprintf("llm.disagg.line_rate=%gGbps", gbps)}
}

// mooncakeKneeCommands are the row's runs, one per link rate of the full
// sweep (the rates themselves need no run).
func mooncakeKneeCommands() []string {
	out := make([]string, len(mooncakeKneeRates))
	for i, g := range mooncakeKneeRates {
		out[i] = command("run", "llm/mooncake-knee", mooncakeKneeSets(g))
	}
	return out
}

// mooncakeHardware is node's server as kvpath sees it: the catalog
// server with node's NICs summed (as llm.disagg.nics sums them) and
// its GPUs' PCIe.
func mooncakeHardware(node mooncakeNode) (kvpath.Hardware, error) {
	h := kvpath.Default()
	nic, err := hw.LookupNIC(node.nic)
	if err != nil {
		return h, err
	}
	pcie, err := hw.LookupPCIe(node.pcie)
	if err != nil {
		return h, err
	}
	h.NICBytesPerSec = nic.LineRateBitsPerSec / 8 * nic.Efficiency * float64(node.nics)
	h.NICLatency = nic.OneWayLatency
	h.PCIe = pcie
	return h, nil
}

// stripedAlone is a transfer of bytes planned as p, spread over stripes
// buffers (one flow each, with its own cap and its own instance of every
// per-GPU hop; the server's NICs and host memory shared) and its posting
// over threads: the bytes' time at the striped rate or the control work
// per thread, whichever is longer, plus the plan's latency.
func stripedAlone(p kvpath.Plan, bytes float64, stripes, threads int) (engine.Time, float64) {
	rate := math.Inf(1)
	if p.CapBytesPerSec > 0 {
		rate = p.CapBytesPerSec * float64(stripes)
	}
	for _, h := range p.Hops {
		c := h.BytesPerSec
		if h.Resource.PerGPU() {
			c *= float64(stripes)
		}
		rate = min(rate, c)
	}
	control := p.Control / engine.Time(max(threads, 1))
	return max(hw.SerializationTime(bytes, rate, 0), control) + p.Latency, rate
}

// mooncakeTransferFigures gives, per node, the rate of 40 GB alone over
// gpudirect (the transfer engine), host-rdma and tcp, and the transfer
// engine's speed-up over tcp. Arithmetic on kvpath's plans: no seeds.
func mooncakeTransferFigures() ([]Figure, error) {
	var figs []Figure
	for _, node := range mooncakeNodes {
		h, err := mooncakeHardware(node)
		if err != nil {
			return nil, fmt.Errorf("mooncake %s: %w", node.key, err)
		}
		rates := map[string]float64{}
		for _, path := range []string{kvpath.GPUDirect, kvpath.HostRDMA, kvpath.TCP} {
			p, err := h.Plan(path, kvpath.Transfer{Bytes: mooncakeBytes})
			if err != nil {
				return nil, fmt.Errorf("mooncake %s over %s: %w", node.key, path, err)
			}
			// RDMA: the engine's workers; tcp: one thread a side per
			// connection, a connection per stripe.
			threads := mooncakeStripes
			if path != kvpath.TCP {
				threads = mooncakeWorkersPerNIC * node.nics
			}
			t, _ := stripedAlone(p, mooncakeBytes, mooncakeStripes, threads)
			if t <= 0 {
				return nil, fmt.Errorf("mooncake %s over %s: a transfer of no time", node.key, path)
			}
			rates[path] = mooncakeBytes / t.Seconds()
		}
		paper := node.paper
		figs = append(figs,
			Figure{Key: "te_" + node.key, Label: node.label + " transfer engine (gpudirect)", Value: rates[kvpath.GPUDirect] / 1e9, Unit: " GB/s", Decimals: 0, Seeds: 1, Published: &paper},
			Figure{Key: "hostrdma_" + node.key, Label: node.label + " host-rdma", Value: rates[kvpath.HostRDMA] / 1e9, Unit: " GB/s", Decimals: 0, Seeds: 1},
			Figure{Key: "tcp_" + node.key, Label: node.label + " tcp", Value: rates[kvpath.TCP] / 1e9, Unit: " GB/s", Decimals: 0, Seeds: 1},
			Figure{Key: "ratio_" + node.key, Label: node.label + " transfer engine over tcp", Value: rates[kvpath.GPUDirect] / rates[kvpath.TCP], Unit: "x", Decimals: 1, Seeds: 1},
		)
	}
	return figs, nil
}

// runMooncakeTransfer gives the transfer figures and llm/mooncake-knee's
// mean TTFT at each link rate, with the rate at which it crosses 2 s.
func runMooncakeTransfer(r *Runner, quick bool) ([]Figure, error) {
	figs, err := mooncakeTransferFigures()
	if err != nil {
		return nil, err
	}
	rates := mooncakeKneeRates
	if quick {
		rates = mooncakeKneeRatesQuick
	}
	ttft := make([]float64, len(rates))
	for i, g := range rates {
		out, err := r.scenario("llm/mooncake-knee", mooncakeKneeSets(g)...)
		if err != nil {
			return nil, err
		}
		if out.Summary.LLM == nil {
			return nil, fmt.Errorf("llm/mooncake-knee at %g Gb/s: the run has no llm result", g)
		}
		ttft[i] = out.Summary.LLM.Result.TTFT.Mean.Mean
		figs = append(figs, Figure{Key: fmt.Sprintf("ttft_%g", g), Label: fmt.Sprintf("%g Gb/s", g), Value: ttft[i], Unit: " s", Decimals: 2, Seeds: 1})
	}
	if g, ok := crossing(rates, ttft, mooncakeTTFT); ok {
		figs = append(figs, Figure{Key: "knee_gbps", Label: "mean TTFT crosses 2 s", Value: g, Unit: " Gb/s", Decimals: 0, Seeds: 1})
	}
	return figs, nil
}

// crossing is the rate at which y, falling as the rate rises, first
// comes down to level: between the last rate above it and the next,
// interpolated linearly in log(rate) (the rates are a geometric sweep).
// ok is false where y is at or under level everywhere, or above it
// everywhere.
func crossing(rates, y []float64, level float64) (float64, bool) {
	last := -1
	for i := range y {
		if y[i] > level {
			last = i
		}
	}
	if last < 0 || last == len(y)-1 {
		return 0, false
	}
	a, b := math.Log(rates[last]), math.Log(rates[last+1])
	f := (y[last] - level) / (y[last] - y[last+1])
	return math.Exp(a + f*(b-a)), true
}

// withinShare is the verdict of a rate against its published value with
// a relative tolerance stated in advance.
func withinShare(f Figure, paper, tol float64) string {
	switch d := f.Value/paper - 1; {
	case math.Abs(d) <= tol:
		return "reproduced"
	case d > 0:
		return "larger"
	default:
		return "smaller"
	}
}

// judgeMooncakeTransfer: each rate within 15% of the published one, each
// speed-up over TCP by against, and the knee: mean TTFT crossing 2 s
// within a factor 2 of 100 Gb/s. All reproduced reads "reproduced",
// none "not reproduced", otherwise "in part".
func judgeMooncakeTransfer(fs map[string]Figure) (string, string, string) {
	var parts, verdicts []string
	for _, n := range mooncakeNodes {
		te, ratio := fs["te_"+n.key], fs["ratio_"+n.key]
		vr, vx := withinShare(te, n.paper, mooncakeRateTolerance), against(ratio, n.paperRatio)
		parts = append(parts, fmt.Sprintf("%s: %s (%s), %s TCP (%s)", n.key, te.Text(), vr, ratio.Text(), vx))
		verdicts = append(verdicts, vr, vx)
	}
	var ttfts []string
	for _, k := range sortedKeys(fs, "ttft_") {
		ttfts = append(ttfts, fs[k].Label+" "+fs[k].Text())
	}
	knee, ok := fs["knee_gbps"]
	vk := "not reproduced"
	kneeText := "no crossing of 2 s in the sweep"
	if ok {
		kneeText = "crossing 2 s at " + knee.Text()
		switch {
		case knee.Value > 2*mooncakeKneeGbps:
			vk = "larger"
		case knee.Value >= mooncakeKneeGbps/2:
			vk = "reproduced"
		}
	}
	parts = append(parts, fmt.Sprintf("mean TTFT %s (%s)", kneeText, vk))
	verdicts = append(verdicts, vk)
	n := 0
	for _, v := range verdicts {
		if v == "reproduced" {
			n++
		}
	}
	verdict := "in part"
	switch n {
	case len(verdicts):
		verdict = "reproduced"
	case 0:
		verdict = "not reproduced"
	}
	note := fmt.Sprintf("mean TTFT by link rate: %s. Rates: %g GB alone over gpudirect (the transfer engine's zero-copy RDMA from registered DRAM or VRAM), striped over a server's %d GPUs' PCIe links and all its NICs at the catalog's efficiency, its %d KiB slices posted on %d threads a NIC; the 8 x 400 Gb/s server taken as PCIe Gen5 (H800). Both are wire-bound in the model: at 8 x 400 Gb/s it gives %s where Mooncake measured half the wire, and what bounds theirs (host memory, PCIe switches, the benchmark's threads) is not modelled. TCP: %d connections, bound at any line rate by host memory (four passes a byte over the half of one socket's DDR5 left to staging), near Mooncake's own TCP figures (87/2.4 and 190/4.6 GB/s). Knee: llm/mooncake-knee, every prefix a replica lacks fetched from a DRAM pool; a 70B prefill on A100s takes most of a TTFT and a fetch at 100 Gb/s a fraction of it (the run's note gives the fetches' bytes and times), so TTFT moves little until the link is far below Mooncake's knee. Prefill and decode share replicas here; TCP moved %s and %s",
		strings.Join(ttfts, ", "), mooncakeBytes/1e9, mooncakeStripes, kvpathSliceKiB(), mooncakeWorkersPerNIC, fs["te_8x400"].Text(), mooncakeStripes, fs["tcp_4x200"].Text(), fs["tcp_8x400"].Text())
	return strings.Join(parts, "; "), verdict, note
}

// kvpathSliceKiB is the transfer engine's slice as kvpath's catalog
// server has it, in KiB.
func kvpathSliceKiB() int64 { return kvpath.Default().SliceBytes >> 10 }
