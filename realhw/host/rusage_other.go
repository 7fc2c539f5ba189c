//go:build !linux

package host

import (
	"errors"
	"time"
)

// ThreadCPUTime needs Linux's RUSAGE_THREAD; elsewhere it reports an error.
func ThreadCPUTime() (time.Duration, error) {
	return 0, errors.New("host: per-thread CPU time needs Linux (getrusage RUSAGE_THREAD)")
}

// threadClock needs Linux's CLOCK_THREAD_CPUTIME_ID; elsewhere the load
// generator falls back to the wall time it spun.
func threadClock() (time.Duration, error) {
	return 0, errors.New("host: per-thread CPU clock needs Linux")
}
