package torch

import (
	"os/exec"
	"strings"
	"testing"
)

// measure_compute.py compiles, and its --help (which needs no PyTorch)
// names the CSV's columns' source flags; a bad argument exits 2 (argparse)
// before any GPU work. Skipped where no python3 is installed.
func TestMeasureComputeScript(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH: measure_compute.py is checked where one is")
	}
	// Compiled into the test's temporary directory: nothing is written
	// beside the source.
	pyc := t.TempDir() + "/measure_compute.pyc"
	if out, err := exec.Command(py, "-c", "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)", "measure_compute.py", pyc).CombinedOutput(); err != nil {
		t.Fatalf("py_compile: %v\n%s", err, out)
	}
	out, err := exec.Command(py, "measure_compute.py", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("--help: %v\n%s", err, out)
	}
	for _, w := range []string{"--gpu-type", "--batches", "--modes", "--precision", "calibrate --import"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("--help lacks %q:\n%s", w, out)
		}
	}
	cmd := exec.Command(py, "measure_compute.py", "--gpu-type", "h200-141gb", "--batches", "0", "-o", "/dev/null")
	out, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "--batches") {
		t.Errorf("--batches 0: %v, want exit 2 naming --batches:\n%s", err, out)
	}
}

// measure_llm_step.py compiles, its --help (which needs no PyTorch) names
// its flags and the command that reads its CSV, and a bad argument exits 2
// (argparse) before any GPU work. Skipped where no python3 is installed.
func TestMeasureLLMStepScript(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 on PATH: measure_llm_step.py is checked where one is")
	}
	pyc := t.TempDir() + "/measure_llm_step.pyc"
	if out, err := exec.Command(py, "-c", "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)", "measure_llm_step.py", pyc).CombinedOutput(); err != nil {
		t.Fatalf("py_compile: %v\n%s", err, out)
	}
	out, err := exec.Command(py, "measure_llm_step.py", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("--help: %v\n%s", err, out)
	}
	for _, w := range []string{"--gpu-type", "--mig", "--prefill", "--batches", "--contexts", "--modes", "bench/stepval -measured"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("--help lacks %q:\n%s", w, out)
		}
	}
	for _, bad := range [][]string{{"--batches", "0"}, {"--modes", "fast"}, {"--reps", "3"}} {
		args := append([]string{"measure_llm_step.py", "--gpu-type", "h200-141gb", "-o", "/dev/null"}, bad...)
		out, err = exec.Command(py, args...).CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), bad[0]) {
			t.Errorf("%v: %v, want exit 2 naming %s:\n%s", bad, err, bad[0], out)
		}
	}
}
