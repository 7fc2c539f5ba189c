package mig

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"
)

// geometryFile is a Geometry as YAML (`conspirator mig import` writes
// it, a scenario names it): memory in MiB, as nvidia-smi counts it.
type geometryFile struct {
	Model         string        `yaml:"model"`
	ComputeSlices int           `yaml:"compute_slices"`
	MemorySlices  int           `yaml:"memory_slices"`
	MemoryMiB     int64         `yaml:"memory_mib"`
	SMs           int           `yaml:"sms,omitempty"`
	No4g3g        bool          `yaml:"no_4g_3g,omitempty"`
	Source        string        `yaml:"source"`
	Profiles      []profileFile `yaml:"profiles"`
}

type profileFile struct {
	Name          string `yaml:"name"`
	ID            int    `yaml:"id"`
	ComputeSlices int    `yaml:"compute_slices"`
	MemorySlices  int    `yaml:"memory_slices"`
	MemoryMiB     int64  `yaml:"memory_mib"`
	SMs           int    `yaml:"sms,omitempty"`
	Starts        []int  `yaml:"starts,flow"`
	MaxCount      int    `yaml:"max_count"`
}

// WriteYAML writes g as a geometry file, with a comment line on top.
func (g *Geometry) WriteYAML(w io.Writer, comment string) error {
	f := geometryFile{Model: g.Model, ComputeSlices: g.ComputeSlices, MemorySlices: g.MemorySlices,
		MemoryMiB: g.MemoryBytes / MiB, SMs: g.SMs, No4g3g: g.No4g3g, Source: g.Source}
	for _, p := range g.Profiles {
		f.Profiles = append(f.Profiles, profileFile{Name: p.Name, ID: p.ID, ComputeSlices: p.Compute, MemorySlices: p.MemSlices,
			MemoryMiB: p.MemoryBytes / MiB, SMs: p.SMs, Starts: p.Starts, MaxCount: p.MaxCount})
	}
	var b bytes.Buffer
	if comment != "" {
		b.WriteString("# " + comment + "\n")
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// ReadYAML reads a geometry file (name for messages): unknown keys are
// errors with their line, and the geometry must pass Check.
func ReadYAML(name string, data []byte) (*Geometry, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f geometryFile
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty MIG geometry file; write one with `conspirator mig import lgip.txt lgipp.txt -o FILE`", name)
		}
		return nil, fmt.Errorf("%s: %w (a MIG geometry file as `conspirator mig import` writes it)", name, err)
	}
	if f.Model == "" {
		return nil, fmt.Errorf("%s: model is empty; name the GPU the geometry describes", name)
	}
	g := &Geometry{Model: f.Model, ComputeSlices: f.ComputeSlices, MemorySlices: f.MemorySlices, MemoryBytes: f.MemoryMiB * MiB,
		SMs: f.SMs, No4g3g: f.No4g3g, Source: f.Source}
	if f.MemoryMiB < 0 || f.MemoryMiB > 1<<30 {
		return nil, fmt.Errorf("%s: memory_mib %d out of range 0..%d", name, f.MemoryMiB, 1<<30)
	}
	for i, p := range f.Profiles {
		if p.MemoryMiB < 0 || p.MemoryMiB > 1<<30 {
			return nil, fmt.Errorf("%s: profiles[%d] (%s).memory_mib %d out of range 0..%d", name, i, p.Name, p.MemoryMiB, 1<<30)
		}
		g.Profiles = append(g.Profiles, Profile{Name: p.Name, ID: p.ID, Compute: p.ComputeSlices, MemSlices: p.MemorySlices,
			MemoryBytes: p.MemoryMiB * MiB, SMs: p.SMs, Starts: p.Starts, MaxCount: p.MaxCount})
	}
	if len(g.Profiles) == 0 {
		return nil, fmt.Errorf("%s: no profiles", name)
	}
	if err := g.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return g, nil
}
