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
		return &lineProgress{w: opts.Progress, total: todo + skipped, n: skipped}
	}
	// The bar counts only the points this run executes, so its rate and
	// time left are not inflated by points skipped on resume.
	return &barProgress{bar: prog.NewBar(opts.Progress, "sweep", "points", todo, time.Now)}
}

type lineProgress struct {
	w        io.Writer
	total, n int
}

func (l *lineProgress) done(id string) {
	l.n++
	fmt.Fprintf(l.w, "sweep: %d/%d points done (%s)\n", l.n, l.total, id)
}
func (l *lineProgress) finish() {}

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
