package main

import (
	"io"
	"time"

	"github.com/conspirator-sim/conspirator/internal/progress"
)

// runProgress is the progress bar of a single run: it appears when the
// first replay of a cluster or training section moves (data-path runs
// take a second and show none) and counts replays (seeds x policies),
// fractional within one, so a single long replay moves too. A section
// that starts a new count (training after cluster) starts a new bar. Only
// on a terminal: logs and pipes get the results and nothing else.
func runProgress(w io.Writer, terminal bool) progress.Func {
	if !terminal {
		return nil
	}
	var bar *progress.Bar
	var total int
	var last float64
	return func(done float64, n int) {
		if bar == nil || n != total || done < last {
			if bar != nil {
				bar.Exit()
			}
			bar, total = progress.NewBar(w, "run", "replays", n, time.Now), n
		}
		last = done
		bar.Set(done, "")
	}
}
