package gpu

import (
	"testing"

	"github.com/conspirator-sim/conspirator/internal/shareddata"
)

// sharedPath returns ../shared/rel, skipping the test where it is absent,
// as in a fresh clone.
func sharedPath(t testing.TB, rel string) string {
	t.Helper()
	return shareddata.Path(t, rel)
}

func mustLookup(t testing.TB, name string) Spec {
	t.Helper()
	s, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
