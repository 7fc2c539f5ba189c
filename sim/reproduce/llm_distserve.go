package reproduce

import (
	"fmt"
	"math"
	"sort"

	"github.com/conspirator-sim/conspirator/sim"
)

// DistServe (OSDI'24) anchors: the KV transfer's share of latency when
// placement keeps each prefill/decode pair inside a node (NVLink) on a
// cluster joined by 25 Gb/s, and its simulator's OPT-13B goodput per GPU.

const (
	distserveScenario = "llm/distserve"
	// distserveShare is the published bound on the transfer's share of
	// latency, percent (OPT-175B, 25 Gb/s across nodes, NVLink placement).
	distserveShare = 0.1
	// distserveBound and distserveUnder: over 95% of transfers took under
	// 30 ms.
	distserveBound = 0.030
	distserveUnder = 95.0
	// distserveTPOT is the example's TPOT bound, seconds (the scenario's
	// slo.tpot), naming which latency bound the search.
	distserveTPOT = 0.100
	// distserveGoodput is the simulator example's best rate per GPU
	// (simdistserve/README.md: OPT-13B, ShareGPT, 4 x A100-80GB, TTFT
	// 200 ms and TPOT 100 ms each at P90; prefill TP 2, decode TP 1).
	// Its bisection stops when the bracket is under 0.25/s per GPU wide,
	// so the published 1.56 is the bracket's low end: the crossing lies
	// in [1.5625, 1.71875) there.
	distserveGoodput = 1.56
	// distserveTolerance is how close our goodput per GPU must be to
	// read as reproduced, stated before running (the brief).
	distserveTolerance = 0.25
	// distserveSteps and distserveQuickSteps are the geometric bisection
	// steps once a rate that meets the SLO and one that misses it
	// (a factor 2 apart) are found: 6 leave a bracket 2^(1/64), 1.1%,
	// wide; 3 leave 2^(1/8), 9%.
	distserveSteps      = 6
	distserveQuickSteps = 3
	// distserveMaxDoublings bounds the search for the first bracket: a
	// factor 2^10 of the scenario's rate either way.
	distserveMaxDoublings = 10
)

// distserveCrossNode puts the prefill pool (TP 2) and the decode pool
// (TP 1) on two servers, so every transfer crosses the scenario's
// 25 Gb/s link.
var distserveCrossNode = []string{"llm.disagg.gpus_per_server=2"}

// distserveRun is one run's disaggregated summary; an error where the
// run has none.
func distserveRun(r *Runner, sets ...string) (*sim.LLMSummary, error) {
	out, err := r.scenario(distserveScenario, sets...)
	if err != nil {
		return nil, err
	}
	s := out.Summary.LLM
	if s == nil || s.Disagg == nil {
		return nil, fmt.Errorf("%s: the run has no disaggregation result", distserveScenario)
	}
	if len(s.Disagg.TransferTimesS) == 0 {
		return nil, fmt.Errorf("%s: the run moved no KV cache (no request reached a decode replica)", distserveScenario)
	}
	return s, nil
}

// distserveTransferShare is the mean transfer's share of the mean
// end-to-end time, percent, as DistServe's latency breakdown states it.
func distserveTransferShare(s *sim.LLMSummary) float64 {
	return 100 * s.Disagg.TransferMeanS / s.Result.E2E.Mean.Mean
}

// shareUnder is the percentage of the ascending times ts below bound.
func shareUnder(ts []float64, bound float64) float64 {
	if len(ts) == 0 {
		return 0
	}
	n := sort.SearchFloat64s(ts, bound)
	return 100 * float64(n) / float64(len(ts))
}

// distserveMeets is DistServe's test of a rate: the P90 TTFT and the
// P90 TPOT each within their bound, judged apart (simdistserve's
// run_experiment), and no request refused. This section's own SLO asks
// for both together of 90% of requests, which is stricter; `conspirator
// llm capacity` searches by that one.
func distserveMeets(s *sim.LLMSummary) bool {
	res := s.Result
	return res.TTFT.P90.Mean <= s.SLO.TTFTS && res.TPOT.P90.Mean <= s.SLO.TPOTS && res.Rejected.Mean == 0
}

