package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/realhw/cuda"
)

// --backend cuda is refused with exit 2 and its fix: in a binary without
// -tags cuda, "rebuild with -tags cuda"; in a tagged binary against the
// no-device stand-in (CONSPIRATOR_CUDA_STUB=1, as .ci/run builds it), "no
// usable GPU" with the CUDA error. Nothing is written either way. On a
// machine with a GPU and the tag this test is skipped (the device-check
// script runs the commands for real).
func TestCUDABackendRefused(t *testing.T) {
	want := "built without CUDA; rebuild it with -tags cuda"
	if cuda.Built {
		if os.Getenv("CONSPIRATOR_CUDA_STUB") != "1" {
			t.Skip("a tagged binary on a real GPU machine: realhw/cuda/device-check.sh runs these commands")
		}
		want = "no usable GPU: creating the CUDA context failed with runtime error 100 (no CUDA-capable device)"
	}
	dir := t.TempDir()
	for _, args := range [][]string{
		{"calibrate", "--backend", "cuda", "-o", filepath.Join(dir, "cal")},
		{"calibrate", "--backend", "cuda", "--validate", "--short", "-o", filepath.Join(dir, "cal")},
		{"run", "paper/e2e", "--backend", "cuda", "--set", "datapath.record_requests=true", "--set", "datapath.clients.requests=200", "--no-sensitivity", "-o", filepath.Join(dir, "run")},
	} {
		code, _, stderr := cli(t, nil, args...)
		if code != exitUsage || !strings.Contains(stderr, "--backend cuda") || !strings.Contains(stderr, want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", args, code, stderr, exitUsage, want)
		}
		for _, d := range []string{"cal", "run"} {
			if _, err := os.Stat(filepath.Join(dir, d)); err == nil {
				t.Errorf("%v: %s written", args, d)
			}
		}
	}
}
