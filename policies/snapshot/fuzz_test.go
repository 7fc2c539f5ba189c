package snapshot

import (
	"math"
	"testing"
	"time"
)

// FuzzArgs: whatever strings a scenario file gives, Args never panics, and
// a value it accepts is within the range it was asked for.
func FuzzArgs(f *testing.F) {
	for _, seed := range [][2]string{{"e1", "1.5"}, {"e1", "NaN"}, {"limit", "10s"}, {"limit", "-1s"}, {"n", "99999999999999999999"}, {"flag", "T"}, {"mode", "y"}, {"x", ""}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, key, val string) {
		a := NewArgs(map[string]string{key: val})
		fl := a.Float("e1", 1, 0, 10)
		d := a.Duration("limit", time.Second, 0, time.Minute)
		n := a.Int("n", 1, 1, 5)
		_ = a.Bool("flag", false)
		c := a.Choice("mode", "x", "x", "y")
		err := a.Err()
		if fl < 0 || fl > 10 || math.IsNaN(fl) || d < 0 || d > time.Minute || n < 1 || n > 5 || (c != "x" && c != "y") {
			t.Fatalf("%q=%q gave out-of-range values %v %v %v %q", key, val, fl, d, n, c)
		}
		known := key == "e1" || key == "limit" || key == "n" || key == "flag" || key == "mode"
		if !known && err == nil {
			t.Fatalf("unknown key %q accepted", key)
		}
	})
}
