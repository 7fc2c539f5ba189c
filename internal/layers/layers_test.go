package layers

import (
	"os/exec"
	"strings"
	"testing"

	_ "github.com/conspirator-sim/conspirator/internal/golden" // registers -update
	"github.com/conspirator-sim/conspirator/internal/shareddata"
)

// Every package of the module has a layer, and imports (non-test code)
// only packages of its own layer or below.
func TestImportOrder(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := shareddata.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
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
		t.Errorf("only %d packages listed; go list output:\n%s", n, out)
	}
}

func TestOf(t *testing.T) {
	for path, want := range map[string]int{
		Module + "/sim/cluster":       5,
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
