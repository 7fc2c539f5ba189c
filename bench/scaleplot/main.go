// Command scaleplot reads the output of BenchmarkScale (sim) on standard
// input and writes scale.csv and the log-log figure scale.{png,svg,pdf}
// with the fitted slopes into the directory given by -o; bench/scale.sh
// runs both.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
	"github.com/conspirator-sim/conspirator/reports"
)

func main() {
	out := flag.String("o", "bench/out", "directory for scale.csv and the figure")
	flag.Parse()
	pts, err := reports.ParseScaleBench(os.Stdin)
	if err == nil {
		err = os.MkdirAll(*out, 0o755)
	}
	var sum string
	if err == nil {
		sum, err = reports.WriteScaling(atomicfs.OS, *out, pts)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "scaleplot:", err)
		os.Exit(2)
	}
	fmt.Print(sum)
	fmt.Printf("written: %s/scale.csv, %s/scale.{png,svg,pdf}\n", *out, *out)
}
