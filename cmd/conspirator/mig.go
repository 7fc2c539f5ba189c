package main

import (
	"fmt"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/spf13/cobra"
)

func (a *app) migCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "mig",
		Short: "MIG partitioning: legal layouts of a GPU",
	}
	var maximal bool
	layouts := &cobra.Command{
		Use:   "layouts GPU",
		Short: "List the legal MIG layouts of a GPU, one per line (PROFILE@START, space separated)",
		Long: `List every legal MIG layout of a MIG-capable GPU (a100-40gb, a100-80gb,
h100-80gb), one per line. Each instance is written PROFILE@START, START
being its first memory slice (0-7), e.g. "4g.20gb@0 3g.20gb@4". With
--maximal only layouts to which no further instance can be added.`,
		Example: `  conspirator mig layouts a100-40gb --maximal
  conspirator mig layouts h100-80gb | wc -l`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			spec, err := gpu.Lookup(args[0])
			if err != nil {
				return usageError{err}
			}
			if !spec.MIG {
				return usagef("GPU %s does not support MIG; MIG-capable GPUs: a100-40gb, a100-80gb, h100-80gb", spec.Name)
			}
			for _, l := range spec.Layouts(maximal) {
				fmt.Fprintln(a.stdout, l.String())
			}
			return nil
		},
	}
	layouts.Flags().BoolVar(&maximal, "maximal", false, "only layouts to which no instance can be added")
	c.AddCommand(layouts)
	return c
}
