package reproduce

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// OPT-13B's KV cache by hand (facebook/opt-13b config.json: 40 layers,
// 40 heads of 128, FP16): K and V of every layer, 2 x 40 x 40 x 128 x 2
// bytes a token; llm/distserve's prompts are 759 tokens.
const (
	optKVPerToken   = 2 * 40 * 40 * 128 * 2 // 819,200 bytes
	distservePrompt = 759
	distserveKV     = optKVPerToken * distservePrompt // 621,772,800 bytes
	// linkBytesPerSec is 25 Gb/s; nvlinkBytesPerSec one A100's NVLink in
	// one direction (A100 datasheet: 600 GB/s both ways).
	linkBytesPerSec   = 25e9 / 8
	nvlinkBytesPerSec = 300e9
)

// Every transfer moves one request's KV, and none beats its wire: over
// 25 Gb/s each takes at least 621.8 MB / 3.125 GB/s = 199 ms, so none is
// under DistServe's 30 ms, and over NVLink at least 2.07 ms.
func TestDistServeTransferBounds(t *testing.T) {
	r := &Runner{}
	nv, err := distserveRun(r)
	if err != nil {
		t.Fatal(err)
	}
	x, err := distserveRun(r, distserveCrossNode...)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		ts    []float64
		n     int
		gb    float64
		floor float64
	}{
		{"nvlink", nv.Disagg.TransferTimesS, nv.Disagg.NVLink, nv.Disagg.GBMoved, distserveKV / nvlinkBytesPerSec},
		{"25 Gb/s", x.Disagg.TransferTimesS, x.Disagg.Crossed, x.Disagg.GBMoved, distserveKV / linkBytesPerSec},
	} {
		if c.n != len(c.ts) || c.n != nv.Requests {
			t.Errorf("%s: %d transfers over the path, %d times, want one for each of %d requests", c.name, c.n, len(c.ts), nv.Requests)
		}
		if want := float64(c.n) * distserveKV / 1e9; math.Abs(c.gb-want) > 1e-9*want {
			t.Errorf("%s: %v GB moved, want %d x %d bytes = %v", c.name, c.gb, c.n, distserveKV, want)
		}
		for i, v := range c.ts {
			if v < c.floor {
				t.Fatalf("%s: transfer %d took %v s, under the wire's %v s", c.name, i, v, c.floor)
			}
			if i > 0 && v < c.ts[i-1] {
				t.Fatalf("%s: times not ascending at %d", c.name, i)
			}
		}
	}
	if got := shareUnder(x.Disagg.TransferTimesS, distserveBound); got != 0 {
		t.Errorf("25 Gb/s: %v%% of transfers under 30 ms; none can be (each at least %v s)", got, distserveKV/linkBytesPerSec)
	}
	floor, err := distserveLinkFloor(r, x)
	if err != nil {
		t.Fatal(err)
	}
	if want := distserveKV / linkBytesPerSec; math.Abs(floor-want) > 1e-12 {
		t.Errorf("link floor %v s, want %v", floor, want)
	}
	// The share is the mean transfer over the mean end-to-end time, which
	// holds it: a request's end-to-end time includes its transfer.
	for _, s := range []float64{distserveTransferShare(nv), distserveTransferShare(x)} {
		if !(s > 0 && s < 100) {
			t.Errorf("transfer share %v%%, want in (0, 100)", s)
		}
	}
}

func TestDistServeShareUnder(t *testing.T) {
	ts := []float64{0.001, 0.010, 0.030, 0.031, 0.5}
	for _, c := range []struct {
		bound, want float64
	}{{0.0005, 0}, {0.030, 40}, {0.0301, 60}, {1, 100}} {
		if got := shareUnder(ts, c.bound); got != c.want {
			t.Errorf("under %v: %v%%, want %v%% (strictly under)", c.bound, got, c.want)
		}
	}
	if got := shareUnder(nil, 1); got != 0 {
		t.Errorf("no transfers: %v%%, want 0", got)
	}
}

