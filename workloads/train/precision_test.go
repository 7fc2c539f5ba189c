package train

import (
	"math"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
)

// Mixed precision by hand: ResNet-50 at 2,470 img/s on an A100 (batch
// 256: 103.64 ms, against 272.92 ms at TF32's 938); BERT-large at 35% of
// the 312 TFLOP/s FP16 peak over 6 x 340 M x 128 FLOP per sequence:
// 418.2 seq/s, batch 32 in 76.51 ms, exactly half its TF32 time (the peak
// doubles). Only ResNet-50's figure is measured; the others are marked
// derived.
func TestMixedPrecisionByHand(t *testing.T) {
	for _, c := range []struct {
		model   string
		want    float64 // seconds
		derived bool
	}{
		{"resnet50", 256 / 2470.0, false},
		{"bert-large", 32 / (312e12 * 0.35 / (6 * 340e6 * 128)), true},
		{"vgg16", 64 / (2470.0 * 4.1 / 15.5), true},
	} {
		m, err := Lookup(c.model)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.ComputeSecondsAt("a100-80gb", PrecisionAMP)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-c.want)/c.want > 1e-9 {
			t.Errorf("%s amp: %.6f s, want %.6f", c.model, got, c.want)
		}
		if m.Derived != c.derived {
			t.Errorf("%s: derived %v, want %v", c.model, m.Derived, c.derived)
		}
	}
	bert, _ := Lookup("bert-large")
	tf, _ := bert.ComputeSecondsAt("a100-80gb", PrecisionTF32)
	amp, _ := bert.ComputeSecondsAt("a100-80gb", PrecisionAMP)
	if math.Abs(tf/amp-2) > 1e-9 {
		t.Errorf("bert-large: TF32 %.6f s over AMP %.6f s = %.4f, want 2 (the FP16 peak is twice TF32's)", tf, amp, tf/amp)
	}
	if _, err := bert.ComputeSecondsAt("a100-80gb", "fp8"); err == nil {
		t.Errorf("precision fp8 accepted")
	}
}

// Model weights: a weight of 0 never draws its model; without weights
// both models are drawn (and the goldens of paper/ina, whose mix has no
// weights, hold the draw unchanged).
func TestSynthesizeModelWeights(t *testing.T) {
	mix := Mix{GPUs: []int{4}, Models: []string{"resnet50", "vgg16"}, ModelWeights: []float64{0, 1}, MinIterations: 1, MaxIterations: 10}
	jobs, err := Synthesize(200, mix, engine.NewStream(1, "t"))
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Model != "vgg16" {
			t.Fatalf("job %s trains %s, whose weight is 0", j.ID, j.Model)
		}
	}
	mix.ModelWeights = nil
	a, _ := Synthesize(50, mix, engine.NewStream(1, "t"))
	n := map[string]int{}
	for _, j := range a {
		n[j.Model]++
	}
	if n["resnet50"] == 0 || n["vgg16"] == 0 {
		t.Errorf("equal weights drew %v", n)
	}
}