// distserveProbe is one rate of the goodput search.
type distserveProbe struct {
	Rate  float64 // requests/s, llm.workload.synthetic.rate
	Meets bool
	S     *sim.LLMSummary
}

// distserveGoodputSearch finds the highest Poisson rate at which
// llm/distserve meets DistServe's test: from the scenario's own rate it
// doubles (or halves) until the test changes, then bisects geometrically
// steps times. It returns the highest rate meeting it, the lowest
// missing it, and every probe in order. Every probe is a deterministic
// run, so the search is.
func distserveGoodputSearch(r *Runner, steps int, sets ...string) (lo, hi distserveProbe, probes []distserveProbe, err error) {
	load := r.Load
	if load == nil {
		load = LoadBuiltin
	}
	sc, err := load(distserveScenario, sets)
	if err != nil {
		return lo, hi, nil, fmt.Errorf("%s: %w", distserveScenario, err)
	}
	if sc.LLM == nil {
		return lo, hi, nil, fmt.Errorf("%s: no llm section", distserveScenario)
	}
	// The summary gives each latency's P90: DistServe's test at 90%
	// attainment, the only quantile it can judge here.
	if q := sc.LLM.SLO.Quantile; q != 0.9 {
		return lo, hi, nil, fmt.Errorf("%s: slo.quantile %g; DistServe's test is at 0.9 (each latency's P90)", distserveScenario, q)
	}
	base := float64(sc.LLM.Workload.Synthetic.Rate)
	if !(base > 0) {
		return lo, hi, nil, fmt.Errorf("%s: the workload has no synthetic rate to search from", distserveScenario)
	}
	probe := func(rate float64) (distserveProbe, error) {
		s, err := distserveRun(r, append(append([]string{}, sets...), fmt.Sprintf("llm.workload.synthetic.rate=%g/s", rate))...)
		if err != nil {
			return distserveProbe{}, err
		}
		p := distserveProbe{Rate: rate, Meets: distserveMeets(s), S: s}
		probes = append(probes, p)
		return p, nil
	}
	first, err := probe(base)
	if err != nil {
		return lo, hi, probes, err
	}
	if first.Meets {
		lo = first
		for i := 0; ; i++ {
			if i == distserveMaxDoublings {
				return lo, hi, probes, fmt.Errorf("%s: the SLO is met up to %g requests/s, %d times the scenario's rate", distserveScenario, lo.Rate, 1<<distserveMaxDoublings)
			}
			p, err := probe(2 * lo.Rate)
			if err != nil {
				return lo, hi, probes, err
			}
			if !p.Meets {
				hi = p
				break
			}
			lo = p
		}
	} else {
		hi = first
		for i := 0; ; i++ {
			if i == distserveMaxDoublings {
				return lo, hi, probes, fmt.Errorf("%s: the SLO is missed down to %g requests/s, 1/%d of the scenario's rate", distserveScenario, hi.Rate, 1<<distserveMaxDoublings)
			}
			p, err := probe(hi.Rate / 2)
			if err != nil {
				return lo, hi, probes, err
			}
			if p.Meets {
				lo = p
				break
			}
			hi = p
		}
	}
	for range steps {
		p, err := probe(math.Sqrt(lo.Rate * hi.Rate))
		if err != nil {
			return lo, hi, probes, err
		}
		if p.Meets {
			lo = p
		} else {
			hi = p
		}
	}
	return lo, hi, probes, nil
}

