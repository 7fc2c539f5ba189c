package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/mig"
	"github.com/conspirator-sim/conspirator/internal/shareddata"
)

// mig import reads the synthetic -lgip/-lgipp pair of hw/mig's testdata,
// prints the geometry with its SM shares, writes the YAML that
// cluster.mig_geometry reads, and notes the variant it left out.
func TestMigImport(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x30.yaml")
	lgip := filepath.Join("..", "..", "hw", "mig", "testdata", "nvsmi", "synthetic-lgip.txt")
	lgipp := filepath.Join("..", "..", "hw", "mig", "testdata", "nvsmi", "synthetic-lgipp.txt")
	code, stdout, stderr := cli(t, nil, "mig", "import", lgip, lgipp, "--name", "x30", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, w := range []string{"x30: 4 compute slices, 4 memory slices, 56 SMs", "2g.12gb", "11776", "50.0%", "geometry: " + out} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
	if !strings.Contains(stderr, "1g.6gb+me") {
		t.Errorf("stderr lacks the note on the +me variant:\n%s", stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	g, err := mig.ReadYAML(out, data)
	if err != nil || len(g.Profiles) != 3 || g.SMs != 56 {
		t.Fatalf("written geometry: %v %+v", err, g)
	}
}

// The H200's own output, where ../shared has it, imports with no
// difference from the catalog's H200 geometry.
func TestMigImportH200MatchesCatalog(t *testing.T) {
	dir := shareddata.Path(t, "reference", "measured-h200-2026-11-27")
	code, stdout, stderr := cli(t, nil, "mig", "import", filepath.Join(dir, "nvidia-smi-mig-lgip.txt"), filepath.Join(dir, "nvidia-smi-mig-lgipp.txt"), "--name", "h200-141gb")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, "differs from the catalog") || !strings.Contains(stdout, "4g.71gb") {
		t.Errorf("the device's geometry differs from the catalog's:\n%s", stdout)
	}
}

// A file that is not nvidia-smi mig output, half of it, a bad --gpu: exit 2
// with the reason and the fix, and no file written.
func TestMigImportBadInput(t *testing.T) {
	dir := t.TempDir()
	notSMI := writeFile(t, dir, "cuda.csv", "stage,bytes,latency_us\ncuda-h2d-pinned,4096,9.4\n")
	lgip := filepath.Join("..", "..", "hw", "mig", "testdata", "nvsmi", "synthetic-lgip.txt")
	out := filepath.Join(dir, "g.yaml")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{notSMI}, []string{"cuda.csv is not nvidia-smi mig output", "nvidia-smi mig -lgip > lgip.txt"}},
		{[]string{lgip}, []string{"no placement line", "-lgipp"}},
		{[]string{lgip, "--gpu", "-1"}, []string{"--gpu -1"}},
		{[]string{filepath.Join(dir, "none.txt")}, []string{"none.txt"}},
	} {
		code, _, stderr := cli(t, nil, append([]string{"mig", "import", "-o", out}, c.args...)...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d: %s", c.args, code, exitUsage, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", c.args, w, stderr)
			}
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("%v: %s written", c.args, out)
		}
	}
}
