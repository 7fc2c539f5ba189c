package nodealloc

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func node(model string, cpu int64, left ...int64) Node {
	n := NewNode("n", model, cpu, 1<<20, len(left))
	copy(n.GPULeft, left)
	return n
}

// Fits is CPU and memory for every pod, plus an accepted model and enough
// devices with the share left for a GPU pod.
func TestFits(t *testing.T) {
	n := node("T4", 8000, 1000, 300)
	cases := []struct {
		name string
		p    Pod
		want bool
	}{
		{"cpu-only", Pod{CPU: 8000}, true},
		{"too much cpu", Pod{CPU: 8001}, false},
		{"too much memory", Pod{CPU: 1, Mem: 1<<20 + 1}, false},
		{"share fits the small device", Pod{CPU: 1, NumGPU: 1, GPUMilli: 300}, true},
		{"share fits only the free device", Pod{CPU: 1, NumGPU: 1, GPUMilli: 301}, true},
		{"two whole GPUs", Pod{CPU: 1, NumGPU: 2, GPUMilli: 1000}, false},
		{"one whole GPU", Pod{CPU: 1, NumGPU: 1, GPUMilli: 1000}, true},
		{"type accepted", Pod{CPU: 1, NumGPU: 1, GPUMilli: 100, Types: []string{"V100M16", "T4"}}, true},
		{"type refused", Pod{CPU: 1, NumGPU: 1, GPUMilli: 100, Types: []string{"V100M16"}}, false},
	}
	for _, c := range cases {
		if got := Fits(&n, &c.p); got != c.want {
			t.Errorf("%s: Fits = %v, want %v", c.name, got, c.want)
		}
	}
	cpuNode := NewNode("c", "", 8000, 1024, 0)
	if Fits(&cpuNode, &Pod{CPU: 1, NumGPU: 1, GPUMilli: 100}) || !Fits(&cpuNode, &Pod{CPU: 1}) {
		t.Error("a CPU-only node must take CPU pods only")
	}
}

// Device choice: best fit takes the device with the least left that fits
// (the first on ties), a whole-GPU pod the first free devices; Place takes
// the resources.
func TestGPUsAndPlace(t *testing.T) {
	n := node("T4", 8000, 1000, 400, 600, 400, 1000)
	share := Pod{CPU: 1000, Mem: 10, NumGPU: 1, GPUMilli: 350}
	if g := bestFitGPUs(&n, &share, nil); !slices.Equal(g, []int{1}) {
		t.Errorf("best fit of 350 on [1000 400 600 400 1000] = %v, want [1]", g)
	}
	whole := Pod{CPU: 1000, NumGPU: 2, GPUMilli: 1000}
	if g := bestFitGPUs(&n, &whole, nil); !slices.Equal(g, []int{0, 4}) {
		t.Errorf("two whole GPUs = %v, want [0 4]", g)
	}
	Place(&n, &share, []int{1})
	if n.GPULeft[1] != 50 || n.CPULeft != 7000 || n.MemLeft != 1<<20-10 || n.GPULeftTotal() != 3050 || n.affinity["share-gpu"] != 1 {
		t.Errorf("after placing: %+v", n)
	}
}

// Hand-computed scores of each policy.
func TestScores(t *testing.T) {
	empty8 := node("T4", 96000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000)
	half := node("T4", 64000, 500, 1000)
	share := Pod{CPU: 4000, NumGPU: 1, GPUMilli: 500}
	whole := Pod{CPU: 4000, NumGPU: 1, GPUMilli: 1000}

	// dot-product: (64000/128000)(4000/128000) + (1500/8000)(500/8000)
	// = 0.015625 + 0.01171875 = 0.02734375; 100 (1 - 0.0136719) = 98.63.
	if s := (dotProduct{}).Score(&half, &share); s != 98 {
		t.Errorf("dot-product = %d, want 98", s)
	}
	// best-fit: free after = (60000/128000 + 1000/8000)/2 = 0.296875;
	// 100 (1 - 0.296875) = 70.3.
	if s := (bestFit{}).Score(&half, &share); s != 70 {
		t.Errorf("best-fit = %d, want 70", s)
	}
	// gpu-packing: an empty 8-GPU node: max(33-8, 8) = 25. On half, the
	// share fits the 500-left device: 100 - (500*100/1000)/10 = 95. A whole
	// GPU on half uses one free device: max(50-1, 33) = 49.
	gp := gpuPacking{}
	if a, b, c := gp.Score(&empty8, &share), gp.Score(&half, &share), gp.Score(&half, &whole); a != 25 || b != 95 || c != 49 {
		t.Errorf("gpu-packing = %d %d %d, want 25 95 49", a, b, c)
	}
	// gpu-clustering: used = 25*(8000-1500)/8000 = 20 (integer). half holds
	// only a share pod: a share pod scores 20+75 = 95; a whole-GPU pod
	// finds another tag there and scores the bare 20; on an empty node it
	// scores 0+25; a CPU pod scores 0.
	half.affinity = map[string]int{"share-gpu": 1}
	gc := gpuClustering{}
	if a, b, c, d := gc.Score(&half, &share), gc.Score(&half, &whole), gc.Score(&empty8, &whole), gc.Score(&half, &Pod{CPU: 1}); a != 95 || b != 20 || c != 25 || d != 0 {
		t.Errorf("gpu-clustering = %d %d %d %d, want 95 20 25 0", a, b, c, d)
	}
	// Normalized: min-max to 0..100 with integer division; all equal is 0.
	sc := []int64{70, 80, 90}
	Normalized(sc)
	if !slices.Equal(sc, []int64{0, 50, 100}) {
		t.Errorf("Normalized = %v", sc)
	}
	eq := []int64{5, 5}
	Normalized(eq)
	if !slices.Equal(eq, []int64{0, 0}) {
		t.Errorf("Normalized equal = %v", eq)
	}
}

