package stats_test

import (
	"fmt"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/engine/stats"
)

func ExampleTally() {
	var waits stats.Tally
	for _, w := range []float64{1, 2, 3, 4, 5} {
		waits.Add(w)
	}
	fmt.Println(waits.Mean(), waits.Variance(), waits.Quantile(0.5))
	// Output: 3 2.5 3
}

func ExampleTimeWeighted() {
	// One server busy from 1s to 3s, observed until 4s: utilisation 0.5.
	var busy stats.TimeWeighted
	busy.Set(1*engine.Second, 1)
	busy.Set(3*engine.Second, 0)
	fmt.Println(busy.Mean(4 * engine.Second))
	// Output: 0.5
}

func ExampleMeanCI() {
	// Means of five independent replications.
	m, hw := stats.MeanCI([]float64{1, 2, 3, 4, 5}, 0.95)
	fmt.Printf("%.3f ± %.3f\n", m, hw)
	// Output: 3.000 ± 1.963
}
