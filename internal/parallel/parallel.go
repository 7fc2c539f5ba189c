// Package parallel runs independent computations side by side.
package parallel

import "sync"

// Each calls fn(i) for every i in [0, n) on at most workers goroutines
// (at least one) and returns when every call has returned. The calls
// take indices in order; fn must write its results by index, never
// append, so that what it computes does not depend on which goroutine
// ran which index or when: that is the determinism of the seeds and
// policies run with it.
func Each(n, workers int, fn func(i int)) {
	workers = max(1, min(workers, n))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
