package main

import (
	"fmt"
	"strings"

	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/spf13/cobra"
)

func (a *app) scenariosCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "scenarios",
		Short: "List, show and document the built-in scenarios and every scenario key",
		Example: `  conspirator scenarios list
  conspirator scenarios show paper/e2e > my.yaml   # save, edit, then: conspirator run my.yaml
  conspirator scenarios schema                     # every key: meaning, unit, default, source`,
	}
	c.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the built-in scenarios",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			for _, n := range scenarios.List() {
				fmt.Fprintln(a.stdout, n)
			}
			return nil
		},
	}, &cobra.Command{
		Use:     "show NAME",
		Short:   "Print a built-in scenario as YAML you can save and edit",
		Example: "  conspirator scenarios show paper/e2e > my.yaml",
		Args:    cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			data, err := scenarios.Show(args[0])
			if err != nil {
				return usageError{err}
			}
			_, err = a.stdout.Write(data)
			return err
		},
	}, &cobra.Command{
		Use:   "schema",
		Short: "Print the reference of every scenario key (meaning, unit, default, source) as Markdown",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			var b strings.Builder
			if err := scenarios.WriteSchemaMarkdown(&b, &scenarios.Scenario{}); err != nil {
				return err
			}
			_, err := fmt.Fprint(a.stdout, b.String())
			return err
		},
	})
	return c
}
