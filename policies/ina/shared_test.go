package ina

import (
	"math/bits"
	"testing"
)

// A window larger than the slots its hash can reach ends: on a pool of
// 100 a window of 150 takes every slot once and leaves the rest out
// (before, the salt loop searched for a new slot forever).
func TestCRCSetEndsPastThePool(t *testing.T) {
	b := crcSet(7, 150, 100)
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	if n != 100 {
		t.Errorf("%d slots set, want all 100", n)
	}
}