// runDistServe runs llm/distserve at its own rate with the pools on one
// server (KV over NVLink) and on two (over the 25 Gb/s link): the
// transfer's share of the mean end-to-end time and the share of
// transfers under 30 ms; then searches the highest rate meeting
// DistServe's SLO test and divides it by the GPUs the pools take.
func runDistServe(r *Runner, quick bool) ([]Figure, error) {
	nv, err := distserveRun(r)
	if err != nil {
		return nil, err
	}
	x, err := distserveRun(r, distserveCrossNode...)
	if err != nil {
		return nil, err
	}
	if nv.Disagg.NVLink != nv.Disagg.Transfers || x.Disagg.Crossed != x.Disagg.Transfers {
		return nil, fmt.Errorf("%s: want every transfer over NVLink on one server (%d of %d) and over the link on two (%d of %d)", distserveScenario, nv.Disagg.NVLink, nv.Disagg.Transfers, x.Disagg.Crossed, x.Disagg.Transfers)
	}
	floor, err := distserveLinkFloor(r, x)
	if err != nil {
		return nil, err
	}
	steps := distserveSteps
	if quick {
		steps = distserveQuickSteps
	}
	lo, hi, probes, err := distserveGoodputSearch(r, steps)
	if err != nil {
		return nil, err
	}
	gpus := lo.S.GPUs
	if gpus < 1 {
		return nil, fmt.Errorf("%s: the pools take no GPU", distserveScenario)
	}
	fig := func(key, label string, v float64, unit string, dec int) Figure {
		return Figure{Key: key, Label: label, Value: v, Unit: unit, Decimals: dec, Seeds: nv.Seeds}
	}
	return []Figure{
		fig("share_nvlink", "NVLink", distserveTransferShare(nv), "%", 3),
		fig("under30_nvlink", "NVLink, under 30 ms", shareUnder(nv.Disagg.TransferTimesS, distserveBound), "%", 1),
		fig("transfer_nvlink_ms", "NVLink transfer", 1e3*nv.Disagg.TransferMeanS, " ms", 1),
		fig("share_25g", "25 Gb/s", distserveTransferShare(x), "%", 2),
		fig("under30_25g", "25 Gb/s, under 30 ms", shareUnder(x.Disagg.TransferTimesS, distserveBound), "%", 1),
		fig("transfer_25g_ms", "25 Gb/s transfer", 1e3*x.Disagg.TransferMeanS, " ms", 0),
		fig("floor_25g_ms", "25 Gb/s, one transfer alone at line rate", 1e3*floor, " ms", 0),
		fig("base_tpot_p90_ms", "TPOT p90 at the scenario's rate", 1e3*nv.Result.TPOT.P90.Mean, " ms", 1),
		fig("decode_kv_tokens", "the decode replica's KV cache", float64(lo.S.KVTokens), " tokens", 0),
		fig("goodput_per_gpu", "per GPU", lo.Rate/float64(gpus), "/s", 2),
		fig("gpus", "GPUs of the pools", float64(gpus), "", 0),
		fig("goodput_rate", "highest rate meeting the SLO", lo.Rate, "/s", 2),
		fig("missed_rate", "lowest rate missing it", hi.Rate, "/s", 2),
		fig("missed_ttft_p90_ms", "TTFT p90 there", 1e3*hi.S.Result.TTFT.P90.Mean, " ms", 0),
		fig("missed_tpot_p90_ms", "TPOT p90 there", 1e3*hi.S.Result.TPOT.P90.Mean, " ms", 0),
		fig("missed_wait_ms", "mean wait for decode blocks there", 1e3*hi.S.Disagg.WaitMeanS, " ms", 0),
		fig("steps", "bisection steps", float64(steps), "", 0),
		fig("probes", "runs of the search", float64(len(probes)), "", 0),
	}, nil
}

// distserveLinkFloor is the shortest a cross-server transfer of the run
// can take: its mean bytes (every request has the same prompt) at the
// scenario's line rate, no efficiency, sharing or posting work.
func distserveLinkFloor(r *Runner, x *sim.LLMSummary) (float64, error) {
	load := r.Load
	if load == nil {
		load = LoadBuiltin
	}
	sc, err := load(distserveScenario, distserveCrossNode)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", distserveScenario, err)
	}
	if sc.LLM.Disagg.LineRate == nil {
		return 0, fmt.Errorf("%s: llm.disagg.line_rate is the NIC's; the anchor needs it set (25 Gb/s)", distserveScenario)
	}
	rate := float64(*sc.LLM.Disagg.LineRate) * float64(sc.LLM.Disagg.NICs)
	if !(rate > 0) {
		return 0, fmt.Errorf("%s: llm.disagg.line_rate is the NIC's; the anchor needs it set (25 Gb/s)", distserveScenario)
	}
	return x.Disagg.GBMoved * 1e9 / float64(x.Disagg.Transfers) / rate, nil
}

