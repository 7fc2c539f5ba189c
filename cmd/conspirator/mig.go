package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/mig"
	"github.com/conspirator-sim/conspirator/scenarios"
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
			printGeometry(a, g)
			return nil
		},
	}
	c.AddCommand(layouts, profiles, a.migImportCmd())
	return c
}

// printGeometry writes a geometry's profiles: slices, memory, starts,
// counts, and the SM share beside the slice share where the SMs are known.
func printGeometry(a *app, g *mig.Geometry) {
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "profile\tID\tcompute\tmemory slices\tmemory MiB\tmemory GiB\tSMs\tslice share\tSM share\tstarts\tmax count\t")
	for _, p := range g.Profiles {
		sms, smShare := "-", "-"
		if s, ok := g.SMShare(&p); ok {
			sms, smShare = fmt.Sprint(p.SMs), fmt.Sprintf("%.1f%%", 100*s)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.2f\t%s\t%.1f%%\t%s\t%s\t%d\t\n", p.Name, p.ID, p.Compute, p.MemSlices,
			p.MemoryBytes/mig.MiB, float64(p.MemoryBytes)/float64(gpu.GiB), sms, 100*g.Share(&p), smShare,
			strings.Trim(fmt.Sprint(p.Starts), "[]"), p.MaxCount)
	}
	tw.Flush()
}

// maxSMIBytes bounds a file given to mig import: the driver prints a few
// KiB for a GPU.
const maxSMIBytes = 1 << 20

func (a *app) migImportCmd() *cobra.Command {
	var name, out string
	var gpuIndex int
	c := &cobra.Command{
		Use:   "import FILE...",
		Short: "Read nvidia-smi mig -lgip and -lgipp output into a MIG geometry (YAML)",
		Long: `Read the output of 'nvidia-smi mig -lgip' (profiles: name, ID, instances,
memory, SMs) and 'nvidia-smi mig -lgipp' (placements), in separate files or
one, into a MIG geometry: every plain profile with its ID, compute slices
(from its name), memory slices and legal starts (from its placements),
maximum count, memory in MiB and SMs as the driver reports them. Variant
profiles (+me, +gfx) place like the plain ones and are left out with a
note. Both queries only read; MIG mode need not be enabled.

The geometry is printed, and with -o written as YAML, which a cluster
scenario names with cluster.mig_geometry (GPU type -> file) in place of the
catalog's geometry of that type.`,
		Example: `  nvidia-smi mig -lgip > lgip.txt; nvidia-smi mig -lgipp > lgipp.txt   # on the GPU machine
  conspirator mig import lgip.txt lgipp.txt --name h200-141gb -o h200-mig.yaml
  conspirator run paper/gpu-hours --set cluster.mig_geometry=h200-141gb=h200-mig.yaml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if gpuIndex < 0 {
				return usagef("--gpu %d: a GPU index is 0 or more", gpuIndex)
			}
			if name == "" {
				return usagef("--name is empty: name the GPU the geometry describes, e.g. h200-141gb")
			}
			var all mig.SMIOutput
			for _, p := range args {
				data, err := scenarios.ReadLimited(p, maxSMIBytes, "nvidia-smi mig output")
				if err != nil {
					return usageError{err}
				}
				o, err := mig.ParseNvidiaSMI(p, data)
				if err != nil {
					return usageError{err}
				}
				all.Merge(o)
			}
			src := "measured: nvidia-smi mig -lgip/-lgipp, imported from " + strings.Join(args, ", ")
			g, notes, err := mig.FromNvidiaSMI(name, gpuIndex, all, src)
			if err != nil {
				return usagef("mig import %s: %v", strings.Join(args, " "), err)
			}
			var y bytes.Buffer
			if err := g.WriteYAML(&y, "MIG geometry written by 'conspirator mig import' from "+strings.Join(args, ", ")); err != nil {
				return err
			}
			if out != "" {
				if err := writeFileAtomic(out, y.Bytes()); err != nil {
					return err
				}
			}
			for _, n := range notes {
				fmt.Fprintln(a.stderr, "mig import: note:", n)
			}
			fmt.Fprintf(a.stdout, "%s: %d compute slices, %d memory slices, %d SMs (source: %s)\n\n", g.Model, g.ComputeSlices, g.MemorySlices, g.SMs, g.Source)
			printGeometry(a, g)
			if spec, err := gpu.Lookup(name); err == nil && spec.MIG != nil {
				for _, d := range geometryDiff(spec.MIG, g) {
					fmt.Fprintln(a.stdout, "differs from the catalog's "+spec.Name+":", d)
				}
			}
			if out != "" {
				fmt.Fprintf(a.stdout, "\ngeometry: %s\n", out)
			}
			return nil
		},
	}
	c.Flags().StringVar(&name, "name", "imported", "GPU model the geometry describes (a catalog name compares it with the catalog's)")
	c.Flags().IntVar(&gpuIndex, "gpu", 0, "GPU index whose rows to read (nvidia-smi prints one block per GPU)")
	c.Flags().StringVarP(&out, "output", "o", "", "write the geometry as YAML to this file (written whole or not at all)")
	return c
}

// geometryDiff lists how b differs from a, profile by profile.
func geometryDiff(a, b *mig.Geometry) []string {
	var out []string
	for _, pb := range b.Profiles {
		pa, ok := a.Profile(pb.Name)
		if !ok {
			out = append(out, fmt.Sprintf("profile %s is not in the catalog", pb.Name))
			continue
		}
		if pa.ID != pb.ID || pa.Compute != pb.Compute || pa.MemSlices != pb.MemSlices || !slices.Equal(pa.Starts, pb.Starts) || pa.MaxCount != pb.MaxCount {
			out = append(out, fmt.Sprintf("%s: shape ID %d, %dg, %d memory slices, starts %v, max %d here; catalog ID %d, %dg, %d, %v, %d",
				pb.Name, pb.ID, pb.Compute, pb.MemSlices, pb.Starts, pb.MaxCount, pa.ID, pa.Compute, pa.MemSlices, pa.Starts, pa.MaxCount))
		}
		if pa.MemoryBytes != pb.MemoryBytes {
			out = append(out, fmt.Sprintf("%s: memory %d MiB here, catalog %d MiB", pb.Name, pb.MemoryBytes/mig.MiB, pa.MemoryBytes/mig.MiB))
		}
		if pa.SMs != pb.SMs {
			out = append(out, fmt.Sprintf("%s: %d SMs here, catalog %d", pb.Name, pb.SMs, pa.SMs))
		}
	}
	for _, pa := range a.Profiles {
		if _, ok := b.Profile(pa.Name); !ok {
			out = append(out, fmt.Sprintf("catalog profile %s is not in the import", pa.Name))
		}
	}
	return out
}

// writeFileAtomic writes data to path through a temporary beside it and a
// rename: the file is whole or absent.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return usagef("-o %s: cannot write there: %v", path, err)
	}
	tmp := f.Name()
	_, werr := f.Write(data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, path)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", path, werr)
	}
	return nil
}
