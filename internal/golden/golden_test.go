package golden

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/internal/shareddata"
)

func TestDigest(t *testing.T) {
	b := []byte(strings.Repeat("a,b\n", 30))
	d := string(Digest(b))
	// sha256 of 30 x "a,b\n", computed independently with sha256sum.
	for _, want := range []string{"bytes 120\n", "lines 30\n", "--- first 20 lines ---\n" + strings.Repeat("a,b\n", 20)} {
		if !strings.Contains(d, want) {
			t.Errorf("digest lacks %q:\n%s", want, d)
		}
	}
	if strings.Count(d, "a,b\n") != 20 {
		t.Errorf("digest keeps %d lines, want 20", strings.Count(d, "a,b\n"))
	}
	if string(Digest(append(b, 'x'))) == d {
		t.Error("a changed byte gives the same digest")
	}
}

func TestFirstDiff(t *testing.T) {
	if got := firstDiff([]byte("a\nb\nc"), []byte("a\nB\nc")); !strings.Contains(got, "line 2") || !strings.Contains(got, `"B"`) {
		t.Errorf("firstDiff = %q", got)
	}
	if got := firstDiff([]byte("a\n"), []byte("a\nextra")); !strings.Contains(got, "line 2") {
		t.Errorf("firstDiff = %q", got)
	}
}

// `go test ./... -update` fails in any test binary that does not define
// -update ("flag provided but not defined"), so every package with tests
// must import this package from one of its test files.
func TestEveryPackageRegistersUpdate(t *testing.T) {
	lines := shareddata.GoList(t, `{{.ImportPath}}|{{len .TestGoFiles}}|{{len .XTestGoFiles}}|{{join .TestImports " "}} {{join .XTestImports " "}}`, "./...")
	const self = "github.com/conspirator-sim/conspirator/internal/golden"
	for _, line := range lines {
		f := strings.SplitN(line, "|", 4)
		if len(f) != 4 || f[0] == self || (f[1] == "0" && f[2] == "0") {
			continue
		}
		if !strings.Contains(" "+f[3]+" ", " "+self+" ") {
			t.Errorf("package %s has tests but does not import %s: add %s", f[0], self, filepath.Join(strings.TrimPrefix(f[0], "github.com/conspirator-sim/conspirator/"), "golden_flag_test.go"))
		}
	}
}
