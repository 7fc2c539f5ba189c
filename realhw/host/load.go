package host

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// LoadConfig configures a background CPU load: Workers busy threads, each
// spinning for Fraction of every Period and sleeping for the rest, the load
// that `stress-ng --cpu N --cpu-load P` produces. One worker per core at
// duty u is the "per-core" background model of hw.HostCPU.
type LoadConfig struct {
	// Fraction is the duty cycle u of every worker, in [0, 0.9]. Above
	// 0.9 a 2-core test machine stops answering, so it is refused.
	Fraction float64
	// Workers is the number of busy threads; 0 means runtime.NumCPU().
	Workers int
	// Period is one spin+sleep cycle; 0 means 10 ms. It must be at least
	// 1 ms: shorter sleeps are dominated by timer slack.
	Period time.Duration
	// MaxDuration stops the workers on its own after this long even if Stop
	// is never called; 0 means 2 minutes.
	MaxDuration time.Duration
}

// MaxLoadFraction is the largest background duty cycle accepted.
const MaxLoadFraction = 0.9

func (c *LoadConfig) defaults() error {
	if !(c.Fraction >= 0 && c.Fraction <= MaxLoadFraction) {
		return fmt.Errorf("host: background load fraction %v must be in [0, %v]", c.Fraction, MaxLoadFraction)
	}
	if c.Workers < 0 || c.Workers > 1024 {
		return fmt.Errorf("host: background load workers %d must be in [0, 1024] (0 = one per CPU)", c.Workers)
	}
	if c.Workers == 0 {
		c.Workers = runtime.NumCPU()
	}
	if c.Period == 0 {
		c.Period = 10 * time.Millisecond
	}
	if c.Period < time.Millisecond || c.Period > time.Second {
		return fmt.Errorf("host: background load period %v must be in [1ms, 1s]", c.Period)
	}
	if c.MaxDuration == 0 {
		c.MaxDuration = 2 * time.Minute
	}
	if c.MaxDuration < 0 {
		return fmt.Errorf("host: background load max duration %v must be > 0", c.MaxDuration)
	}
	return nil
}

// Load is a running background load; Stop ends it.
type Load struct {
	cfg     LoadConfig
	stop    atomic.Bool
	wg      sync.WaitGroup
	mu      sync.Mutex
	workers []WorkerUsage
	stopped bool
	report  LoadReport
	finish  func()
}

// WorkerUsage is what one worker thread did.
type WorkerUsage struct {
	Wall time.Duration // time from its start to its end
	CPU  time.Duration // CPU time from getrusage(RUSAGE_THREAD); 0 if unavailable
}

// LoadReport summarizes a finished load: the measured duty cycle is the
// workers' CPU time over their wall time, averaged.
type LoadReport struct {
	Fraction float64 // configured duty cycle
	Workers  []WorkerUsage
	Measured float64 // mean CPU/wall over the workers (0 with no workers)
	Err      error   // first CPU-time reading error, if any
}

// StartLoad starts the workers and returns at once. With Fraction 0 no
// thread is started.
func StartLoad(cfg LoadConfig) (*Load, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	l := &Load{cfg: cfg}
	if cfg.Fraction == 0 {
		return l, nil
	}
	l.workers = make([]WorkerUsage, cfg.Workers)
	errs := make([]error, cfg.Workers)
	for i := range cfg.Workers {
		l.wg.Add(1)
		// Stagger the workers' phases evenly over one period, as
		// independently started stressors drift apart: with aligned phases
		// every core would be busy at once and a foreground thread could
		// never find the idle one.
		offset := time.Duration(i) * cfg.Period / time.Duration(cfg.Workers)
		go func() {
			defer l.wg.Done()
			l.workers[i], errs[i] = l.work(offset)
		}()
	}
	l.finish = func() {
		for _, e := range errs {
			if e != nil {
				l.report.Err = e
				break
			}
		}
	}
	return l, nil
}

// work is one worker: spin for the busy part of each period, sleep for the
// rest, until stopped or MaxDuration has passed.
func (l *Load) work(offset time.Duration) (WorkerUsage, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0, err := ThreadCPUTime()
	start := time.Now()
	time.Sleep(offset)
	busy := time.Duration(float64(l.cfg.Period) * l.cfg.Fraction)
	deadline := start.Add(l.cfg.MaxDuration)
	for period := start.Add(offset); !l.stop.Load() && period.Before(deadline); period = period.Add(l.cfg.Period) {
		spinEnd := period.Add(busy)
		for time.Now().Before(spinEnd) {
			// Busy: the whole point is to hold the core.
		}
		if d := time.Until(period.Add(l.cfg.Period)); d > 0 {
			time.Sleep(d)
		} else {
			// Fell behind (preempted): restart the cycle from now rather
			// than spinning through the missed periods back to back.
			period = time.Now().Add(-l.cfg.Period)
		}
	}
	u := WorkerUsage{Wall: time.Since(start)}
	if err == nil {
		var cpu1 time.Duration
		cpu1, err = ThreadCPUTime()
		u.CPU = cpu1 - cpu0
	}
	return u, err
}

// Stop ends the load, waits for the workers (at most one period) and
// reports their usage. Calling it again returns the same report.
func (l *Load) Stop() LoadReport {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return l.report
	}
	l.stopped = true
	l.stop.Store(true)
	l.wg.Wait()
	if l.finish != nil {
		l.finish()
	}
	l.report.Fraction = l.cfg.Fraction
	l.report.Workers = l.workers
	sum := 0.0
	for _, w := range l.workers {
		if w.Wall > 0 {
			sum += w.CPU.Seconds() / w.Wall.Seconds()
		}
	}
	if len(l.workers) > 0 {
		l.report.Measured = sum / float64(len(l.workers))
	}
	return l.report
}
