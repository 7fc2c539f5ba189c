package engine_test

import (
	"fmt"

	"github.com/conspirator-sim/conspirator/engine"
)

// A tiny M/M/1 queue on the engine: Poisson arrivals every 1ms on average,
// exponential service of mean 0.8ms (utilisation 0.8), one server. Models
// are callbacks and a little state; every random number comes from a named
// stream of the run's seed, so the output below is the same on every run
// and every machine. Queueing theory gives the mean response time
// 1/(mu - lambda) = 1/(1.25 - 1) ms = 4ms; the simulated mean over 20000
// customers lands near it.
func Example() {
	const seed = 1
	sim := engine.New(engine.NewQueue(engine.QueueCalendar))
	arrivals := engine.NewStream(seed, "arrivals")
	service := engine.NewStream(seed, "service")

	var line []engine.Time // arrival times of waiting customers, FIFO
	busy := false
	served, total := 0, engine.Time(0)

	var startService func(arrived engine.Time)
	startService = func(arrived engine.Time) {
		busy = true
		sim.MustAfter(engine.Milliseconds(service.Exp(0.8)), func() {
			served++
			total += sim.Now() - arrived
			busy = false
			if len(line) > 0 {
				next := line[0]
				line = line[1:]
				startService(next)
			}
			if served == 20000 {
				sim.Stop()
			}
		})
	}
	var arrive func()
	arrive = func() {
		sim.MustAfter(engine.Milliseconds(arrivals.Exp(1)), arrive)
		if busy {
			line = append(line, sim.Now())
			return
		}
		startService(sim.Now())
	}
	arrive()
	sim.Run()

	fmt.Printf("served %d customers in %v of simulated time\n", served, sim.Now())
	fmt.Printf("mean response time %v (theory 4ms)\n", total/engine.Time(served))
	// Output:
	// served 20000 customers in 19.9441s of simulated time
	// mean response time 3.9029ms (theory 4ms)
}