// The search brackets the rate: its highest rate meets DistServe's test,
// its lowest missing rate and a rate 10% above the highest miss it, the
// bracket is as narrow as its steps make it, and two searches (every
// figure of the row) are the same.
func TestDistServeGoodputSearch(t *testing.T) {
	if testing.Short() {
		t.Skip("about 20 runs of llm/distserve (-short)")
	}
	r := &Runner{}
	figs, err := runDistServe(r, true)
	if err != nil {
		t.Fatal(err)
	}
	again, err := runDistServe(&Runner{}, true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(figs, again) {
		t.Errorf("two runs differ:\n%v\n%v", figs, again)
	}
	fs := map[string]Figure{}
	for _, f := range figs {
		fs[f.Key] = f
	}
	lo, hi := fs["goodput_rate"].Value, fs["missed_rate"].Value
	if !(lo > 0 && hi > lo) || hi/lo > math.Pow(2, 1/math.Pow(2, distserveQuickSteps))*(1+1e-9) {
		t.Fatalf("bracket [%v, %v]: want 0 < lo < hi <= lo x 2^(1/%d)", lo, hi, 1<<distserveQuickSteps)
	}
	if g := fs["gpus"].Value; g != 3 {
		t.Errorf("%v GPUs, want 3: a TP-2 prefill and a TP-1 decode replica", g)
	}
	if got, want := fs["goodput_per_gpu"].Value, lo/3; got != want {
		t.Errorf("per GPU %v, want %v / 3", got, lo)
	}
	for _, c := range []struct {
		rate float64
		want bool
	}{{lo, true}, {hi, false}, {1.1 * lo, false}} {
		s, err := distserveRun(r, fmt.Sprintf("llm.workload.synthetic.rate=%g/s", c.rate))
		if err != nil {
			t.Fatal(err)
		}
		if got := distserveMeets(s); got != c.want {
			t.Errorf("rate %v/s: meets %v (TTFT p90 %v s, TPOT p90 %v s), want %v", c.rate, got, s.Result.TTFT.P90.Mean, s.Result.TPOT.P90.Mean, c.want)
		}
		// A rate meeting the test refused no request.
		if c.want && s.Result.Rejected.Mean != 0 {
			t.Errorf("rate %v/s meets with %v refused", c.rate, s.Result.Rejected.Mean)
		}
	}
	text, verdict, note := judgeDistServe(fs)
	if text == "" || note == "" || verdict == "" {
		t.Errorf("judge gave %q, %q, %q", text, verdict, note)
	}
}

func TestJudgeDistServe(t *testing.T) {
	base := map[string]Figure{
		"share_nvlink": {Value: 0.05, Unit: "%", Decimals: 3}, "under30_nvlink": {Value: 100, Unit: "%", Decimals: 1},
		"share_25g": {Value: 4, Unit: "%", Decimals: 2}, "under30_25g": {Value: 0, Unit: "%", Decimals: 1},
		"goodput_per_gpu": {Value: 1.56, Unit: "/s", Decimals: 2}, "goodput_rate": {Value: 4.68, Unit: "/s", Decimals: 2},
		"gpus": {Value: 3}, "missed_tpot_p90_ms": {Value: 150, Unit: " ms"}, "missed_ttft_p90_ms": {Value: 120, Unit: " ms"},
	}
	with := func(key string, v float64) map[string]Figure {
		m := map[string]Figure{}
		for k, f := range base {
			m[k] = f
		}
		f := m[key]
		f.Value = v
		m[key] = f
		return m
	}
	for _, c := range []struct {
		name string
		fs   map[string]Figure
		want string
	}{
		{"both", base, "reproduced"},
		{"goodput 25% above", with("goodput_per_gpu", 1.56*1.249), "reproduced"},
		{"goodput 26% above", with("goodput_per_gpu", 1.56*1.26), "in part"},
		{"goodput 26% below", with("goodput_per_gpu", 1.56*0.74), "in part"},
		{"share at the bound", with("share_nvlink", 0.1), "in part"},
		{"95% under, not over", with("under30_nvlink", 95), "in part"},
	} {
		_, v, _ := judgeDistServe(c.fs)
		if v != c.want {
			t.Errorf("%s: %q, want %q", c.name, v, c.want)
		}
	}
	both := with("goodput_per_gpu", 3)
	both["share_nvlink"] = Figure{Value: 1, Unit: "%", Decimals: 3}
	if text, v, _ := judgeDistServe(both); v != "not reproduced" || !strings.Contains(text, "larger") {
		t.Errorf("both missed: %q (%s), want not reproduced with the goodput larger", v, text)
	}
	if v := distserveVerdictOf(Figure{Value: 1.0}); v != "smaller" {
		t.Errorf("1.0/s per GPU: %q, want smaller", v)
	}
}
