package train

import (
	"fmt"
	"sort"
	"strings"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/internal/suggest"
)

// Model is a DNN a job trains with data parallelism: each worker (GPU)
// runs forward and backward on its Batch, then the workers sum their
// gradients (Params values of BytesPerValue bytes) before the next
// iteration.
type Model struct {
	Name   string
	Params float64 // parameter count
	// Batch is the per-GPU batch (samples per iteration).
	Batch int
	// A100SamplesPerSec is the training throughput of one whole
	// A100-80GB; OnGPU overrides it per GPU type where a figure of its
	// own exists, and other types scale it by hw/gpu's relative speed.
	A100SamplesPerSec float64
	OnGPU             map[string]float64
	Source            string // where Params and the throughput come from, with grades
	// A100AMPSamplesPerSec is the A100's rate in mixed precision (FP16 or
	// BF16 tensor cores with FP32 master weights), how production
	// training runs; Derived says the throughput figures are derived
	// (from FLOP ratios or an assumed share of peak), not measured.
	A100AMPSamplesPerSec float64
	Derived              bool
}

// Precisions of compute (ComputeSecondsAt).
const (
	PrecisionTF32 = "tf32"
	PrecisionAMP  = "amp"
)

// Precisions lists them.
func Precisions() []string { return []string{PrecisionTF32, PrecisionAMP} }

// ComputeSecondsAt is ComputeSeconds at a precision: tf32 (the default,
// the figures above) or amp (mixed precision: the A100's AMP rate, other
// GPU types scaled by the same relative speed; a GPU's own TF32/FP32
// figure does not carry over).
func (m Model) ComputeSecondsAt(gpuType, precision string) (float64, error) {
	switch precision {
	case "", PrecisionTF32:
		return m.ComputeSeconds(gpuType)
	case PrecisionAMP:
	default:
		return 0, fmt.Errorf("precision %q; want %s", precision, strings.Join(Precisions(), " or "))
	}
	s, err := gpu.Lookup(gpuType)
	if err != nil {
		return 0, err
	}
	rel := s.RelSpeed["resnet50"]
	if !(rel > 0) {
		return 0, fmt.Errorf("model %s: GPU %s has no relative speed to scale the A100's throughput by", m.Name, s.Name)
	}
	return float64(m.Batch) / (m.A100AMPSamplesPerSec * rel), nil
}

// GradientBytes is the size of one worker's gradient.
func (m Model) GradientBytes(bytesPerValue float64) float64 { return m.Params * bytesPerValue }

// ComputeSeconds is the forward and backward time of one iteration on one
// GPU of the given type (catalog name): Batch over the samples per second
// there. An unknown type, or one without a relative speed, is an error.
func (m Model) ComputeSeconds(gpuType string) (float64, error) {
	s, err := gpu.Lookup(gpuType)
	if err != nil {
		return 0, err
	}
	rate, ok := m.OnGPU[s.Name]
	if !ok {
		rel := s.RelSpeed["resnet50"]
		if !(rel > 0) {
			return 0, fmt.Errorf("model %s: GPU %s has no relative speed to scale the A100's throughput by", m.Name, s.Name)
		}
		rate = m.A100SamplesPerSec * rel
	}
	return float64(m.Batch) / rate, nil
}

// Training throughputs are hard to source per model and GPU: ResNet-50's
// are vendor figures; the transformers' are derived from the compute they
// need (6 x parameters x tokens per sample: Kaplan et al., "Scaling Laws
// for Neural Language Models", 2020) at an assumed share of the A100's
// 156 TFLOP/s TF32 peak; the other CNNs from ResNet-50's measured rate and
// their forward FLOPs. The estimates are marked as such.
const (
	a100TF32Peak      = 156e12
	a100FP16Peak      = 312e12 // dense FP16/BF16 tensor cores (NVIDIA A100 datasheet)
	transformerMFU    = 0.35   // estimate: 20-50% of peak is what TF32 transformer training reaches
	resnet50TrainFLOP = 3 * 4.1e9
	a100ResNet50      = 938.0  // img/s, TF32
	a100ResNet50AMP   = 2470.0 // img/s, mixed precision: NVIDIA's published ResNet-50 v1.5 A100 training figure, as quoted in issue 41 (V)
)

// cnnRate is a CNN's A100 rate derived from ResNet-50's measured rate and
// the two forward passes' FLOPs.
func cnnRate(forwardFLOP float64) float64 {
	return a100ResNet50 * resnet50TrainFLOP / (3 * forwardFLOP)
}

// cnnRateAMP is cnnRate from ResNet-50's mixed-precision rate.
func cnnRateAMP(forwardFLOP float64) float64 {
	return a100ResNet50AMP * resnet50TrainFLOP / (3 * forwardFLOP)
}

// transformerRate is a transformer's A100 rate from 6 x params x tokens.
func transformerRate(params, tokens float64) float64 {
	return a100TF32Peak * transformerMFU / (6 * params * tokens)
}

