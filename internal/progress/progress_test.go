package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// A fake clock, advanced by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time        { return c.t }
func (c *clock) after(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock                 { return &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }
func secs(s float64) time.Duration     { return time.Duration(s * float64(time.Second)) }
func at(c *clock, m *Meter, s float64) { c.t = m.start.Add(secs(s)) }
func textAt(c *clock, m *Meter, s float64, done float64, total int) string {
	at(c, m, s)
	return m.Text(done, total)
}

// The rate is items done over the time since the start, whatever the
// spacing of the finishes: two workers finishing a second apart every
// minute run 2 items a minute, not one a second (what progressbar's
// window average said for the first pair).
func TestMeterRateIsTheCumulativeAverage(t *testing.T) {
	c := newClock()
	m := &Meter{Unit: "points", Now: c.now}
	m.Start()
	for _, tc := range []struct {
		s    float64
		done float64
		want string
	}{
		{0, 0, "0/40 points"},
		{60, 1, "1/40 points, 1 points/min, about 39m0s left"},
		{61, 2, "2/40 points, 1.97 points/min, about 19m19s left"},
		{120, 3, "3/40 points, 1.5 points/min, about 24m40s left"},
		{121, 4, "4/40 points, 1.98 points/min, about 18m9s left"},
		{2, 20, "20/40 points, 10 points/s, about 2s left"},
		{7200, 1.5, "1.5/40 points, 0.75 points/h, about 51h20m left"},
		{3, 40, "40/40 points, 13.3 points/s"},
		{0.5, 40, "40/40 points"},
		{1, 39.9999999, "40/40 points, 40 points/s"},
		{1, 1000, "1000/40 points, 1000 points/s"},
	} {
		if got := textAt(c, m, tc.s, tc.done, 40); got != tc.want {
			t.Errorf("at %gs, %g done: %q, want %q", tc.s, tc.done, got, tc.want)
		}
	}
}

// Parts sum the fractions of items running side by side; a fraction that
// goes back is ignored; a nil report costs nothing.
func TestParts(t *testing.T) {
	var got []float64
	p := NewParts(func(done float64, total int) {
		if total != 3 {
			t.Errorf("total %d, want 3", total)
		}
		got = append(got, done)
	}, 3)
	a, b := p.Item(0), p.Item(2)
	a(0.5)
	b(0.25)
	a(0.4) // ignored
	p.Done(0)
	b(2) // capped at 1
	want := []float64{0.5, 0.75, 1.25, 2}
	if len(got) != len(want) {
		t.Fatalf("reports %v, want %v", got, want)
	}
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("reports %v, want %v", got, want)
		}
	}
	none := NewParts(nil, 3)
	if none.Item(1) != nil {
		t.Error("Item of a Parts without report is not nil")
	}
	none.Done(1) // no panic
}

// Reporters of many goroutines: the last report is the total, and the
// race detector sees the lock.
func TestPartsConcurrent(t *testing.T) {
	var last float64
	p := NewParts(func(done float64, _ int) { last = done }, 8)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := p.Item(i)
			for k := 1; k <= 100; k++ {
				f(float64(k) / 100)
			}
		}()
	}
	wg.Wait()
	if last < 8-1e-9 || last > 8+1e-9 {
		t.Errorf("last report %g, want 8", last)
	}
}

// The bar draws the meter's words and ends with a newline at the total.
func TestBar(t *testing.T) {
	c := newClock()
	var w bytes.Buffer
	b := NewBar(&w, "run", "replays", 4, c.now)
	c.after(30 * time.Second)
	b.Set(1.5, "")
	c.after(29 * time.Second)
	b.Set(3.9999, "") // not full yet: no newline
	if strings.Contains(w.String(), "\n") {
		t.Errorf("bar at 3.9999 of 4 ended its line: %q", w.String())
	}
	c.after(time.Second)
	b.Set(4, "")
	out := w.String()
	for _, want := range []string{"run 4/4 replays, 4 replays/min", "100%"} {
		if !strings.Contains(out, want) {
			t.Errorf("bar output %q lacks %q", out, want)
		}
	}
	if !strings.HasSuffix(out, "\n") {
		t.Errorf("finished bar %q does not end its line", out)
	}
}
