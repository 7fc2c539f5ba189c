package mig

import (
	"testing"

	"github.com/conspirator-sim/conspirator/internal/shareddata"
)

// The geometries the tests use, built as hw/gpu's catalog builds them
// (hw/gpu's TestCatalogGeometries checks that the catalog agrees).
func a100() *Geometry {
	return SevenSlice("a100-40gb", 40<<30, [6]string{"1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"}, "test")
}

func a100_80() *Geometry {
	return SevenSlice("a100-80gb", 80<<30, [6]string{"1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}, "test")
}

func h200() *Geometry {
	return SevenSlice("h200-141gb", 141<<30, [6]string{"1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"}, "test")
}

func a30() *Geometry {
	return FourSlice("a30-24gb", 24<<30, [3]string{"1g.6gb", "2g.12gb", "4g.24gb"}, "test")
}

// sharedPath returns ../shared/rel, skipping the test where it is absent,
// as in a fresh clone.
func sharedPath(t testing.TB, rel string) string {
	t.Helper()
	return shareddata.Path(t, rel)
}

func mustParse(t testing.TB, g *Geometry, text string) Layout {
	t.Helper()
	l, err := g.Parse(text)
	if err != nil {
		t.Fatalf("Parse(%s, %q): %v", g.Model, text, err)
	}
	return l
}