// FGD by hand. Typical pods: a 500-milli share pod with 1000 milli-cores
// (freq 0.5) and a CPU-only pod (0.5). A node with devices [1000, 300] and
// 10000 milli-cores: the share pod cannot use the 300 device (frag 300),
// the CPU pod uses no GPU (frag 1300): 0.5*300 + 0.5*1300 = 800.
// A 200-milli pod on device 1 leaves [1000, 100]: 0.5*100 + 0.5*1100 = 600,
// score int(100 sigmoid(0.2)) = 54; on device 0 it leaves [800, 300]:
// 0.5*300 + 0.5*1100 = 700, int(100 sigmoid(0.1)) = 52. FGD picks device 1.
func TestFGD(t *testing.T) {
	typical := []TypicalPod{
		{Pod: Pod{CPU: 1000, NumGPU: 1, GPUMilli: 500}, Freq: 0.5},
		{Pod: Pod{CPU: 1000}, Freq: 0.5},
	}
	p, err := New("fgd", typical)
	if err != nil {
		t.Fatal(err)
	}
	f := p.(*fgd)
	n := node("T4", 10000, 1000, 300)
	if got := f.frag(n.Model, n.CPULeft, n.GPULeft); math.Abs(got-800) > 1e-9 {
		t.Errorf("frag = %v, want 800", got)
	}
	pod := Pod{CPU: 100, NumGPU: 1, GPUMilli: 200}
	if s := f.Score(&n, &pod); s != 54 {
		t.Errorf("score = %d, want 54", s)
	}
	if g := f.GPUs(&n, &pod, nil); !slices.Equal(g, []int{1}) {
		t.Errorf("devices = %v, want [1]", g)
	}
	// The memo gives the same score for the same state with the devices
	// in another order, and a different one after the state changes.
	m := node("T4", 10000, 300, 1000)
	if s := f.Score(&m, &pod); s != 54 {
		t.Errorf("memoised score on permuted devices = %d, want 54", s)
	}
	if _, err := New("fgd", nil); err == nil {
		t.Error("fgd without typical pods accepted")
	}
	if _, err := New("fdg", typical); err == nil || !strings.Contains(err.Error(), "known: random, dot-product") {
		t.Errorf("unknown policy: %v", err)
	}
}

// Typical pod shapes: counted, sorted by count then shape (both
// descending), cut once the threshold of pods is covered, renormalised.
// 10 pods: A x5, B x3, C x1, D x1. At 80%: A (50%) then B (80%) -> stop;
// freqs 5/8 and 3/8. A pod without a CPU request counts as 100 milli-cores.
func TestTypical(t *testing.T) {
	a := Pod{CPU: 4000, NumGPU: 1, GPUMilli: 500}
	b := Pod{CPU: 0}
	c := Pod{CPU: 2000, NumGPU: 2, GPUMilli: 1000}
	d := Pod{CPU: 2000, NumGPU: 1, GPUMilli: 1000, Types: []string{"T4", "P100"}}
	var pods []Pod
	for range 5 {
		pods = append(pods, a)
	}
	for range 3 {
		pods = append(pods, b)
	}
	pods = append(pods, c, d)
	tp := Typical(pods, 80)
	if len(tp) != 2 || tp[0].Pod.CPU != 4000 || tp[1].Pod.CPU != 100 || math.Abs(tp[0].Freq-5.0/8) > 1e-12 || math.Abs(tp[1].Freq-3.0/8) > 1e-12 {
		t.Errorf("Typical(80%%) = %+v", tp)
	}
	all := Typical(pods, 100)
	// C and D tie at one pod each; shapes compare CPU (equal), then milli
	// (equal), then GPU count: C (2 GPUs) is the larger, so it comes first.
	if len(all) != 4 || all[2].Pod.NumGPU != 2 || strings.Join(all[3].Pod.Types, "|") != "T4|P100" {
		t.Errorf("Typical(100%%) = %+v", all)
	}
}

// The heuristic's rule by hand: a 300-milli pod on devices [1000, 400,
// 350] costs 300 on a used device (not 1000 on the empty one) and takes
// the tighter of the two used ones (350 left): score -(300e5 + 1750-300).
// A whole GPU costs 1000 anywhere; a CPU pod scores -(CPU left after).
func TestHeuristic(t *testing.T) {
	h, err := New("conspirator", nil)
	if err != nil {
		t.Fatal(err)
	}
	n := node("T4", 8000, 1000, 400, 350)
	p := Pod{CPU: 1000, NumGPU: 1, GPUMilli: 300}
	if s, g := h.Score(&n, &p), h.GPUs(&n, &p, nil); s != -(300*100000+1450) || !slices.Equal(g, []int{2}) {
		t.Errorf("shared pod: score %d on %v, want %d on [2]", s, g, -(300*100000 + 1450))
	}
	w := Pod{CPU: 1000, NumGPU: 1, GPUMilli: 1000}
	if s := h.Score(&n, &w); s != -(1000*100000 + 750) {
		t.Errorf("whole GPU: score %d", s)
	}
	if s := h.Score(&n, &Pod{CPU: 3000}); s != -5000 {
		t.Errorf("CPU pod: score %d, want -5000", s)
	}
}
