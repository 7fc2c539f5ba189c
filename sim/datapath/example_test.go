package datapath_test

import (
	"fmt"

	"github.com/conspirator-sim/conspirator/sim/datapath"
)

// The paper's cost table, computed from its inputs.
func ExampleCostTable() {
	lines, err := datapath.CostTable(datapath.PaperCostRows())
	if err != nil {
		panic(err)
	}
	for _, l := range lines {
		fmt.Printf("%-8s $%4.0f %3.0fW %5.0f  cost-eff %.2f (%+.0f%%)  power-eff %.2f (%+.0f%%)\n",
			l.Name, l.PriceUSD, l.PowerW, l.Throughput, l.CostEffectiveness, l.CostGainPct, l.PowerEfficiency, l.PowerGainPct)
	}
	// Output:
	// host CPU $1000 800W  1000  cost-eff 1.00 (+0%)  power-eff 1.25 (+0%)
	// SmartNIC $ 231 150W   270  cost-eff 1.17 (+17%)  power-eff 1.80 (+44%)
}
