package suggest

import "testing"

// Distances counted by hand.
func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "abc", 0},
		{"nmae", "name", 1},      // one swap
		{"kitten", "sitting", 3}, // the textbook Levenshtein case: k->s, e->i, +g
		{"ca", "abc", 3},         // OSA, not full Damerau (which gives 2)
		{"µs", "us", 1},          // runes, not bytes
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.want)
		}
	}
}

func TestNearest(t *testing.T) {
	cands := []string{"background_load", "cores", "seed", "a100-40gb", "a100-80gb"}
	for _, c := range []struct{ in, want string }{
		{"backgroud_load", "background_load"},
		{"Cores", "cores"},
		{"x", ""},
		{"a100-40", "a100-40gb"},   // tie-free: 2 edits from 40gb, 3 from 80gb
		{"a100-60gb", "a100-40gb"}, // a tie goes to the earlier candidate
		{"sede", "seed"},           // a transposition
		{"CORES", "cores"},         // case only
		{"requests", ""},           // too far from everything
	} {
		if got := Nearest(c.in, cands); got != c.want {
			t.Errorf("Nearest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
