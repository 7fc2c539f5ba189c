//go:build linux

package host

import (
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// ThreadCPUTime returns the CPU time (user + system) the calling OS thread
// has used, from getrusage(RUSAGE_THREAD). The caller must hold its OS
// thread (runtime.LockOSThread) between two readings, or the difference
// mixes threads.
//
// Resolution: Linux folds the running thread's time into its total at
// scheduler events (a block, a wake-up, a tick), so one reading may lag a
// running thread by up to a tick (1-4 ms); differences across a blocking
// call are exact to the nanosecond. Sum over many operations before
// dividing by bytes.
func ThreadCPUTime() (time.Duration, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0, fmt.Errorf("host: getrusage(RUSAGE_THREAD): %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// threadClock is the calling thread's CPU time from
// clock_gettime(CLOCK_THREAD_CPUTIME_ID): exact at any instant (it adds
// the running slice), which the load generator's duty-cycle control reads
// once a period.
func threadClock() (time.Duration, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, fmt.Errorf("host: clock_gettime(CLOCK_THREAD_CPUTIME_ID): %w", err)
	}
	return time.Duration(ts.Nano()), nil
}
