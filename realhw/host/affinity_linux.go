//go:build linux

package host

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// allowedCPUs lists the CPUs the calling thread may run on, ascending; all
// of runtime.NumCPU's when the mask cannot be read.
func allowedCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err == nil {
		var cpus []int
		for i := range len(set) * 64 {
			if set.IsSet(i) {
				cpus = append(cpus, i)
			}
		}
		if len(cpus) > 0 {
			return cpus
		}
	}
	return allCPUs()
}

// pinThread binds the calling OS thread to one CPU.
func pinThread(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("host: pinning a thread to CPU %d: %w", cpu, err)
	}
	return nil
}

// pinProcess binds every thread of this process to one CPU, as `taskset -c
// CPU` would have at start; threads created later inherit it from their
// creator. The returned function gives every thread its previous mask back
// (threads born while pinned get the mask the process had).
func pinProcess(cpu int) (restore func(), err error) {
	tids, err := threads()
	if err != nil {
		return nil, err
	}
	var orig unix.CPUSet
	if err := unix.SchedGetaffinity(0, &orig); err != nil {
		return nil, fmt.Errorf("host: reading the CPU mask: %w", err)
	}
	saved := map[int]unix.CPUSet{}
	var one unix.CPUSet
	one.Set(cpu)
	for _, tid := range tids {
		var m unix.CPUSet
		if unix.SchedGetaffinity(tid, &m) != nil {
			continue // the thread has exited
		}
		if err := unix.SchedSetaffinity(tid, &one); err != nil {
			restoreThreads(saved, orig)
			return nil, fmt.Errorf("host: pinning thread %d to CPU %d: %w", tid, cpu, err)
		}
		saved[tid] = m
	}
	return func() { restoreThreads(saved, orig) }, nil
}

func restoreThreads(saved map[int]unix.CPUSet, orig unix.CPUSet) {
	tids, _ := threads()
	for _, tid := range tids {
		m, ok := saved[tid]
		if !ok {
			m = orig
		}
		_ = unix.SchedSetaffinity(tid, &m) // a thread may have exited meanwhile
	}
}

// threads lists this process's thread ids.
func threads() ([]int, error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, fmt.Errorf("host: listing this process's threads: %w", err)
	}
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}
