package datapath

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/units"
)

// The paper's data-path claims (conspirator.md, "Headline results"), checked
// on the default configuration, which is built from sourced parameters, not
// fitted to them, and what of them holds:
//   - the path order gpudirect < conspirator < host-rdma < tcp holds on the
//     median end-to-end time. On the mean, gpudirect falls behind
//     conspirator: its clients pick a GPU round-robin, blind to load, and a
//     request that lands behind another waits a whole 626 us TensorRT
//     batch; conspirator's SoC picks the least-loaded GPU. The rest of the
//     order holds on the mean too;
//   - conspirator is faster than host-rdma, but by about 6%, not the
//     paper's 15%, with the measured TensorRT INT8 times and INT8 inputs
//     (gpu.TensorRTTime): the data path is then a smaller share of a
//     request than the paper's gap implies. The test accepts 3-10%, so
//     that the README's statement stays true;
//   - the gap grows with background CPU load (TestGapWidensWithBackgroundLoad).
func TestPaperOrderingAndGap(t *testing.T) {
	res, err := Run(Defaults(), 1)
	if err != nil {
		t.Fatal(err)
	}
	p50 := func(p string) float64 { return float64(res.Path(p).Latency.P50) }
	mean := func(p string) float64 { return float64(res.Path(p).Latency.Mean) }
	order := []string{PathGPUDirect, PathConspirator, PathHostRDMA, PathTCP}
	for i := 1; i < len(order); i++ {
		if !(p50(order[i-1]) < p50(order[i])) {
			t.Errorf("median latency %s = %.1f us should be below %s = %.1f us", order[i-1], p50(order[i-1]), order[i], p50(order[i]))
		}
		if i >= 2 && !(mean(order[i-1]) < mean(order[i])) {
			t.Errorf("mean latency %s = %.1f us should be below %s = %.1f us", order[i-1], mean(order[i-1]), order[i], mean(order[i]))
		}
	}
	if !(mean(PathGPUDirect) > mean(PathConspirator)) || !(float64(res.Path(PathGPUDirect).Latency.P99) > float64(res.Path(PathConspirator).Latency.P99)) {
		t.Errorf("gpudirect mean %.1f, p99 %.1f us; conspirator %.1f, %.1f: the load-blind GPU choice no longer costs gpudirect its tail (update the comment and README)",
			mean(PathGPUDirect), float64(res.Path(PathGPUDirect).Latency.P99), mean(PathConspirator), float64(res.Path(PathConspirator).Latency.P99))
	}
	gap, err := Gap(res)
	if err != nil {
		t.Fatal(err)
	}
	if gap < 3 || gap > 10 {
		t.Errorf("conspirator vs host-rdma at 0%% load: %.1f%% lower latency; the README says about 6%% (paper 15%%)", gap)
	}
	for _, p := range res.Paths {
		if p.Unstable {
			t.Errorf("%s flagged unstable in the default closed-loop run: %s", p.Name, p.UnstableReason)
		}
	}
}

func TestGapWidensWithBackgroundLoad(t *testing.T) {
	var gaps []float64
	for u := 0; u <= 90; u += 10 {
		cfg := Defaults()
		cfg.Paths = []string{PathHostRDMA, PathConspirator}
		cfg.Host.BackgroundLoad = units.Fraction(float64(u) / 100)
		res, err := Run(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		g, err := Gap(res)
		if err != nil {
			t.Fatal(err)
		}
		gaps = append(gaps, g)
	}
	t.Logf("gap at 0%%..90%% background load: %.1f", gaps)
	for i := 1; i < len(gaps); i++ {
		if !(gaps[i] > gaps[i-1]) {
			t.Errorf("gap at %d%% load (%.2f%%) is not above the gap at %d%% (%.2f%%)", 10*i, gaps[i], 10*(i-1), gaps[i-1])
		}
	}
	if !(gaps[8] > gaps[0]) {
		t.Errorf("gap at 80%% (%.1f%%) not above gap at 0%% (%.1f%%)", gaps[8], gaps[0])
	}
}

// Same configuration and seed: byte-identical JSON and CSV.
func TestRunIsDeterministic(t *testing.T) {
	cfg := Defaults()
	cfg.Clients.Requests = 200
	out := func() []byte {
		res, err := Run(cfg, 42)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := json.NewEncoder(&b).Encode(res); err != nil {
			t.Fatal(err)
		}
		if err := res.WriteCSV(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a, b := out(), out()
	if !bytes.Equal(a, b) {
		t.Fatal("two runs with the same seed differ")
	}
	js := func(seed uint64) string {
		res, err := Run(cfg, seed)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		return string(b)
	}
	if js(42) == js(43) {
		t.Error("a different seed gave the same result: the seed is not used")
	}
}

// The JSON form is the public contract: check its keys.
func TestResultJSONContract(t *testing.T) {
	cfg := Defaults()
	cfg.Clients.Requests = 100
	res, err := Run(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths []map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Paths) != 4 {
		t.Fatalf("%d paths in JSON, want 4", len(doc.Paths))
	}
	for _, key := range []string{"name", "latency_us", "throughput_rps", "host_cpu_us_per_request", "soc_utilization", "gpu_utilization", "dropped", "unstable", "stages_us"} {
		if _, ok := doc.Paths[0][key]; !ok {
			t.Errorf("key %q missing from a path's JSON", key)
		}
	}
	var lat map[string]float64
	if err := json.Unmarshal(doc.Paths[3]["latency_us"], &lat); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"mean", "p50", "p95", "p99", "ci95_mean"} {
		if _, ok := lat[key]; !ok {
			t.Errorf("latency_us.%s missing", key)
		}
	}
	if !(lat["p50"] <= lat["p95"] && lat["p95"] <= lat["p99"]) {
		t.Errorf("quantiles out of order: %v", lat)
	}
}
