package sweep

import (
	"fmt"
	"io"

	"github.com/schollz/progressbar/v3"
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
	// The bar counts only the points this run executes, so its rate and ETA
	// are not inflated by points skipped on resume.
	bar := progressbar.NewOptions(todo,
		progressbar.OptionSetWriter(opts.Progress),
		progressbar.OptionSetDescription("sweep"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("points"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(opts.Progress) }),
	)
	return barProgress{bar}
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

type barProgress struct{ bar *progressbar.ProgressBar }

func (b barProgress) done(id string) {
	b.bar.Describe("sweep " + id)
	b.bar.Add(1)
}
func (b barProgress) finish() { b.bar.Exit() }

// plural writes "1 worker", "2 workers".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
