package layers

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/conspirator-sim/conspirator/internal/golden" // registers -update
	"github.com/conspirator-sim/conspirator/internal/shareddata"
)

// Every package of the module has a layer, and imports (non-test code)
// only packages of its own layer or below.
func TestImportOrder(t *testing.T) {
	lines := shareddata.GoList(t, "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	n := 0
	for _, line := range lines {
		f := strings.Fields(line)
		from, ok := Of(f[0])
		if !ok {
			t.Errorf("package %s has no layer: add its folder to layers.order", f[0])
			continue
		}
		n++
		for _, imp := range f[1:] {
			to, ok := Of(imp)
			if ok && to > from {
				t.Errorf("%s (layer %d) imports %s (layer %d): a package may import only its own layer or below", strings.TrimPrefix(f[0], Module+"/"), from, strings.TrimPrefix(imp, Module+"/"), to)
			}
		}
	}
	if n < 30 {
		t.Errorf("only %d packages listed; go list output:\n%s", n, strings.Join(lines, "\n"))
	}
}

func TestOf(t *testing.T) {
	for path, want := range map[string]int{
		Module + "/sim/cluster":       5,
		Module + "/sim/llmserve":      5,
		Module + "/sim/sweep":         6,
		Module + "/sim":               6,
		Module + "/simulation":        -1, // a prefix must match a whole element
		Module + "/hw/units":          2,
		Module + "/cmd/conspirator":   8,
		Module + "/internal/atomicfs": 0,
		"github.com/spf13/cobra":      -1,
	} {
		got, ok := Of(path)
		if !ok {
			got = -1
		}
		if got != want {
			t.Errorf("Of(%s) = %d, want %d", path, got, want)
		}
	}
}

// The simulation models do no file I/O and read no clock: files and the
// wall clock are injected by the assembly (cluster.Env), so that a model's
// result depends on its inputs alone.
func TestModelsArePure(t *testing.T) {
	lines := shareddata.GoList(t, "{{.ImportPath}}|{{.Dir}}|{{join .GoFiles \",\"}}|{{join .Imports \" \"}}", "./sim/datapath", "./sim/cluster", "./sim/training", "./sim/llmserve")
	forbidden := map[string]bool{"os": true, "os/exec": true, "net": true, "net/http": true, "syscall": true, "io/ioutil": true}
	for _, line := range lines {
		f := strings.SplitN(line, "|", 4)
		for _, imp := range strings.Fields(f[3]) {
			if forbidden[imp] {
				t.Errorf("model %s imports %s: files and processes belong to the assembly", f[0], imp)
			}
		}
		for _, name := range strings.Split(f[2], ",") {
			b, err := os.ReadFile(filepath.Join(f[1], name))
			if err != nil {
				t.Fatal(err)
			}
			for _, call := range []string{"time.Now(", "time.Since(", "time.Until("} {
				if strings.Contains(string(b), call) {
					t.Errorf("model %s/%s calls %s: the wall clock is injected (cluster.Env.Now)", f[0], name, call)
				}
			}
		}
	}
}
