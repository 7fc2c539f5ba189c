package reproduce

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/kvpath"
	"github.com/conspirator-sim/conspirator/internal/shareddata"
)

func mooncakeFigs(t *testing.T) map[string]Figure {
	t.Helper()
	figs, err := mooncakeTransferFigures()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]Figure{}
	for _, f := range figs {
		m[f.Key] = f
	}
	return m
}

// The transfer rates against bounds derived by hand from the catalog:
// no path beats the wire (nics x line rate), the transfer engine over
// 4 x 200 Gb/s is bound by the NICs' goodput (4 x 25 GB/s x 0.95, less
// the 1.3 us of latency over 40 GB), and tcp by host memory (one
// socket's DDR5, 307.2 GB/s, half of it left to staging, four passes a
// byte: 38.4 GB/s), which no RDMA path is slower than.
func TestMooncakeTransferBounds(t *testing.T) {
	fs := mooncakeFigs(t)
	wire := map[string]float64{"4x200": 100, "8x400": 400} // GB/s
	for node, w := range wire {
		te, hr, tcp := fs["te_"+node], fs["hostrdma_"+node], fs["tcp_"+node]
		for _, f := range []Figure{te, hr, tcp} {
			if !(f.Value > 0) || f.Value > w {
				t.Errorf("%s: %v GB/s, want in (0, %v], the wire", f.Label, f.Value, w)
			}
		}
		if tcp.Value > 38.4+1e-9 {
			t.Errorf("%s: %v GB/s, above host memory's 38.4 GB/s for tcp", tcp.Label, tcp.Value)
		}
		if te.Value < hr.Value || hr.Value < tcp.Value {
			t.Errorf("%s: gpudirect %v, host-rdma %v, tcp %v GB/s: want gpudirect >= host-rdma >= tcp", node, te.Value, hr.Value, tcp.Value)
		}
		if r := fs["ratio_"+node]; math.Abs(r.Value-te.Value/tcp.Value) > 1e-9 {
			t.Errorf("%s: ratio %v, want %v / %v", node, r.Value, te.Value, tcp.Value)
		}
	}
	want := 40e9 / (40e9/95e9 + 1.3e-6) / 1e9
	if got := fs["te_4x200"].Value; math.Abs(got-want) > 1e-3 {
		t.Errorf("transfer engine at 4 x 200 Gb/s: %v GB/s, want %v (the NICs' goodput)", got, want)
	}
	if !reflect.DeepEqual(fs, mooncakeFigs(t)) {
		t.Error("two computations of the transfer figures differ")
	}
}

// One posting thread would bind 40 GB of 64 KiB slices at 0.8 us each
// (0.49 s, 82 GB/s); the engine's workers spread it, so a stripe count
// of one and a single thread give the slower, hand-derived figure.
func TestStripedAloneControl(t *testing.T) {
	h, err := mooncakeHardware(mooncakeNodes[1])
	if err != nil {
		t.Fatal(err)
	}
	p, err := h.Plan(kvpath.GPUDirect, kvpath.Transfer{Bytes: 40e9})
	if err != nil {
		t.Fatal(err)
	}
	one, _ := stripedAlone(p, 40e9, 8, 1)
	ops := math.Ceil(40e9 / 65536)
	if want := ops*0.8e-6 + 1.3e-6; math.Abs(one.Seconds()-want) > 1e-6 {
		t.Errorf("one thread: %v s, want %v (posting %v slices)", one.Seconds(), want, ops)
	}
	many, rate := stripedAlone(p, 40e9, 8, 16)
	if many >= one || rate != 380e9 {
		t.Errorf("16 threads: %v at %v B/s, want faster than %v at the NICs' 380e9", many, rate, one)
	}
}

func TestMooncakeKneeCommands(t *testing.T) {
	cs := mooncakeKneeCommands()
	if len(cs) != len(mooncakeKneeRates) || cs[3] != "conspirator run llm/mooncake-knee --set llm.disagg.line_rate=100Gbps" {
		t.Errorf("commands: %q", cs)
	}
}

