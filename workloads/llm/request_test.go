package llm

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
)

// Four requests at 0, 1, 2 and 4 s: duration 4 s, 3 gaps, rate 0.75/s.
// Prompts 30 10 40 20 sorted 10 20 30 40: mean 25, nearest-rank p50 the
// ceil(0.5*4) = 2nd (20), p99 the ceil(3.96) = 4th (40). Outputs 1 1 1 100:
// mean 103/4 = 25.75, p50 1, p99 100.
func TestStats(t *testing.T) {
	s := engine.Second
	tr := Trace{Requests: []Request{req(0, 0, 30, 1), req(1, 1*s, 10, 1), req(2, 2*s, 40, 100), req(3, 4*s, 20, 1)}}
	want := Stats{Requests: 4, Duration: 4 * s, Rate: 0.75,
		Prompt: TokenStats{Mean: 25, P50: 20, P99: 40, Max: 40},
		Output: TokenStats{Mean: 25.75, P50: 1, P99: 100, Max: 100}}
	if got := tr.Stats(); got != want {
		t.Errorf("Stats() = %+v; want %+v", got, want)
	}
	// Stats sorts copies: the trace keeps its order.
	if tr.Requests[0].PromptTokens != 30 {
		t.Errorf("Stats reordered the trace")
	}
	if got := (Trace{}).Stats(); got != (Stats{}) {
		t.Errorf("empty trace: %+v; want zeros", got)
	}
	one := Trace{Requests: []Request{req(0, 7*s, 5, 6)}}
	if got := one.Stats(); got.Duration != 0 || got.Rate != 0 || got.Prompt.P99 != 5 || got.Output.Mean != 6 {
		t.Errorf("one request: %+v; want duration 0, rate 0, p99 5, output mean 6", got)
	}
	if got := tr.Stats().String(); !strings.HasPrefix(got, "4 requests over 4s (0.75/s); prompt tokens mean 25.0 p50 20 p99 40 max 40") {
		t.Errorf("String() = %q", got)
	}
}

func threeAt(ts ...engine.Time) Trace {
	tr := Trace{Name: "t", Format: FormatAzure, Notes: []string{"read"}}
	for i, a := range ts {
		tr.Requests = append(tr.Requests, req(i, a, 10+i, 1, uint64(i)))
	}
	return tr
}

// Arrivals 0, 1 s, 3 s. Factor 2: 0, 0.5 s, 1.5 s; 0.5: 0, 2 s, 6 s; 3:
// 1 s / 3 = 333,333,333.3 ns rounds to 333,333,333, 3 s / 3 = 1 s.
func TestScale(t *testing.T) {
	src := threeAt(0, engine.Second, 3*engine.Second)
	for _, c := range []struct {
		factor float64
		want   []engine.Time
	}{
		{2, []engine.Time{0, engine.Second / 2, 3 * engine.Second / 2}},
		{0.5, []engine.Time{0, 2 * engine.Second, 6 * engine.Second}},
		{3, []engine.Time{0, 333_333_333, engine.Second}},
		{1, []engine.Time{0, engine.Second, 3 * engine.Second}},
	} {
		got, err := Scale(src, c.factor)
		if err != nil {
			t.Fatal(err)
		}
		var at []engine.Time
		for i, r := range got.Requests {
			at = append(at, r.Arrival)
			if r.ID != i || r.PromptTokens != 10+i || r.BlockHashes[0] != uint64(i) {
				t.Errorf("factor %g changed request %d: %+v", c.factor, i, r)
			}
		}
		if !slices.Equal(at, c.want) {
			t.Errorf("factor %g: arrivals %v; want %v", c.factor, at, c.want)
		}
		if n := got.Notes; len(n) != 2 || n[0] != "read" || !strings.HasPrefix(n[1], "rate scaled by") {
			t.Errorf("factor %g: notes %q", c.factor, n)
		}
	}
	if !reflect.DeepEqual(src, threeAt(0, engine.Second, 3*engine.Second)) {
		t.Errorf("Scale modified its input: %+v", src)
	}
	for _, f := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, err := Scale(src, f); err == nil || !strings.Contains(err.Error(), "want a finite factor > 0") {
			t.Errorf("Scale(%g): %v; want a refusal", f, err)
		}
	}
	// A year at a thousandth of the rate is 1000 years: past the horizon.
	year := threeAt(0, 365*24*engine.Hour)
	_, err := Scale(year, 1e-3)
	wantErr(t, err, "rate factor 0.001 puts request 1 at 3.154e+10 s, past the simulator's horizon (100 years, engine.Horizon); use a factor of at least 0.01")
}

// Arrivals 0..4 s. [1 s, 3 s) holds the requests at 1 and 2 s, re-based
// to 0 and 1 s, their IDs kept.
func TestWindow(t *testing.T) {
	src := threeAt(0, engine.Second, 2*engine.Second, 3*engine.Second, 4*engine.Second)
	for _, c := range []struct {
		from, to engine.Time
		ids      []int
		at       []engine.Time
	}{
		{engine.Second, 3 * engine.Second, []int{1, 2}, []engine.Time{0, engine.Second}},
		{0, 10 * engine.Second, []int{0, 1, 2, 3, 4}, []engine.Time{0, engine.Second, 2 * engine.Second, 3 * engine.Second, 4 * engine.Second}},
		{engine.Second + 1, 2*engine.Second + 1, []int{2}, []engine.Time{engine.Second - 1}},
		{5 * engine.Second, 6 * engine.Second, nil, nil},
		{4 * engine.Second, 4*engine.Second + 1, []int{4}, []engine.Time{0}},
	} {
		got, err := Window(src, c.from, c.to)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int
		var at []engine.Time
		for _, r := range got.Requests {
			ids, at = append(ids, r.ID), append(at, r.Arrival)
		}
		if !slices.Equal(ids, c.ids) || !slices.Equal(at, c.at) {
			t.Errorf("Window(%s, %s): ids %v arrivals %v; want %v %v", c.from, c.to, ids, at, c.ids, c.at)
		}
	}
	if got, _ := Window(src, engine.Second, 3*engine.Second); got.Notes[1] != "window [1s, 3s): 2 of 5 requests, arrivals re-based to 1s" {
		t.Errorf("note %q", got.Notes[1])
	}
	if src.Requests[1].Arrival != engine.Second {
		t.Errorf("Window modified its input")
	}
	for _, c := range [][2]engine.Time{{-1, engine.Second}, {engine.Second, engine.Second}, {2 * engine.Second, engine.Second}} {
		_, err := Window(src, c[0], c[1])
		wantErr(t, err, "want 0 <= from < to")
	}
}
