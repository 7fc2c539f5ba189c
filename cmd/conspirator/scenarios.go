package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/conspirator-sim/conspirator/internal/suggest"
	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim"
	"github.com/conspirator-sim/conspirator/sim/datapath"
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
		Short: "List the built-in scenarios, each with a line on what it runs; those that read data files say which, and whether they are found from here",
		Long: `List the built-in scenarios, one a line, each with what it runs in a few
words (the first line of its file's comment; 'conspirator scenarios show
NAME' prints the whole file). A scenario that reads data files (a
cluster trace, a node list) says where on the line below (its paths are
relative to the working directory: ../shared is the folder beside the
repository), with the keys that name them, and whether they are found
from the working directory. Where not, run it from the repository root
with ../shared beside it, or point the keys at your copy with --set
KEY=PATH; 'conspirator trace inspect PATH' says where a missing trace comes from.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			names := scenarios.List()
			width := 0
			for _, n := range names {
				width = max(width, len(n))
			}
			anyMissing := false
			for _, n := range names {
				note, err := dataNote(n)
				if err != nil {
					return err
				}
				anyMissing = anyMissing || strings.Contains(note, notFoundHere)
				fmt.Fprintln(a.stdout, strings.TrimRight(fmt.Sprintf("%-*s  %s", width, n, scenarios.Summary(n)), " "))
				if note != "" {
					fmt.Fprintf(a.stdout, "%-*s  %s\n", width, "", note)
				}
			}
			if anyMissing {
				fmt.Fprintf(a.stderr, "data %s: run those scenarios from the repository root with ../shared beside it, or --set their keys to your copy; 'conspirator trace inspect PATH' says where a trace comes from\n", notFoundHere)
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

// explainCmd prints one scenario key: what it means, its type and unit, its
// default and where that default comes from (source and grade).
func (a *app) explainCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "explain KEY",
		Short: "Explain a scenario key: meaning, type, unit, default, source and grade",
		Example: `  conspirator explain datapath.host.background_load
  conspirator explain smartnic.dma_bandwidth      # a unique ending is enough`,
		Args: cobra.ExactArgs(1),
		ValidArgsFunction: func(_ *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
			var keys []string
			for _, k := range scenarios.Schema(&scenarios.Scenario{}) {
				keys = append(keys, k.Path)
			}
			return keys, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(_ *cobra.Command, args []string) error {
			keys := scenarios.Schema(&scenarios.Scenario{})
			want := strings.TrimSpace(args[0])
			var match []scenarios.KeyDoc
			for _, k := range keys {
				if k.Path == want {
					match = []scenarios.KeyDoc{k}
					break
				}
				if strings.HasSuffix(k.Path, "."+want) {
					match = append(match, k)
				}
			}
			if len(match) == 0 {
				paths := make([]string, len(keys))
				for i, k := range keys {
					paths[i] = k.Path
				}
				msg := fmt.Sprintf("unknown scenario key %q", want)
				if near := suggest.Nearest(want, paths); near != "" {
					msg += fmt.Sprintf("; did you mean %q?", near)
				}
				return usagef("%s (every key: conspirator scenarios schema)", msg)
			}
			if len(match) > 1 {
				paths := make([]string, len(match))
				for i, k := range match {
					paths[i] = k.Path
				}
				return usagef("%q names %d keys: %s; give the whole path", want, len(match), strings.Join(paths, ", "))
			}
			k := match[0]
			fmt.Fprintf(a.stdout, "%s\n  %s\n", k.Path, k.Doc)
			typ := k.Type
			if k.Unit != "" {
				typ += ", in " + k.Unit
			}
			fmt.Fprintf(a.stdout, "  type:     %s\n", typ)
			if k.Default != "" {
				fmt.Fprintf(a.stdout, "  default:  %s\n", k.Default)
			} else if k.Part != "" {
				part, v, _ := datapath.PartDefault(strings.TrimPrefix(k.Path, "datapath."))
				fmt.Fprintf(a.stdout, "  default:  %s, the value of %s, the part named at %s; another part gives its own, setting the key overrides it\n", v, part, k.Part)
			} else if k.DefaultFrom != "" {
				fmt.Fprintf(a.stdout, "  default:  the value of %s in the same scenario\n", k.DefaultFrom)
			}
			if k.Source != "" {
				src, err := scenarios.SourceText(k.Source)
				if err != nil {
					src = k.Source
				}
				fmt.Fprintf(a.stdout, "  source:   %s\n", src)
			}
			return nil
		},
	}
}

// notFoundHere marks, in scenarios list, data that is not found from the
// working directory.
const notFoundHere = "not found from this directory"

// dataNote says which data files the built-in scenario name reads, by
// folder and key, and whether they are there from the working directory:
// "needs data: ../shared/traces/alibaba-gpu-v2023/ (cluster.trace,
// cluster.nodes), found". It is "" for a scenario that reads none.
func dataNote(name string) (string, error) {
	var sc scenarios.Scenario
	if err := scenarios.Load(name, nil, nil, &sc); err != nil {
		return "", fmt.Errorf("scenarios list: %s: %w", name, err)
	}
	keys, paths := sim.DataFiles(&sc)
	var dirs, missing []string
	for i, p := range paths {
		if strings.TrimSpace(p) == "" {
			continue
		}
		if d := filepath.Dir(p) + "/"; !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, keys[i])
		}
	}
	if len(dirs) == 0 {
		return "", nil
	}
	var used []string
	for i, p := range paths {
		if strings.TrimSpace(p) != "" {
			used = append(used, keys[i])
		}
	}
	state := "found"
	switch {
	case len(missing) == len(used):
		state = notFoundHere
	case len(missing) > 0:
		state = notFoundHere + " (" + strings.Join(missing, ", ") + ")"
	}
	return fmt.Sprintf("needs data: %s (%s), %s", strings.Join(dirs, ", "), strings.Join(used, ", "), state), nil
}
