package llm

import (
	"math"
	"os"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/internal/shareddata"
)

// readShared reads a real trace from ../shared/traces, detecting its
// format, or skips (shareddata.Path says why) where it is absent.
func readShared(t *testing.T, rel ...string) Trace {
	t.Helper()
	path := shareddata.Path(t, append([]string{"traces"}, rel...)...)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := Read("", f, path)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// The expected figures come from the traces' README (request counts,
// Mooncake's means) and from a Python csv/json pass over the same files
// (Azure's means, extreme lengths and span: first and last TIMESTAMP of
// the conversation file are 18:15:46.6805900 and 19:14:08.4025270, so
// the span is 58 min 21.7219370 s, the coding file's 18:17:03.9799600
// to 19:14:19.9280160, 57 min 15.9480560 s; Mooncake's last timestamp is
// 3,536,999 ms, and every request has ceil(input_length/512) hash ids;
// the nearest-rank p50 and p99 come from the same pass).
// No file has a row out of order or a zero length.
func TestRealTraces(t *testing.T) {
	for _, c := range []struct {
		path                 []string
		format               string
		n                    int
		prompt, output       float64 // means
		minPrompt, minOutput int
		maxPrompt, maxOutput int
		duration             engine.Time // 0: not checked
		block                int
		p50, p99             [2]int // prompt, output
	}{
		{[]string{"azure-llm-2023", "AzureLLMInferenceTrace_conv.csv"}, FormatAzure, 19366, 1154.6974, 211.1259, 2, 7, 14050, 1000, 3501*engine.Second + 721937*engine.Microsecond, 0, [2]int{1020, 129}, [2]int{4142, 601}},
		{[]string{"azure-llm-2023", "AzureLLMInferenceTrace_code.csv"}, FormatAzure, 8819, 2047.8483, 27.8825, 3, 6, 7437, 1899, 3435*engine.Second + 948056*engine.Microsecond, 0, [2]int{1469, 13}, [2]int{7436, 252}},
		{[]string{"mooncake-fast25", "conversation_trace.jsonl"}, FormatMooncake, 12031, 12035.0613, 342.6189, 891, 1, 126195, 2000, 3536999 * engine.Millisecond, 512, [2]int{6909, 350}, [2]int{85401, 1120}},
		{[]string{"mooncake-fast25", "synthetic_trace.jsonl"}, FormatMooncake, 3993, 15325.4766, 149.1190, 13, 1, 191378, 893, 1022025 * engine.Millisecond, 512, [2]int{11587, 69}, [2]int{66458, 769}},
	} {
		t.Run(c.path[1], func(t *testing.T) {
			tr := readShared(t, c.path...)
			s := tr.Stats()
			t.Logf("%s: %s; notes %q", c.path[1], s, tr.Notes)
			if tr.Format != c.format || tr.BlockTokens != c.block {
				t.Errorf("format %q block tokens %d; want %q, %d", tr.Format, tr.BlockTokens, c.format, c.block)
			}
			if s.Requests != c.n {
				t.Errorf("%d requests; want %d", s.Requests, c.n)
			}
			if math.Abs(s.Prompt.Mean-c.prompt) > 1e-3 || math.Abs(s.Output.Mean-c.output) > 1e-3 {
				t.Errorf("mean prompt %.4f output %.4f; want %.4f, %.4f", s.Prompt.Mean, s.Output.Mean, c.prompt, c.output)
			}
			minP, minO := math.MaxInt, math.MaxInt
			for i, r := range tr.Requests {
				minP, minO = min(minP, r.PromptTokens), min(minO, r.OutputTokens)
				if r.ID != i || i > 0 && r.Arrival < tr.Requests[i-1].Arrival {
					t.Fatalf("request %d: id %d arrival %s after %s; want ids in arrival order", i, r.ID, r.Arrival, tr.Requests[max(i-1, 0)].Arrival)
				}
				if c.block > 0 && len(r.BlockHashes) != (r.PromptTokens+c.block-1)/c.block {
					t.Fatalf("request %d: %d hashes for %d tokens", i, len(r.BlockHashes), r.PromptTokens)
				}
			}
			if minP != c.minPrompt || minO != c.minOutput {
				t.Errorf("shortest prompt %d output %d; want %d, %d", minP, minO, c.minPrompt, c.minOutput)
			}
			if got := [4]int{s.Prompt.P50, s.Output.P50, s.Prompt.P99, s.Output.P99}; got != [4]int{c.p50[0], c.p50[1], c.p99[0], c.p99[1]} {
				t.Errorf("p50 prompt, output, p99 prompt, output %v; want %v %v", got, c.p50, c.p99)
			}
			if s.Prompt.Max != c.maxPrompt || s.Output.Max != c.maxOutput {
				t.Errorf("longest prompt %d output %d; want %d, %d", s.Prompt.Max, s.Output.Max, c.maxPrompt, c.maxOutput)
			}
			if c.duration > 0 && s.Duration != c.duration {
				t.Errorf("duration %s (%d ns); want %s", s.Duration, s.Duration, c.duration)
			}
			if tr.Requests[0].Arrival != 0 {
				t.Errorf("first arrival %s; want 0", tr.Requests[0].Arrival)
			}
		})
	}
}
