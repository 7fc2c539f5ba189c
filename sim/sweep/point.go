package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Param is one swept parameter: a key (a scenario key path such as
// "host.background_load") and the values it takes, in the order given.
type Param struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// KV is one parameter setting of a point.
type KV struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Point is one run of a sweep: a parameter combination and a seed.
type Point struct {
	// Index is the point's position in the full sweep; shards split points
	// by Index % Shards, so it must not depend on which points run.
	Index int `json:"index"`
	// Params are the settings in the order the parameters were declared.
	Params []KV `json:"params"`
	// Seed is the scenario seed of this replication.
	Seed uint64 `json:"seed"`
	// ID names the point's directory: "p<combination>-s<seed>-<hash of
	// params>", only [a-z0-9-], stable across runs and machines.
	ID string `json:"id"`
	// Inputs is the digest of the point's resolved inputs, given by the
	// caller (sim.InputsSHA256): what the point computes. A resume, a
	// merge and the aggregate refuse a point whose digest differs.
	Inputs string `json:"inputs_sha256,omitempty"`
}

// String describes the point for messages: "p001-s2-5d41402a (load=0.5 seed=2)".
func (p Point) String() string {
	var b strings.Builder
	b.WriteString(p.ID)
	b.WriteString(" (")
	for _, kv := range p.Params {
		fmt.Fprintf(&b, "%s=%s ", kv.Key, kv.Value)
	}
	fmt.Fprintf(&b, "seed=%d)", p.Seed)
	return b.String()
}

// Expand returns the cartesian product of params and seeds in a fixed order:
// the first parameter varies slowest and the seed fastest, so the points of
// one parameter combination are adjacent. Index counts from 0 in that order.
// No seeds, or a parameter with no values, gives no points; CheckParams says
// what is wrong with such input.
func Expand(params []Param, seeds []uint64) []Point {
	combos := 1
	for _, p := range params {
		combos *= len(p.Values)
	}
	if combos == 0 || len(seeds) == 0 {
		return nil
	}
	width := len(fmt.Sprint(combos - 1))
	if width < 3 {
		width = 3
	}
	points := make([]Point, 0, combos*len(seeds))
	digits := make([]int, len(params)) // mixed-radix counter over the value lists
	for c := 0; c < combos; c++ {
		kvs := make([]KV, len(params))
		for i, p := range params {
			kvs[i] = KV{Key: p.Key, Value: p.Values[digits[i]]}
		}
		hash := paramsHash(kvs)
		for _, s := range seeds {
			points = append(points, Point{
				Index:  len(points),
				Params: kvs,
				Seed:   s,
				ID:     fmt.Sprintf("p%0*d-s%d-%s", width, c, s, hash),
			})
		}
		for i := len(params) - 1; i >= 0; i-- {
			digits[i]++
			if digits[i] < len(params[i].Values) {
				break
			}
			digits[i] = 0
		}
	}
	return points
}

// paramsHash is 8 hex digits of SHA-256 over "key=value\n" lines: it makes
// an ID from one spec differ from the same-numbered ID of another spec, so
// mixing directories of two sweeps is caught by name.
func paramsHash(kvs []KV) string {
	h := sha256.New()
	for _, kv := range kvs {
		fmt.Fprintf(h, "%s=%s\n", kv.Key, kv.Value)
	}
	return hex.EncodeToString(h.Sum(nil))[:8]
}

// BytesPerPoint is the memory a sweep holds per point, rounded up: the
// point and its line of sweep.json (about 1.7 KB allocated per point with
// a 64-digit inputs digest, measured at 1e5 points) and its row of the
// aggregate.
const BytesPerPoint = 4096

// MemoryLimit bounds the memory a sweep's bookkeeping may take
// (BytesPerPoint per point): 262,144 points. A sweep past it would spend
// hours before its first point only resolving every point's inputs.
const MemoryLimit = 1 << 30

// CheckSize refuses a sweep whose points would need more than MemoryLimit
// of bookkeeping, with the estimate and the fix.
func CheckSize(params []Param, seeds int) error {
	n := float64(seeds)
	var parts []string
	for _, p := range params {
		n *= float64(len(p.Values))
		parts = append(parts, fmt.Sprintf("%d values of %s", len(p.Values), p.Key))
	}
	parts = append(parts, fmt.Sprintf("%d seeds", seeds))
	if est := n * BytesPerPoint; est > MemoryLimit {
		return fmt.Errorf("sweep: %s = %.3g points would need about %.1f GiB to track (%d KiB each), over the %d GiB limit (%d points); sweep fewer values or seeds, or split the sweep into several",
			strings.Join(parts, " x "), n, est/(1<<30), BytesPerPoint>>10, MemoryLimit>>30, MemoryLimit/BytesPerPoint)
	}
	return nil
}

// CheckParams reports what would make Expand's output empty or ambiguous:
// no seeds, a repeated seed, an empty or repeated key, a key with no values
// or a repeated value.
func CheckParams(params []Param, seeds []uint64) error {
	if len(seeds) == 0 {
		return fmt.Errorf("sweep: no seeds: give at least one seed (e.g. --seeds 1,2,3)")
	}
	seen := map[uint64]bool{}
	for _, s := range seeds {
		if seen[s] {
			return fmt.Errorf("sweep: seed %d is listed twice: each seed must be distinct", s)
		}
		seen[s] = true
	}
	keys := map[string]bool{}
	for i, p := range params {
		if p.Key == "" {
			return fmt.Errorf("sweep: parameter %d has an empty key: give a scenario key path such as host.background_load", i+1)
		}
		if keys[p.Key] {
			return fmt.Errorf("sweep: parameter %q is swept twice: list all its values once", p.Key)
		}
		keys[p.Key] = true
		if len(p.Values) == 0 {
			return fmt.Errorf("sweep: parameter %q has no values: give at least one", p.Key)
		}
		vals := map[string]bool{}
		for _, v := range p.Values {
			if vals[v] {
				return fmt.Errorf("sweep: parameter %q lists value %q twice", p.Key, v)
			}
			vals[v] = true
		}
	}
	return nil
}

// checkPoints validates a point list given to Run: unique indices and IDs,
// IDs safe as directory names.
func checkPoints(points []Point) error {
	ids := map[string]int{}
	idx := map[int]string{}
	for _, p := range points {
		if !safeID(p.ID) {
			return fmt.Errorf("sweep: point %d has ID %q: an ID must be non-empty, at most 100 characters of [a-z0-9-] and not start with '-' (use Expand)", p.Index, p.ID)
		}
		if j, ok := ids[p.ID]; ok {
			return fmt.Errorf("sweep: points %d and %d share the ID %q (is a seed or a value listed twice?)", j, p.Index, p.ID)
		}
		ids[p.ID] = p.Index
		if p.Index < 0 {
			return fmt.Errorf("sweep: point %s has negative index %d", p.ID, p.Index)
		}
		if other, ok := idx[p.Index]; ok {
			return fmt.Errorf("sweep: points %s and %s share index %d", other, p.ID, p.Index)
		}
		idx[p.Index] = p.ID
	}
	return nil
}

func safeID(id string) bool {
	if id == "" || len(id) > 100 || id[0] == '-' {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}
