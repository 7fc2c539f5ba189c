package train

import (
	"math"
	"testing"
)

// The closed forms by hand, one server of one GPU each unless said: a
// 100 MB gradient, NICs of 10 GB/s and 5 us, a GPU link of 100 GB/s and
// 1 us.
func TestSyncSecondsByHand(t *testing.T) {
	const S = 100e6
	l := Links{NICBytesPerSec: 10e9, Alpha: 5e-6, IntraBytesPerSec: 100e9, IntraAlpha: 1e-6}
	for _, c := range []struct {
		form   string
		gpusOn []int
		want   float64
	}{
		// One server of 4 GPUs: its ring, 6 alpha_in + 1.5 S/B_in.
		{"ring", []int{4}, 6e-6 + 1.5e-3},
		// A ring of 4 GPUs over 4 servers: 6 alpha + 1.5 S/B.
		{"ring", []int{1, 1, 1, 1}, 30e-6 + 15e-3},
		// Hierarchical over 2 servers of 2 GPUs: inner 2 alpha_in + S/B_in,
		// then 2 alpha + S/B.
		{"hierarchical", []int{2, 2}, 2e-6 + 1e-3 + 10e-6 + 10e-3},
		// A PS on the first of 3 servers, pipelined: 2 S into its NIC and
		// 2 S out at once, 2 S/B + 2 alpha (not 4 S/B: push and pull
		// overlap chunk by chunk).
		{"ps", []int{1, 1, 1}, 20e-3 + 10e-6},
		// A PS machine of its own for 3 servers: 3 S into its NIC and 3 S
		// out at once: 3 S/B + 2 alpha.
		{"ps-dedicated", []int{1, 1, 1}, 30e-3 + 10e-6},
	} {
		got, err := SyncSeconds(c.form, S, c.gpusOn, l)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s %v: %.9f s, want %.9f", c.form, c.gpusOn, got, c.want)
		}
	}
	if _, err := SyncSeconds("tree", S, []int{1, 1}, l); err == nil {
		t.Error("an unknown form was accepted")
	}
}