func TestCrossing(t *testing.T) {
	rates := []float64{10, 25, 100, 400}
	for _, c := range []struct {
		y    []float64
		want float64
		ok   bool
	}{
		{[]float64{3, 2.5, 1.5, 1}, math.Exp(math.Log(25) + 0.5*(math.Log(100)-math.Log(25))), true}, // halfway in log: 50
		{[]float64{3, 1, 1, 1}, math.Exp(math.Log(10) + 0.5*(math.Log(25)-math.Log(10))), true},
		{[]float64{1.9, 1.8, 1.5, 1}, 0, false},
		{[]float64{3, 3, 3, 2.1}, 0, false},
		{[]float64{3, 1.5, 2.5, 1}, 100 * math.Pow(4, 1.0/3), true}, // the last rise counts: a third of the way from 2.5 to 1
	} {
		got, ok := crossing(rates, c.y, 2)
		if ok != c.ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%v: %v, %v; want %v, %v", c.y, got, ok, c.want, c.ok)
		}
	}
}

func TestJudgeMooncakeTransfer(t *testing.T) {
	fs := map[string]Figure{
		"te_4x200": {Value: 90, Decimals: 1}, "ratio_4x200": {Value: 2.4, Unit: "x", Decimals: 1},
		"te_8x400": {Value: 200, Decimals: 1}, "ratio_8x400": {Value: 4.6, Unit: "x", Decimals: 1},
		"ttft_25": {Label: "25 Gb/s", Value: 3, Decimals: 2}, "ttft_100": {Label: "100 Gb/s", Value: 1.5, Decimals: 2},
		"knee_gbps": {Value: 70},
	}
	if _, v, _ := judgeMooncakeTransfer(fs); v != "reproduced" {
		t.Errorf("every part within its tolerance: %q", v)
	}
	fs["te_8x400"] = Figure{Value: 380, Decimals: 1}
	if text, v, _ := judgeMooncakeTransfer(fs); v != "in part" || !strings.Contains(text, "larger") {
		t.Errorf("8x400 twice the published rate: %q, %q", v, text)
	}
	delete(fs, "knee_gbps")
	fs["te_4x200"], fs["te_8x400"] = Figure{Value: 30, Decimals: 1}, Figure{Value: 30, Decimals: 1}
	fs["ratio_4x200"], fs["ratio_8x400"] = Figure{Value: 1, Unit: "x", Decimals: 1}, Figure{Value: 1, Unit: "x", Decimals: 1}
	if text, v, _ := judgeMooncakeTransfer(fs); v != "not reproduced" || !strings.Contains(text, "no crossing") {
		t.Errorf("nothing within tolerance: %q, %q", v, text)
	}
}

// The knee runs llm/mooncake-knee (it needs Mooncake's trace): mean TTFT
// does not rise with the link rate (the fetches only get shorter; 1% for
// the routing that a fetch's end reorders), and two runs agree exactly.
func TestMooncakeKnee(t *testing.T) {
	if testing.Short() {
		t.Skip("runs llm/mooncake-knee five times (-short)")
	}
	root, err := shareddata.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root) // the scenario names ../shared/... from there
	figs, err := runMooncakeTransfer(&Runner{}, true)
	var md *MissingData
	if errors.As(err, &md) {
		t.Skip(md.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	var prev *Figure
	for i := range figs {
		f := &figs[i]
		if !strings.HasPrefix(f.Key, "ttft_") {
			continue
		}
		if !(f.Value > 0) {
			t.Errorf("%s: mean TTFT %v s", f.Label, f.Value)
		}
		if prev != nil && f.Value > prev.Value*1.01 {
			t.Errorf("mean TTFT rises with the link rate: %s %v s after %s %v s", f.Label, f.Value, prev.Label, prev.Value)
		}
		prev = f
	}
	if prev == nil {
		t.Fatal("no TTFT figure")
	}
	again, err := (&Runner{}).scenario("llm/mooncake-knee", mooncakeKneeSets(mooncakeKneeRatesQuick[0])...)
	if err != nil {
		t.Fatal(err)
	}
	var first float64
	for _, f := range figs {
		if f.Key == fmt.Sprintf("ttft_%g", mooncakeKneeRatesQuick[0]) {
			first = f.Value
		}
	}
	if got := again.Summary.LLM.Result.TTFT.Mean.Mean; got != first {
		t.Errorf("a second run at %g Gb/s: mean TTFT %v s, the first %v s", mooncakeKneeRatesQuick[0], got, first)
	}
}
