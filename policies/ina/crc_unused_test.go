package ina

import "testing"

// The slots ATP's 16-bit hash leaves unused, by hand.
func TestCRCUnusedSlots(t *testing.T) {
	for _, c := range []struct {
		hash     string
		slots    int
		policies []string
		want     int
	}{
		{"crc", 1 << 20, []string{"atp", "none"}, 1<<20 - 1<<16},
		{"crc", 1 << 20, []string{"esa/fifo"}, 1<<20 - 1<<16},
		{"crc", 1 << 20, []string{"static", "esa-oracle", "none"}, 0},
		{"uniform", 1 << 20, []string{"atp"}, 0},
		{"crc", 1 << 16, []string{"atp"}, 0},
	} {
		if got := CRCUnusedSlots(c.hash, c.slots, c.policies); got != c.want {
			t.Errorf("CRCUnusedSlots(%s, %d, %v) = %d, want %d", c.hash, c.slots, c.policies, got, c.want)
		}
	}
}