// transformerRateAMP is transformerRate at the FP16 tensor-core peak, the
// same assumed share of it.
func transformerRateAMP(params, tokens float64) float64 {
	return a100FP16Peak * transformerMFU / (6 * params * tokens)
}

var models = map[string]Model{
	"resnet50": {Name: "resnet50", Params: 25.557032e6, Batch: 256, A100SamplesPerSec: a100ResNet50,
		OnGPU:                map[string]float64{"v100": 367, "v100m32": 367},
		Source:               "params: torchvision ResNet-50, 25,557,032 (V); throughput: NVIDIA's published ResNet-50 training figures, A100 938 img/s TF32 and V100 367 img/s FP32 (V, as quoted in issue 30); batch 256: choice",
		A100AMPSamplesPerSec: a100ResNet50AMP},
	"bert-base": {Name: "bert-base", Params: 110e6, Batch: 32, A100SamplesPerSec: transformerRate(110e6, 128),
		Source:               "params: Devlin et al. 2019, 110 M (V); throughput: derived, 6 x params x 128 tokens per sequence at 35% of the A100's TF32 peak (E; plausible 20-50%); batch 32: choice",
		A100AMPSamplesPerSec: transformerRateAMP(110e6, 128), Derived: true},
	"bert-large": {Name: "bert-large", Params: 340e6, Batch: 32, A100SamplesPerSec: transformerRate(340e6, 128),
		Source:               "params: Devlin et al. 2019, 340 M (V); throughput: derived as bert-base (E); batch 32: choice",
		A100AMPSamplesPerSec: transformerRateAMP(340e6, 128), Derived: true},
	"gpt2": {Name: "gpt2", Params: 124e6, Batch: 8, A100SamplesPerSec: transformerRate(124e6, 1024),
		Source:               "params: GPT-2 small, 124 M (V: Radford et al. 2019, HuggingFace gpt2); throughput: derived, 1,024 tokens per sequence (E); batch 8: choice",
		A100AMPSamplesPerSec: transformerRateAMP(124e6, 1024), Derived: true},
	"gpt2-xl": {Name: "gpt2-xl", Params: 1.5e9, Batch: 1, A100SamplesPerSec: transformerRate(1.5e9, 1024),
		Source:               "params: GPT-2 XL, 1.5 B (V); throughput: derived (E); batch 1: choice (a larger one does not fit an 80 GB GPU with Adam in FP32)",
		A100AMPSamplesPerSec: transformerRateAMP(1.5e9, 1024), Derived: true},
	"vgg16": {Name: "vgg16", Params: 138.357544e6, Batch: 64, A100SamplesPerSec: cnnRate(15.5e9),
		Source:               "params: torchvision VGG16, 138,357,544 (V); throughput: derived from ResNet-50's A100 rate and the forward FLOPs, 15.5 G against 4.1 G (D); batch 64: choice",
		A100AMPSamplesPerSec: cnnRateAMP(15.5e9), Derived: true},
	"inception-v3": {Name: "inception-v3", Params: 23.851784e6, Batch: 128, A100SamplesPerSec: cnnRate(5.7e9),
		Source:               "params: Keras InceptionV3, 23,851,784 (V); throughput: derived from ResNet-50's, forward 5.7 GFLOP (D); batch 128: choice",
		A100AMPSamplesPerSec: cnnRateAMP(5.7e9), Derived: true},
	"alexnet": {Name: "alexnet", Params: 61.100840e6, Batch: 256, A100SamplesPerSec: cnnRate(0.71e9),
		Source:               "params: torchvision AlexNet, 61,100,840 (V); throughput: derived from ResNet-50's, forward 0.71 GFLOP (D; in practice input-bound)",
		A100AMPSamplesPerSec: cnnRateAMP(0.71e9), Derived: true},
}

// aliases are the names job lists use: SwitchML-omnetpp's list calls
// BERT-large (its layer sizes sum to about 333 M parameters) "bert" and
// ResNet-50 "resnet".
var aliases = map[string]string{
	"bert": "bert-large", "resnet": "resnet50", "inception": "inception-v3", "inception3": "inception-v3",
	"gpt-2": "gpt2", "gpt2-small": "gpt2", "gpt2-1.5b": "gpt2-xl",
}

// Lookup returns the named model (aliases allowed, case-insensitive).
func Lookup(name string) (Model, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if a, ok := aliases[n]; ok {
		n = a
	}
	if m, ok := models[n]; ok {
		return m, nil
	}
	hint := ""
	if near := suggest.Nearest(n, Models()); near != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", near)
	}
	return Model{}, fmt.Errorf("unknown model %q%s; known: %s", name, hint, strings.Join(Models(), ", "))
}

// Models lists the catalog's model names, sorted.
func Models() []string {
	out := make([]string, 0, len(models))
	for k := range models {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
