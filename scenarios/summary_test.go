package scenarios

import (
	"strings"
	"testing"
)

// Every built-in scenario has a one-line summary for `scenarios list`:
// the first line of its leading comment, set off by a line of "#",
// short enough to stand beside the name on a terminal's line.
func TestBuiltinSummaries(t *testing.T) {
	for _, n := range List() {
		s := Summary(n)
		switch {
		case s == "":
			t.Errorf("%s: no summary: begin the file with \"# <one line>\" and a line \"#\"", n)
		case len(s) > 72:
			t.Errorf("%s: summary of %d characters, want at most 72: %q", n, len(s), s)
		case strings.HasSuffix(s, "."):
			t.Errorf("%s: summary %q ends with a full stop; a title has none", n, s)
		}
	}
	if got, want := Summary("paper/cost"), "Cost and power efficiency of the control plane: host CPU vs SmartNIC"; got != want {
		t.Errorf("Summary(paper/cost) = %q, want %q", got, want)
	}
	if got := Summary("paper/no-such"); got != "" {
		t.Errorf("Summary of an unknown name = %q, want \"\"", got)
	}
}
