package llm

import (
	"bytes"
	"errors"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
)

// checkRead checks what must hold for any input: an error is a non-empty
// message; a trace has requests, in arrival order with IDs 0.., lengths
// and arrivals in range, and hashes one per block where it has any.
func checkRead(t *testing.T, tr Trace, err error) {
	t.Helper()
	if err != nil {
		var pe *ParseError
		if err.Error() == "" || errors.As(err, &pe) && pe.Reason == "" {
			t.Fatalf("an error without a message: %#v", err)
		}
		return
	}
	if len(tr.Requests) == 0 {
		t.Fatal("a trace without requests was accepted")
	}
	for i, r := range tr.Requests {
		if r.ID != i || r.Arrival < 0 || r.Arrival > engine.Horizon || i > 0 && r.Arrival < tr.Requests[i-1].Arrival {
			t.Fatalf("request %d: %+v; want ID %d and arrivals in order within the horizon", i, r, i)
		}
		if r.PromptTokens < 1 || r.PromptTokens > MaxTokens || r.OutputTokens < 1 || r.OutputTokens > MaxTokens {
			t.Fatalf("request %d: lengths %d, %d; want 1..%d", i, r.PromptTokens, r.OutputTokens, MaxTokens)
		}
		if r.BlockHashes != nil && (tr.BlockTokens == 0 || len(r.BlockHashes) != (r.PromptTokens+tr.BlockTokens-1)/tr.BlockTokens) {
			t.Fatalf("request %d: %d hashes for %d tokens at %d a block", i, len(r.BlockHashes), r.PromptTokens, tr.BlockTokens)
		}
	}
}

// The seed corpus is in testdata/fuzz/<FuzzName>; these add the smallest
// cases inline.
func FuzzReadAzure(f *testing.F) {
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ReadAzure(bytes.NewReader(data), "fuzz.csv")
		checkRead(t, tr, err)
	})
}

func FuzzReadMooncake(f *testing.F) {
	f.Add([]byte(`{"timestamp": 0, "input_length": 600, "output_length": 2, "hash_ids": [1, 2]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ReadMooncake(bytes.NewReader(data), "fuzz.jsonl")
		checkRead(t, tr, err)
	})
}

func FuzzReadBurstGPT(f *testing.F) {
	f.Add([]byte("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ReadBurstGPT(bytes.NewReader(data), "fuzz.csv")
		checkRead(t, tr, err)
	})
}

// FuzzRead detects the format first; a detected read must agree with the
// reader of that format.
func FuzzRead(f *testing.F) {
	f.Add([]byte("\ufeffTIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:15:46,1,2\r\n"))
	f.Add([]byte(`{"timestamp": 1, "input_length": 1, "output_length": 1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Read("", bytes.NewReader(data), "fuzz")
		checkRead(t, tr, err)
		if err != nil {
			return
		}
		direct, derr := Read(tr.Format, bytes.NewReader(data), "fuzz")
		if derr != nil || len(direct.Requests) != len(tr.Requests) {
			t.Fatalf("detected %s: %d requests; read as %s: %d, %v", tr.Format, len(tr.Requests), tr.Format, len(direct.Requests), derr)
		}
	})
}
