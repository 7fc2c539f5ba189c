package sweep

import (
	"fmt"
	"io"
	"time"

	prog "github.com/conspirator-sim/conspirator/internal/progress"
)

// progress reports finished points to a person; it never touches result
// files. done is called from one goroutine only.
type progress interface {
	done(id string)
	finish()
}

type noProgress struct{}

func (noProgress) done(string) {}
func (noProgress) finish()     {}

func newProgress(opts Options, todo, skipped int) progress {
	if opts.Progress == nil {
		return noProgress{}
	}
	shard := ""
	if opts.Shards > 1 {
		shard = fmt.Sprintf("shard %d of %d, ", opts.Shard, opts.Shards)
	}
	fmt.Fprintf(opts.Progress, "sweep: %d points to run in %s (%s%d already done, %s)\n",
		todo, opts.Dir, shard, skipped, plural(opts.Jobs, "worker"))
	if !opts.IsTerminal {
		return newLineProgress(opts.Progress, todo+skipped, skipped)
	}
	// The bar counts only the points this run executes, so its rate and
	// time left are not inflated by points skipped on resume.
	return &barProgress{bar: prog.NewBar(opts.Progress, "sweep", "points", todo, time.Now)}
}

// lineProgress writes a line at every tenth of the points (a count, so
// that the log is the same whatever the machine's speed: 800 points give
// 10 lines, not 800) and at the last point; a sweep stopped between two
// steps says where it stopped when it finishes.
type lineProgress struct {
	w              io.Writer
	total, n, step int
	// shown is the count of the last line written; last the point that
	// finished last.
	shown int
	last  string
}

// progressLines is how many lines a sweep's log has at most, besides its
// first and the last point's.
const progressLines = 10

func newLineProgress(w io.Writer, total, skipped int) *lineProgress {
	step := max(1, (total+progressLines-1)/progressLines)
	return &lineProgress{w: w, total: total, n: skipped, step: step, shown: skipped}
}

func (l *lineProgress) done(id string) {
	l.n++
	l.last = id
	if l.n%l.step == 0 || l.n == l.total {
		l.line()
	}
}

func (l *lineProgress) line() {
	l.shown = l.n
	fmt.Fprintf(l.w, "sweep: %d/%d points done (%s)\n", l.n, l.total, l.last)
}

func (l *lineProgress) finish() {
	if l.n > l.shown {
		l.line()
	}
}

type barProgress struct {
	bar *prog.Bar
	n   int
}

func (b *barProgress) done(id string) {
	b.n++
	b.bar.Set(float64(b.n), id)
}
func (b *barProgress) finish() { b.bar.Exit() }

// plural writes "1 worker", "2 workers".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
