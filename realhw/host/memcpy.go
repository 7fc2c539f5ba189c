package host

import (
	"fmt"
	"time"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/realhw"
)

// MemcpyBandwidth copies between two buffers of each size reps times and
// returns one sample per copy (stage host-memcpy). Buffers are touched
// before timing so that page faults are not counted. The total work is
// bounded: sizes above MaxPayload or more than 10^5 reps are refused.
func MemcpyBandwidth(sizes []int64, reps int, load float64) ([]realhw.Sample, error) {
	if reps <= 0 || reps > 100_000 {
		return nil, fmt.Errorf("host: memcpy reps %d must be in [1, 100000]", reps)
	}
	var src, dst []byte
	var out []realhw.Sample
	for _, n := range sizes {
		if n < 0 || n > MaxPayload {
			return nil, fmt.Errorf("host: memcpy size %d must be in [0, %d]", n, MaxPayload)
		}
		src, dst = grow(src, int(n)), grow(dst, int(n))
		copy(dst, src) // warm the caches and TLB as a real pipeline would be
		for range reps {
			t0 := time.Now()
			copy(dst, src)
			d := time.Since(t0)
			out = append(out, realhw.Sample{Stage: StageMemcpy, Bytes: n, Latency: engine.Time(d), BackgroundLoad: load, Source: "host"})
		}
	}
	return out, nil
}
