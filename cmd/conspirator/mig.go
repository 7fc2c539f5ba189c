package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/mig"
	"github.com/spf13/cobra"
)

// migGPUs lists the catalog's MIG-capable GPUs, as the help and errors name
// them.
func migGPUs() string {
	var out []string
	for _, n := range gpu.Names() {
		if s, err := gpu.Lookup(n); err == nil && s.MIG != nil {
			out = append(out, n)
		}
	}
	return strings.Join(out, ", ")
}

// migGeometry looks up a GPU and its MIG geometry, with usage errors for an
// unknown or non-MIG GPU.
func migGeometry(name string) (*mig.Geometry, error) {
	spec, err := gpu.Lookup(name)
	if err != nil {
		return nil, usageError{err}
	}
	if spec.MIG == nil {
		return nil, usagef("GPU %s does not support MIG; MIG-capable GPUs: %s", spec.Name, migGPUs())
	}
	return spec.MIG, nil
}

func (a *app) migCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "mig",
		Short: "MIG partitioning: profiles and legal layouts of a GPU",
	}
	var maximal bool
	layouts := &cobra.Command{
		Use:   "layouts GPU",
		Short: "List the legal MIG layouts of a GPU, one per line (PROFILE@START, space separated)",
		Long: `List every legal MIG layout of a MIG-capable GPU (` + migGPUs() + `),
one per line. Each instance is written PROFILE@START, START being its
first memory slice (0-7 on 8-slice parts, 0-3 on the A30), e.g.
"4g.20gb@0 3g.20gb@4". With --maximal only layouts to which no further
instance can be added.`,
		Example: `  conspirator mig layouts a100-40gb --maximal
  conspirator mig layouts a30-24gb
  conspirator mig layouts h200-141gb | wc -l`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			g, err := migGeometry(args[0])
			if err != nil {
				return err
			}
			for _, l := range g.Layouts(maximal) {
				fmt.Fprintln(a.stdout, l.String())
			}
			return nil
		},
	}
	layouts.Flags().BoolVar(&maximal, "maximal", false, "only layouts to which no instance can be added")
	profiles := &cobra.Command{
		Use:   "profiles GPU",
		Short: "Print the MIG geometry of a GPU: slices and profiles with their starts, counts and sources",
		Example: `  conspirator mig profiles a30-24gb
  conspirator mig profiles h200-141gb`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			g, err := migGeometry(args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%s: %d compute slices, %d memory slices (source: %s)\n\n", g.Model, g.ComputeSlices, g.MemorySlices, g.Source)
			tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "profile\tID\tcompute\tmemory slices\tmemory GiB\tstarts\tmax count\t")
			for _, p := range g.Profiles {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.2f\t%s\t%d\t\n", p.Name, p.ID, p.Compute, p.MemSlices,
					float64(p.MemoryBytes)/float64(gpu.GiB), strings.Trim(fmt.Sprint(p.Starts), "[]"), p.MaxCount)
			}
			return tw.Flush()
		},
	}
	c.AddCommand(layouts, profiles)
	return c
}
