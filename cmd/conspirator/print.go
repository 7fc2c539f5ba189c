package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/conspirator-sim/conspirator/sim"
)

// printSummary writes the key metrics of a run as aligned tables.
func printSummary(w io.Writer, s *sim.Summary) {
	fmt.Fprintf(w, "scenario %s, seed %d, conspirator %s\n", s.Scenario, s.Seed, s.Version)
	if len(s.Paths) > 0 {
		if s.Inputs != nil && s.Inputs.DataPath != nil {
			fmt.Fprintf(w, "background CPU load %s\n", s.Inputs.DataPath.Host.BackgroundLoad)
		}
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "path\tmean us\tp50 us\tp99 us\t±95% us\treq/s\thost CPU us/req\tSoC util\tGPU util\tdropped\t")
		for _, p := range s.Paths {
			flag := ""
			if p.Unstable {
				flag = "  UNSTABLE: " + p.UnstableReason
			}
			fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.0f\t%.1f\t%.3f\t%.2f\t%d\t%s\n",
				p.Name, p.Latency.Mean, p.Latency.P50, p.Latency.P99, p.Latency.CI95Mean,
				p.ThroughputRPS, p.HostCPUUsPerRequest, p.SoCUtilization, p.GPUUtilization, p.Dropped, flag)
		}
		tw.Flush()
		if s.Gap != nil {
			fmt.Fprintf(w, "\nconspirator vs host-rdma: %.1f%% lower mean end-to-end time (paper: 15%%)\n", *s.Gap)
		}
	}
	if len(s.Cost) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "processor\tprice\tpower\tthroughput\tcost-effectiveness\tpower efficiency\t")
		for _, c := range s.Cost {
			fmt.Fprintf(tw, "%s\t$%.0f\t%.0f W\t%.0f\t%.2f (%+.0f%%)\t%.2f (%+.0f%%)\t\n",
				c.Name, c.PriceUSD, c.PowerW, c.Throughput, c.CostEffectiveness, c.CostGainPct, c.PowerEfficiency, c.PowerGainPct)
		}
		tw.Flush()
	}
}
