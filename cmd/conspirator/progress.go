package main

import (
	"fmt"
	"io"

	"github.com/schollz/progressbar/v3"
)

// runProgress is the progress bar of a single run: it appears on the
// first finished replay of a cluster section (data-path runs take a
// second and show none) and counts policy replays over all seeds. Only on
// a terminal: logs and pipes get the results and nothing else.
func runProgress(w io.Writer, terminal bool) func(done, total int) {
	if !terminal {
		return nil
	}
	var bar *progressbar.ProgressBar
	return func(done, total int) {
		if bar == nil {
			bar = progressbar.NewOptions(total,
				progressbar.OptionSetWriter(w),
				progressbar.OptionSetDescription("run"),
				progressbar.OptionShowCount(),
				progressbar.OptionShowIts(),
				progressbar.OptionSetItsString("replays"),
				progressbar.OptionSetPredictTime(true),
				progressbar.OptionSetElapsedTime(true),
				progressbar.OptionSetWidth(30),
				progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
			)
		}
		bar.Set(done)
	}
}
