package scenarios

import (
	"fmt"
	"sort"
	"strings"
)

// Problem is one thing wrong with a scenario: where it is and what would
// be right.
type Problem struct {
	// File is the scenario file, or the layer a value came from when it
	// did not come from the file: "--set datapath.host.cores=x", "env
	// CONSPIRATOR_SEED", "default of datapath.requests".
	File string
	// Line is the 1-based line in File; 0 when the value has no line
	// (environment, --set, defaults).
	Line int
	// Path is the key path, e.g. "datapath.host.background_load"; empty
	// for problems with the file as a whole (a YAML syntax error).
	Path string
	Msg  string
}

func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	if p.Path != "" {
		b.WriteString(": ")
		b.WriteString(p.Path)
	}
	b.WriteString(": ")
	b.WriteString(p.Msg)
	return b.String()
}

// ConfigError collects every problem found in one load, so that a user
// fixes a scenario in one pass instead of one error per run.
type ConfigError struct {
	Problems []Problem
}

// Error prints one problem per line: problems in the file first, by line,
// then those from other layers, by key path.
func (e *ConfigError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.sorted() {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

func (e *ConfigError) sorted() []Problem {
	ps := append([]Problem(nil), e.Problems...)
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if (a.Line == 0) != (b.Line == 0) {
			return a.Line != 0 // lines in the file before lineless layers
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Msg < b.Msg
	})
	return ps
}

// problems accumulates Problems; a nil *ConfigError means none.
type problems struct {
	list []Problem
}

func (ps *problems) add(file string, line int, path, format string, args ...any) {
	ps.list = append(ps.list, Problem{File: file, Line: line, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// dropConsequences removes, from the problems after the first n, those
// at a key that one of the first n is at, inside or above it (a value
// that failed to decode, checked again at its default).
func (ps *problems) dropConsequences(n int) {
	if n == 0 {
		return
	}
	bad := ps.list[:n]
	overlaps := func(a, b string) bool {
		if a == "" || b == "" {
			return false
		}
		return a == b || strings.HasPrefix(a, b+".") || strings.HasPrefix(a, b+"[") ||
			strings.HasPrefix(b, a+".") || strings.HasPrefix(b, a+"[")
	}
	keep := ps.list[:n]
	for _, p := range ps.list[n:] {
		consequence := false
		for _, b := range bad {
			if overlaps(p.Path, b.Path) {
				consequence = true
				break
			}
		}
		if !consequence {
			keep = append(keep, p)
		}
	}
	ps.list = keep
}

func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	e := &ConfigError{Problems: ps.list}
	e.Problems = e.sorted()
	return e
}
