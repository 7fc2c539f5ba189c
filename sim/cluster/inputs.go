package cluster

// Reading a run's inputs (the job list or trace, the node list, MIG
// geometries) and reporting what was read, skipped and why.

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/mig"
	"github.com/conspirator-sim/conspirator/internal/progress"
	"github.com/conspirator-sim/conspirator/workloads"
	"github.com/conspirator-sim/conspirator/workloads/trace"
)

// InputError is a problem with the run's input files (a missing or
// malformed trace or node list), as opposed to a failure of the
// simulation: the command line reports it as a configuration error.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }

func (e *InputError) Unwrap() error { return e.Err }

// Env is everything the model takes from outside the simulation. The
// assembly (sim.Run) fills it, so that the model itself does no file I/O
// and reads no clock: the same Config, seed and Env give the same result.
type Env struct {
	// Import reads the trace or node list a Config names (in the assembly:
	// trace.ImportFile). A missing file must give an error that wraps
	// fs.ErrNotExist. Needed only when Config.Trace or Config.Nodes is set.
	Import func(path string, opt trace.Options) (trace.Result, error)
	// Now is the wall clock that times the policies' decisions (timing.json).
	// Nil: decision times are not measured and read 0.
	Now func() time.Time
	// Progress, when not nil, is told how many of the run's replays
	// (seeds x policies x leave-out variants) are done: fractional while
	// a replay runs (the share of its jobs arrived; an offline policy
	// moves at its end). Calls are serialised but may come from any
	// goroutine; it must not block for long. It is for a person watching
	// (a progress bar) and has no effect on the results.
	Progress progress.Func
	// LLMServices is the configuration search that resolves
	// Config.LLMServices (in the assembly: sim/llmcap's, which registers
	// itself in sim.ClusterEnv). Needed only when services are given.
	LLMServices LLMResolver
	// Geometry reads a MIG geometry file of Config.MIGGeometry (in the
	// assembly: mig.ReadYAML of the file). Needed only when it is set.
	Geometry func(path string) (*mig.Geometry, error)
}

// Files lists the input files c reads, with the key naming each, so that
// the assembly can check them before a run (`validate`).
func (c Config) Files() (keys, paths []string) {
	if c.Jobs == nil && c.Trace != "" {
		keys, paths = append(keys, "cluster.trace"), append(paths, c.Trace)
	}
	if c.Nodes != "" {
		keys, paths = append(keys, "cluster.nodes"), append(paths, c.Nodes)
	}
	if files, err := c.geometryFiles(nil); err == nil {
		names := make([]string, 0, len(files))
		for n := range files {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			keys, paths = append(keys, "cluster.mig_geometry"), append(paths, files[n])
		}
	}
	return keys, paths
}

// readGeometries reads the geometry files of cfg.MIGGeometry through
// env.Geometry: each must describe the GPU type it is given for.
func readGeometries(cfg Config, env Env, tm gpu.TraceTypeMap) (map[string]*mig.Geometry, error) {
	files, err := cfg.geometryFiles(tm)
	if err != nil || len(files) == 0 {
		return nil, err
	}
	if env.Geometry == nil {
		return nil, fmt.Errorf("cluster.mig_geometry: no reader given (the assembly sets cluster.Env.Geometry)")
	}
	out := map[string]*mig.Geometry{}
	for name, path := range files {
		g, err := env.Geometry(path)
		if err != nil {
			return nil, &InputError{fmt.Errorf("cluster.mig_geometry %s=%s: %w", name, path, err)}
		}
		if g.Model != name {
			return nil, &InputError{fmt.Errorf("cluster.mig_geometry %s=%s: the file describes %q, not %s; re-import with --name %s or give it for %s", name, path, g.Model, name, name, g.Model)}
		}
		out[name] = g
	}
	return out, nil
}

// NotFound is the error for an input file that does not exist: the key,
// the path, where the data can be downloaded (trace.Source) and the key
// to point at a copy. The assembly adds where a relative path led
// (sim.MissingInput); the model reads no working directory.
func NotFound(key, path string) error {
	return &InputError{fmt.Errorf("%s: file %s not found; %s", key, path, Hint(key, path))}
}

// Hint is the end of every message about a missing input file: where its
// data comes from and how to give another path.
func Hint(key, path string) string {
	return trace.Source(path, "") + "; download the file there, or point " + key + " at your copy"
}