// distserveVerdictOf is a goodput's verdict against the published one,
// within distserveTolerance of it.
func distserveVerdictOf(f Figure) string {
	return withinShare(f, distserveGoodput, distserveTolerance)
}

// judgeDistServe: the transfer part reproduces where, over NVLink, the
// share is under 0.1% and over 95% of transfers are under 30 ms; the
// goodput where it is within 25% of 1.56/s per GPU. Both read
// "reproduced", neither "not reproduced", one "in part".
func judgeDistServe(fs map[string]Figure) (string, string, string) {
	shareNV, underNV := fs["share_nvlink"], fs["under30_nvlink"]
	vt := "not reproduced"
	if shareNV.Value < distserveShare && underNV.Value > distserveUnder {
		vt = "reproduced"
	}
	g := fs["goodput_per_gpu"]
	vg := distserveVerdictOf(g)
	text := fmt.Sprintf("KV %s of end-to-end time over NVLink, %s under 30 ms (%s); %s over 25 Gb/s (%s a transfer); goodput %s per GPU (%s)",
		shareNV.Text(), underNV.Text(), vt, fs["share_25g"].Text(), fs["transfer_25g_ms"].Text(), g.Text(), vg)
	verdict := "in part"
	switch {
	case vt == "reproduced" && vg == "reproduced":
		verdict = "reproduced"
	case vt != "reproduced" && vg != "reproduced":
		verdict = "not reproduced"
	}
	// What bound the search: the first rate missing the test, by which
	// P90 passed its bound.
	bound := "TTFT"
	if fs["missed_tpot_p90_ms"].Value > 1e3*distserveTPOT {
		bound = "TPOT"
	}
	note := fmt.Sprintf("Goodput %s over %s GPUs; over 25 Gb/s %s of transfers under 30 ms. llm/distserve: OPT-13B, one TP-2 prefill and one TP-1 decode A100-80GB (DistServe's simulator unit: its per-GPU rate is over these %s GPUs, not the node's 4), the whole KV after the prompt; every request of ShareGPT's mean lengths (759 prompt, 186 output tokens, fixed: a lognormal of ShareGPT's spread passes OPT's 2,048-token context), 1,000 Poisson requests, one seed. "+
		"Transfer: at the scenario's rate, the mean transfer over the mean end-to-end time; the published share is OPT-175B's (96 layers of 96 heads: 4.7 MB of KV a token, 5.8x OPT-13B's) with NVLink carrying it. Across servers each transfer takes at least %s at 25 Gb/s (%s on average, transfers sharing the link), so none is under 30 ms: the published share rests on the placement, not the link. "+
		"Goodput: the highest Poisson rate with P90 TTFT <= 200 ms and P90 TPOT <= 100 ms each (DistServe's test; the scenario's SLO needs both for 90%% of requests, a little stricter), by doubling from the scenario's rate and then %s geometric bisection steps (%s runs). At %s, the first rate missing it, %s binds (TTFT p90 %s, TPOT p90 %s; transfers wait %s on average for the decode replica's %s of KV cache). "+
		"Ours is above DistServe's: hw/llm's A100 roofline gives a TPOT p90 of %s at 3/s where DistServe's own recorded run of this layout at 3/s (its repository's alignment data, 300 ShareGPT requests) has 43.5 ms (TTFT p90 153 ms; it meets the test at 6/s, 2.0/s per GPU, and misses at 7.5/s on TTFT), and fixed lengths leave out ShareGPT's long prompts (P90 TTFT) and long outputs (KV held); its simulator, which gave 1.56, times steps with a fitted profile",
		fs["goodput_rate"].Text(), fs["gpus"].Text(), fs["under30_25g"].Text(), fs["gpus"].Text(), fs["floor_25g_ms"].Text(), fs["transfer_25g_ms"].Text(), fs["steps"].Text(), fs["probes"].Text(),
		fs["missed_rate"].Text(), bound, fs["missed_ttft_p90_ms"].Text(), fs["missed_tpot_p90_ms"].Text(), fs["missed_wait_ms"].Text(), fs["decode_kv_tokens"].Text(), fs["base_tpot_p90_ms"].Text())
	return text, verdict, note
}
