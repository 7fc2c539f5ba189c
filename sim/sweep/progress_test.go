package sweep

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// A sweep logging to a pipe writes a line at every tenth of its points,
// not one per point: 800 points give the opening line and 10 more (80,
// 160, ..., 800), the last the total; a resumed sweep counts from the
// points already done; a sweep stopped between two steps says where it
// stopped; a sweep of fewer than 10 points has a line per point.
func TestLineProgressEveryTenth(t *testing.T) {
	cases := []struct {
		name              string
		todo, skipped, do int
		want              []string // the counts of the done lines
	}{
		{"800 points", 800, 0, 800, []string{"80/800", "160/800", "240/800", "320/800", "400/800", "480/800", "560/800", "640/800", "720/800", "800/800"}},
		{"resumed at 400", 400, 400, 400, []string{"480/800", "560/800", "640/800", "720/800", "800/800"}},
		{"stopped at 85", 800, 0, 85, []string{"80/800", "85/800"}},
		{"801 points", 801, 0, 801, []string{"81/801", "162/801", "243/801", "324/801", "405/801", "486/801", "567/801", "648/801", "729/801", "801/801"}},
		{"4 points", 4, 0, 4, []string{"1/4", "2/4", "3/4", "4/4"}},
	}
	for _, c := range cases {
		var out bytes.Buffer
		p := newProgress(Options{Dir: "d", Jobs: 2, Progress: &out}, c.todo, c.skipped)
		for i := range c.do {
			p.done(fmt.Sprintf("p%03d", i))
		}
		p.finish()
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if len(lines) > 11 {
			t.Errorf("%s: %d lines, want at most 11", c.name, len(lines))
		}
		var got []string
		for _, l := range lines[1:] {
			var n, total int
			if _, err := fmt.Sscanf(l, "sweep: %d/%d points done", &n, &total); err != nil {
				t.Fatalf("%s: line %q: %v", c.name, l, err)
			}
			got = append(got, fmt.Sprintf("%d/%d", n, total))
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: done lines at %v, want %v:\n%s", c.name, got, c.want, out.String())
		}
	}
}