// importInput reads one input file through env, turning a missing file
// into NotFound and any other failure into an InputError naming the key.
func importInput(env Env, key, path string, opt trace.Options) (trace.Result, error) {
	if env.Import == nil {
		return trace.Result{}, fmt.Errorf("%s: no importer given (the assembly sets cluster.Env.Import)", key)
	}
	r, err := env.Import(path, opt)
	if errors.Is(err, fs.ErrNotExist) {
		return r, NotFound(key, path)
	}
	var fe *trace.FormatError
	if errors.As(err, &fe) {
		how := "set cluster.trace_format"
		if key == "cluster.nodes" {
			how = "a node list is an openb node list (header sn,cpu_milli,memory_mib,gpu,model) or Alibaba v2020's pai_machine_spec.csv"
		}
		return r, &InputError{fmt.Errorf("%s: %w; %s", key, err, how)}
	}
	if err != nil {
		if re := (*trace.RowError)(nil); opt.Strict && errors.As(err, &re) && re.Row > 1 { // a data row, not the header
			err = fmt.Errorf("%w (cluster.bad_rows: skip leaves bad rows out and reports them)", err)
		}
		return r, &InputError{fmt.Errorf("%s: %w", key, err)}
	}
	return r, nil
}

// InputReport says what became of the rows of an input file (the trace or
// the node list): how many were read and used, and why the others were
// left out, so that no row vanishes without a word.
type InputReport struct {
	Key      string         `json:"key"` // the scenario key that named the file
	File     string         `json:"file"`
	Format   string         `json:"format"`
	Read     int            `json:"rows_read"`
	Used     int            `json:"rows_used"`
	Rejected int            `json:"rows_rejected"`
	ByKind   map[string]int `json:"rejected_by_kind,omitempty"`
	// First lists the first rejected rows (at most maxReportedRows) in
	// file order.
	First []trace.Rejection `json:"first_rejected,omitempty"`
}

// ReportOf summarises what an import made of a file named by key.
func ReportOf(key string, r *trace.Result) InputReport {
	rep := InputReport{Key: key, File: r.Source, Format: r.Format, Read: r.Read, Used: r.Used, Rejected: r.RejectedTotal()}
	if len(r.RejectCounts) > 0 {
		rep.ByKind = maps.Clone(r.RejectCounts)
	}
	rep.First = slices.Clone(r.Rejected[:min(len(r.Rejected), maxReportedRows)])
	return rep
}

// Summary is one line for a person: "8152 rows read, 6203 used, 1949 left
// out (cpu-only 1800, never scheduled 149)".
func (r InputReport) Summary() string {
	s := fmt.Sprintf("%s %s: %d rows read, %d used", r.Key, r.File, r.Read, r.Used)
	if r.Rejected == 0 {
		return s
	}
	kinds := slices.Sorted(maps.Keys(r.ByKind))
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d", k, r.ByKind[k])
	}
	s += fmt.Sprintf(", %d left out (%s)", r.Rejected, strings.Join(parts, ", "))
	if len(r.First) > 0 {
		f := r.First[0]
		s += fmt.Sprintf("; first: row %d: %s", f.Row, f.Reason)
	}
	return s
}

// readJobs returns the jobs the run starts from: cfg.Jobs, or the trace's
// rows, with the report of the trace's rows (nil for cfg.Jobs). A trace
// with no usable job is an InputError that says why.
func readJobs(cfg Config, env Env) ([]workloads.Job, *InputReport, error) {
	if cfg.Jobs != nil {
		return cfg.Jobs, nil, nil
	}
	if strings.TrimSpace(cfg.Trace) == "" && len(cfg.LLMServices) > 0 {
		return nil, nil, nil // the services alone (Validate)
	}
	r, err := importInput(env, "cluster.trace", cfg.Trace, trace.Options{Format: cfg.TraceFormat, KeepCPUOnly: cfg.replaysPods(), Strict: cfg.BadRows == BadRowsError, KnownQoS: cfg.knownQoS()})
	if err != nil {
		return nil, nil, err
	}
	ir := ReportOf("cluster.trace", &r)
	if !slices.ContainsFunc(r.Jobs, func(j workloads.Job) bool { return j.NumGPU > 0 }) {
		return nil, &ir, &InputError{fmt.Errorf("no usable GPU job in the trace (%d CPU-only pods, and the replay needs GPU jobs): %s", len(r.Jobs), ir.Summary())}
	}
	return r.Jobs, &ir, nil
}

// readNodes reads the node list cfg names, with the report of its rows;
// nil, nil without one (the cluster is cfg.GPUs).
func readNodes(cfg Config, env Env) ([]trace.Node, *InputReport, error) {
	if cfg.Nodes == "" {
		return nil, nil, nil
	}
	r, err := importInput(env, "cluster.nodes", cfg.Nodes, trace.Options{Strict: cfg.BadRows == BadRowsError})
	if err != nil {
		return nil, nil, err
	}
	ir := ReportOf("cluster.nodes", &r)
	return r.Nodes, &ir, nil
}
