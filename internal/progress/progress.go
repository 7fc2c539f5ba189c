// Package progress tells a person how far a long computation has come: a
// count of items (replays, sweep points), fractional while an item runs,
// with the rate and the time left measured from this run's own start.
//
// It never touches results: what it prints goes to a terminal, and the
// simulation calls it through a plain func, so a run without a terminal
// does no work for it. Both the rate and the time left are the cumulative
// average (items done / time since start): progressbar's own rate is the
// mean of the rates of its last ten half-second windows, and a window
// opens at the first Add, not at the start, so two points that finish a
// second apart after a minute's work read as one point a second.
package progress

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Func is told the work done so far, in items (fractional within an item
// that is running), of total items. Calls may come from any goroutine one
// at a time; done never decreases.
type Func func(done float64, total int)

// Parts splits a total of n items, run on any goroutines, into reporters
// of one item each, and tells report their sum. The zero of report is no
// report: every method is then a no-op.
type Parts struct {
	mu     sync.Mutex
	report Func
	frac   []float64
	sum    float64
}

// NewParts returns the parts of n items reporting to report (nil: none).
func NewParts(report Func, n int) *Parts {
	if report == nil {
		return &Parts{}
	}
	return &Parts{report: report, frac: make([]float64, n)}
}

// Item returns the reporter of item i: it is told the item's fraction
// done, 0 to 1 (1 when it is finished); a smaller fraction than the last
// one told is ignored. Nil when there is no report, so that a caller in a
// hot loop tests one pointer.
func (p *Parts) Item(i int) func(frac float64) {
	if p.report == nil {
		return nil
	}
	return func(f float64) {
		p.mu.Lock()
		defer p.mu.Unlock()
		f = math.Min(f, 1)
		if f <= p.frac[i] {
			return
		}
		p.sum += f - p.frac[i]
		p.frac[i] = f
		p.report(p.sum, len(p.frac))
	}
}

// Done marks item i finished (Item(i)(1)).
func (p *Parts) Done(i int) {
	if f := p.Item(i); f != nil {
		f(1)
	}
}

// Meter turns done-of-total into the words a bar shows: "3.4/80 replays,
// 1.2 replays/min, about 1h3m left". Its clock is given, so that what it
// says can be tested.
type Meter struct {
	Unit  string // plural noun: "replays", "points"
	Now   func() time.Time
	start time.Time
}

// Start sets the meter's zero: the rate counts from here.
func (m *Meter) Start() { m.start = m.Now() }

// Text is the line for done of total items.
func (m *Meter) Text(done float64, total int) string {
	var b strings.Builder
	if math.Abs(done-math.Round(done)) < 1e-6 { // sums of fractions: 40.0000001
		done = math.Round(done)
		fmt.Fprintf(&b, "%.0f/%d %s", done, total, m.Unit)
	} else {
		// Truncated, not rounded: 3.99 is not yet 4.0.
		fmt.Fprintf(&b, "%.1f/%d %s", math.Floor(done*10)/10, total, m.Unit)
	}
	// No rate in the first second: a rate of a few milliseconds' work
	// says nothing of the rest.
	el := m.Now().Sub(m.start).Seconds()
	if done <= 0 || el < 1 {
		return b.String()
	}
	rate := done / el // items a second
	switch {
	case rate >= 1:
		fmt.Fprintf(&b, ", %s %s/s", num(rate), m.Unit)
	case rate*60 >= 1:
		fmt.Fprintf(&b, ", %s %s/min", num(rate*60), m.Unit)
	default:
		fmt.Fprintf(&b, ", %s %s/h", num(rate*3600), m.Unit)
	}
	if left := (float64(total) - done) / rate; left > 0 {
		fmt.Fprintf(&b, ", about %s left", short(time.Duration(left*float64(time.Second))))
	}
	return b.String()
}

// num writes a rate with three significant digits, never in exponent
// form: 0.75, 1.97, 13.3, 22600.
func num(x float64) string {
	if x >= 100 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.3g", x)
}

// short writes a duration to its two leading units: 51h20m, 4m10s, 12s.
func short(d time.Duration) string {
	switch {
	case d >= time.Hour:
		d = d.Round(time.Minute)
		return fmt.Sprintf("%dh%dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= 10*time.Second:
		return d.Round(time.Second).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

// steps is the bar's resolution: it is drawn in per-mille of the total,
// so that a fractional item moves it.
const steps = 1000

// Bar is a terminal progress bar for total items: a Meter's text beside
// progressbar's bar and elapsed time. Done ends it with a newline.
type Bar struct {
	bar      *progressbar.ProgressBar
	meter    Meter
	desc     string
	total    int
	last     int
	lastDone float64
	detail   string
	drawn    time.Time
}

// NewBar starts a bar on w; now is the clock (time.Now in the binary).
func NewBar(w io.Writer, desc, unit string, total int, now func() time.Time) *Bar {
	b := &Bar{meter: Meter{Unit: unit, Now: now}, desc: desc, total: total, last: -1}
	b.meter.Start()
	b.bar = progressbar.NewOptions(steps,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc+" "+b.meter.Text(0, total)),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(false), // the meter says the time left
		progressbar.OptionSetWidth(30),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
	return b
}

// Set shows done of the bar's total items; detail, if any, follows the
// count (a sweep's last point).
func (b *Bar) Set(done float64, detail string) {
	// Floor, not round: the bar is full (and ends its line) only when
	// every item is done, not at 239.96 of 240.
	n := min(int(math.Floor(steps*done/float64(b.total)+1e-6)), steps)
	if n == b.last && detail == b.detail {
		return // a fraction too small to move the bar: no redraw
	}
	// A whole item or a new detail is drawn at once; a fraction at most
	// ten times a second (progressbar's own throttle would skip the
	// second of the two draws below).
	now := b.meter.Now()
	whole := math.Floor(done+1e-6) != math.Floor(b.lastDone+1e-6)
	if !whole && detail == b.detail && n < steps && now.Sub(b.drawn) < 100*time.Millisecond {
		return
	}
	b.last, b.detail, b.lastDone, b.drawn = n, detail, done, now
	text := b.desc + " " + b.meter.Text(done, b.total)
	if detail != "" {
		text += " (" + detail + ")"
	}
	// Each call draws the line; the second has both the new count and
	// the new words. The last one, at the total, ends the line, so it
	// goes second there.
	if n == steps {
		b.bar.Describe(text)
		b.bar.Set(n)
		return
	}
	b.bar.Set(n)
	b.bar.Describe(text)
}

// Exit ends the bar where it is (a run that failed or was stopped); a
// finished bar has ended its line already.
func (b *Bar) Exit() {
	if !b.bar.IsFinished() {
		b.bar.Exit()
	}
}
