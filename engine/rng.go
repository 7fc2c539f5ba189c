package engine

import (
	"encoding/binary"
	"hash/fnv"
	"math/rand/v2"
)

// Stream is a named source of random numbers. Each stream's state is derived
// from (run seed, stream name) alone, so adding a model, or a draw to one
// model, never shifts the numbers another model sees. It is not safe for
// concurrent use.
type Stream struct {
	name string
	r    *rand.Rand
}

// NewStream returns the stream called name of the run with the given seed.
// The same (seed, name) always yields the same sequence, on every platform:
// the generator is PCG (math/rand/v2) keyed by a 128-bit FNV-1a hash of the
// seed and the name.
func NewStream(seed uint64, name string) *Stream {
	h := fnv.New128a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(name))
	sum := h.Sum(nil)
	hi := binary.LittleEndian.Uint64(sum[:8])
	lo := binary.LittleEndian.Uint64(sum[8:])
	return &Stream{name: name, r: rand.New(rand.NewPCG(hi, lo))}
}

// Float64 returns a uniform draw in [0, 1).
func (s *Stream) Float64() float64 { return s.r.Float64() }

// IntN returns a uniform draw in [0, n); n must be > 0.
func (s *Stream) IntN(n int) int { return s.r.IntN(n) }

// Uint64 returns a uniform 64-bit draw.
func (s *Stream) Uint64() uint64 { return s.r.Uint64() }

// Exp returns an exponential draw with the given mean.
func (s *Stream) Exp(mean float64) float64 { return s.r.ExpFloat64() * mean }

// NormFloat64 returns a standard normal draw.
func (s *Stream) NormFloat64() float64 { return s.r.NormFloat64() }
