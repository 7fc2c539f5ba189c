package sweep

import (
	"strings"
	"testing"
)

func TestExpandOrderAndIDs(t *testing.T) {
	params := []Param{
		{Key: "load", Values: []string{"0", "0.8"}},
		{Key: "path", Values: []string{"tcp", "rdma", "conspirator"}},
	}
	pts := Expand(params, []uint64{7, 9})
	// 2 loads x 3 paths x 2 seeds = 12 points; first parameter slowest,
	// seed fastest: index 0 = (0,tcp,7), 1 = (0,tcp,9), 2 = (0,rdma,7),
	// ..., 6 = (0.8,tcp,7), 11 = (0.8,conspirator,9).
	if len(pts) != 12 {
		t.Fatalf("len = %d, want 12", len(pts))
	}
	cases := []struct {
		i          int
		load, path string
		seed       uint64
		prefix     string
	}{
		{0, "0", "tcp", 7, "p000-s7-"},
		{1, "0", "tcp", 9, "p000-s9-"},
		{2, "0", "rdma", 7, "p001-s7-"},
		{6, "0.8", "tcp", 7, "p003-s7-"},
		{11, "0.8", "conspirator", 9, "p005-s9-"},
	}
	for _, c := range cases {
		p := pts[c.i]
		if p.Index != c.i || p.Params[0].Value != c.load || p.Params[1].Value != c.path || p.Seed != c.seed || !strings.HasPrefix(p.ID, c.prefix) {
			t.Errorf("point %d = %+v, want load=%s path=%s seed=%d id %s...", c.i, p, c.load, c.path, c.seed, c.prefix)
		}
		if len(p.ID) != len(c.prefix)+8 || !safeID(p.ID) {
			t.Errorf("point %d ID %q: want prefix + 8 hex digits", c.i, p.ID)
		}
	}
	// Same combination, different seed: same hash; different combination:
	// different hash (SHA-256 of "load=0\npath=tcp\n" vs "...rdma").
	if pts[0].ID[len("p000-s7"):] != pts[1].ID[len("p000-s9"):] {
		t.Errorf("seeds of one combination have different hashes: %s %s", pts[0].ID, pts[1].ID)
	}
	if pts[0].ID[8:] == pts[2].ID[8:] {
		t.Errorf("different combinations share a hash: %s %s", pts[0].ID, pts[2].ID)
	}
	// Stable across calls (no map order, no randomness).
	again := Expand(params, []uint64{7, 9})
	for i := range pts {
		if pts[i].String() != again[i].String() {
			t.Fatalf("Expand not deterministic at %d: %s vs %s", i, pts[i], again[i])
		}
	}
}

func TestExpandEdgeCases(t *testing.T) {
	cases := []struct {
		name   string
		params []Param
		seeds  []uint64
		want   int
	}{
		{"no params: one point per seed", nil, []uint64{1, 2, 3}, 3},
		{"no seeds", []Param{{Key: "a", Values: []string{"1"}}}, nil, 0},
		{"empty value list", []Param{{Key: "a"}}, []uint64{1}, 0},
		{"1000 combinations widen the index to 3 digits", []Param{{Key: "a", Values: make([]string, 1000)}}, []uint64{1}, 1000},
	}
	for _, c := range cases {
		if got := len(Expand(c.params, c.seeds)); got != c.want {
			t.Errorf("%s: %d points, want %d", c.name, got, c.want)
		}
	}
	vals := make([]string, 1001)
	pts := Expand([]Param{{Key: "a", Values: vals}}, []uint64{1})
	if !strings.HasPrefix(pts[1000].ID, "p1000-") || !strings.HasPrefix(pts[0].ID, "p0000-") {
		t.Errorf("1001 combinations: IDs %s, %s, want 4-digit p0000/p1000", pts[0].ID, pts[1000].ID)
	}
}

func TestCheckParams(t *testing.T) {
	cases := []struct {
		params []Param
		seeds  []uint64
		want   string // substring of the error; "" for none
	}{
		{[]Param{{Key: "a", Values: []string{"1"}}}, []uint64{1}, ""},
		{nil, nil, "no seeds"},
		{nil, []uint64{1, 1}, "seed 1 is listed twice"},
		{[]Param{{Key: "", Values: []string{"1"}}}, []uint64{1}, "empty key"},
		{[]Param{{Key: "a", Values: []string{"1"}}, {Key: "a", Values: []string{"2"}}}, []uint64{1}, `"a" is swept twice`},
		{[]Param{{Key: "a"}}, []uint64{1}, `"a" has no values`},
		{[]Param{{Key: "a", Values: []string{"x", "x"}}}, []uint64{1}, `value "x" twice`},
	}
	for _, c := range cases {
		err := CheckParams(c.params, c.seeds)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("CheckParams(%v, %v) = %v, want error containing %q", c.params, c.seeds, err, c.want)
		}
	}
}

func TestCheckPoints(t *testing.T) {
	good := Expand([]Param{{Key: "a", Values: []string{"1", "2"}}}, []uint64{1})
	cases := []struct {
		name string
		pts  []Point
		want string
	}{
		{"expanded", good, ""},
		{"repeated ID", []Point{good[0], {Index: 5, ID: good[0].ID}}, "share the ID"},
		{"repeated index", []Point{good[0], {Index: 0, ID: "x"}}, "share index 0"},
		{"unsafe ID", []Point{{Index: 0, ID: "../etc"}}, "[a-z0-9-]"},
		{"empty ID", []Point{{Index: 0}}, "non-empty"},
		{"negative index", []Point{{Index: -1, ID: "a"}}, "negative index"},
	}
	for _, c := range cases {
		err := checkPoints(c.pts)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want error containing %q", c.name, err, c.want)
		}
	}
}
