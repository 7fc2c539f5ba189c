package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/conspirator-sim/conspirator/realhw/swap"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
	"github.com/conspirator-sim/conspirator/internal/dirlock"
	"github.com/conspirator-sim/conspirator/realhw/calib"
	"github.com/conspirator-sim/conspirator/reports"
	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim"
	"github.com/conspirator-sim/conspirator/workloads/trace"
	"github.com/spf13/cobra"
)

// DefaultScenario is what `conspirator run` runs with no argument: the
// paper's end-to-end comparison of the four data paths, which needs no data
// files.
const DefaultScenario = "paper/e2e"

// scenarioFlags are the flags shared by run and sweep.
type scenarioFlags struct {
	sets []string
	seed string
}

func (f *scenarioFlags) add(c *cobra.Command) {
	c.Flags().StringArrayVar(&f.sets, "set", nil, "override a scenario key, e.g. --set datapath.host.background_load=80% (repeatable)")
	c.Flags().StringVar(&f.seed, "seed", "", "seed of every random stream (overrides the scenario's seed)")
	// Shell completion (conspirator completion bash|zsh|fish): built-in
	// scenario names or files for the argument, scenario keys for --set.
	c.ValidArgsFunction = completeScenario
	c.RegisterFlagCompletionFunc("set", completeKey)
}

func completeScenario(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return scenarios.List(), cobra.ShellCompDirectiveDefault // names, or a file
}

func completeKey(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	var keys []string
	for _, k := range scenarios.Schema(&scenarios.Scenario{}) {
		if k.Type != "section" && !strings.Contains(k.Path, "[]") && !strings.Contains(k.Path, "<") && strings.HasPrefix(k.Path, prefix) {
			keys = append(keys, k.Path+"=")
		}
	}
	return keys, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
}

// load resolves a scenario: built-in name or file, environment, --set and
// --seed, in that order of precedence.
func (a *app) load(nameOrPath string, f scenarioFlags) (*scenarios.Scenario, error) {
	return a.loadLate(nameOrPath, f, "", nil)
}

// loadLate is load with settings applied last, each shown in messages as
// coming from source ("--param" for a sweep point's values): a mistake in
// a swept value names the flag the user typed.
func (a *app) loadLate(nameOrPath string, f scenarioFlags, source string, late []string) (*scenarios.Scenario, error) {
	sets := append([]string{}, f.sets...)
	if f.seed != "" {
		if _, err := strconv.ParseUint(f.seed, 10, 64); err != nil {
			return nil, usagef("--seed %q: must be a non-negative integer", f.seed)
		}
		sets = append(sets, "seed="+f.seed)
	}
	lateOver := make([]scenarios.Override, len(late))
	for i, kv := range late {
		lateOver[i] = scenarios.Override{Source: source, KV: kv}
	}
	in := scenarios.Input{Env: scenarioEnv(a.env), Overrides: sets, Late: lateOver}
	if a.checkFilesOnLoad {
		in.Check = sim.FileProblems // validate: the files with every other problem, in one pass
	}
	var sc scenarios.Scenario
	if err := scenarios.LoadInput(nameOrPath, in, &sc); err != nil {
		// Every way a scenario fails to load (unknown name, unreadable
		// file, invalid content) is a configuration error: exit code 2.
		var ce *scenarios.ConfigError
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, usageError{err}
	}
	if sc.Calibration != "" {
		// A calibration profile sits between the file and --set: its
		// fitted values replace the defaults, the user's --set still wins.
		// Reload with its overrides placed before the user's.
		prof := sc.Calibration
		over, trace, err := calibrationOverrides(nameOrPath, prof, append(append([]string{}, sets...), late...), &sc)
		if err != nil {
			return nil, err
		}
		in.Sourced = make([]scenarios.Override, len(over))
		for i, kv := range over {
			in.Sourced[i] = scenarios.Override{Source: "calibration profile " + prof + ":", KV: kv}
		}
		sc = scenarios.Scenario{}
		if err := scenarios.LoadInput(nameOrPath, in, &sc); err != nil {
			var ce *scenarios.ConfigError
			if errors.As(err, &ce) {
				return nil, err
			}
			return nil, usageError{err}
		}
		sc.CalibrationTrace = trace
	}
	if sc.Name == "" {
		sc.Name = strings.TrimSuffix(filepath.Base(nameOrPath), filepath.Ext(nameOrPath))
	}
	return &sc, nil
}

// calibrationOverrides reads a calibration profile and returns its
// proposed scenario values as --set strings, in key order, and the trace
// of what it sets for summary.json (sets are the user's --set, which win).
// A relative profile path is taken relative to the scenario file.
func calibrationOverrides(scenarioPath, profile string, sets []string, sc *scenarios.Scenario) ([]string, *scenarios.CalibrationTrace, error) {
	p := profile
	if !filepath.IsAbs(p) {
		if st, err := os.Stat(scenarioPath); err == nil && !st.IsDir() {
			p = filepath.Join(filepath.Dir(scenarioPath), p)
		}
	}
	prof, err := calib.LoadProfile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, usagef("calibration: file %s not found%s; a calibration profile is the profile.yaml that `conspirator calibrate -o DIR` writes into DIR (a relative path in a scenario file is taken from that file's folder); calibrate, or point calibration at that file", profile, trace.Resolved(p))
	}
	if err != nil {
		return nil, nil, usagef("calibration profile: %v", err)
	}
	if err := gpuSideOverrides(prof, p, sc); err != nil {
		return nil, nil, err
	}
	keys := make([]string, 0, len(prof.Scenario))
	for k := range prof.Scenario {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pv := prof.Provenance
	m := pv.Machine
	machine := strings.Join(slices.DeleteFunc([]string{m.Hostname, m.CPUModel, m.Clock, coresText(m.Cores), m.GOARCH}, func(s string) bool { return s == "" }), ", ")
	if m.Hostname == "" && m.CPUModel == "" {
		// An import knows only the importing machine's architecture; the
		// testbed is not named in perftest or nvbandwidth output.
		machine = "a testbed not recorded in the imported files"
	}
	if g := pv.GPU; g != nil && g.Type != "" {
		machine = strings.Join(slices.DeleteFunc([]string{g.Name, g.Type, prefixed("driver ", g.Driver), prefixed("CUDA ", g.CUDA), prefixed("torch ", g.Torch)}, func(s string) bool { return s == "" }), ", ")
	}
	trace := &scenarios.CalibrationTrace{Profile: profile, Date: pv.Date, Tool: pv.Tool, Machine: machine, Sources: pv.Sources}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		v := fmt.Sprint(prof.Scenario[k])
		out = append(out, k+"="+v)
		from := prof.ScenarioFrom[k]
		if from == "" {
			from = "not recorded (a profile written before scenario_from)"
		}
		overridden := slices.ContainsFunc(sets, func(s string) bool { return strings.HasPrefix(s, k+"=") })
		trace.Values = append(trace.Values, scenarios.CalibratedValue{Key: k, Value: v, From: from, OverriddenBySet: overridden})
	}
	return out, trace, nil
}

// prefixed is label+v, or empty when v is.
func prefixed(label, v string) string {
	if v == "" {
		return ""
	}
	return label + v
}

func coresText(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf("%d cores", n)
}

// scenarioEnv drops the command line's own variables (CONSPIRATOR_JOBS,
// CONSPIRATOR_OUT) from the environment handed to the scenario loader,
// which treats every other CONSPIRATOR_ variable as a scenario key.
func scenarioEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if cliEnv[name] {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func (a *app) runCmd() *cobra.Command {
	var f scenarioFlags
	var outDir string
	var noReport, noSensitivity, withSensitivity bool
	var backend string
	var backendReps int
	c := &cobra.Command{
		Use:   "run [SCENARIO|FILE]",
		Short: "Run one scenario and write its results, plots and report",
		Long: `Run one scenario (a built-in name from 'conspirator scenarios list' or a
YAML file) and write a result directory: summary.json (resolved inputs,
seed, version, metrics), per-request / per-job CSV files, plots/ (PNG, SVG
and PDF), report.md and report.html (one self-contained page: figures inline,
with the version, scenario, seed and calibration profile). With no
argument it runs the default built-in scenario,
` + DefaultScenario + `.

Without -o the directory is $CONSPIRATOR_OUT/NAME (default ./results) for a
built-in scenario run as it is, and NAME-DIGEST for any other inputs
(--set, --seed, environment, an edited copy), DIGEST being a fingerprint of
the resolved scenario: runs of different inputs never overwrite each other.
The directory is written atomically: it appears complete or not at all. An
existing result directory at the same place is replaced.

A cluster or training run draws a progress bar on stderr, when stderr is a
terminal: replays done (seeds x policies x leave-out variants; paper/
gpu-hours: 240), fractional while one runs (its share of jobs arrived, or
of training jobs finished), the rate and the time left, both averaged
from the run's start.

A data-path run also reruns itself with each unsourced parameter at both
ends of its plausible range (about 40 reruns) and writes sensitivity.csv;
the report lists the three parameters the headline moves most with.
--no-sensitivity skips it; --sensitivity computes it for a cluster run too
(each point a whole replay) or a data-path run above 20,000 requests.

--backend host swaps models for real paths where this machine can: after
the simulation it performs each data-path stage the host backend can do
for real (loopback TCP for a TCP path's network and reply, memcpy for host
copies, CPU work for host-CPU stages), --backend-reps times with the
model's bytes or work, under the scenario's background load (a load
generator at that duty cycle), and writes backend.json and a report
section with each stage's model time beside the real one. Stages it cannot
perform (RDMA transfers, GPU work, the SmartNIC) stay simulated, each with
the reason; queueing between requests is not re-simulated.

--backend cuda (a binary built with -tags cuda, on a machine with a GPU)
also performs the GPU's stages on device 0: the host copy toward the GPU as
a pageable cudaMemcpy, the DMA as a pinned one, the launch, the compute as
a stand-in kernel that spins for the model's compute time (not the model's
kernels: backend.json says so), the result copied back into pageable
memory, as out.cpu() does and the model prices it; network
and CPU stages run on the host backend as above.`,
		Example: `  conspirator run
  conspirator run paper/e2e --set datapath.host.background_load=80% -o out/e2e-80
  conspirator run my.yaml --seed 7
  conspirator run paper/e2e --backend host --no-sensitivity`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := DefaultScenario
			if len(args) == 1 {
				name = args[0]
			}
			sc, err := a.load(name, f)
			if err != nil {
				return err
			}
			dir := outDir
			if dir == "" {
				if dir, err = a.defaultRunDir(name, sc); err != nil {
					return err
				}
			}
			lock, err := claimDir(dir)
			if err != nil {
				return err
			}
			defer lock.Release()
			if backend != "" {
				if err := checkBackend(backend, sc, backendReps); err != nil {
					return err
				}
			}
			out, err := sim.RunWith(sc, sim.Options{Progress: runProgress(a.stderr, isTerminal(a.stderr))})
			if err != nil {
				return fmt.Errorf("scenario %s: %w", sc.Name, err)
			}
			var swapped *swap.Report
			if backend != "" {
				rep, js, err := runBackend(backend, sc, out, backendReps)
				if err != nil {
					return err
				}
				swapped = rep
				out.Files[reports.BackendFile] = js
			}
			var top []reports.SensitivityRow
			var headlineLabel string
			if noSensitivity {
				// A result directory of the same inputs may already hold the
				// sensitivity a run without the flag computed: it is a
				// function of the inputs, so it is kept, not lost.
				if keep, err := sameInputsSensitivity(dir, out.Files); err == nil && keep != nil {
					out.Files[reports.SensitivityFile] = keep
				}
			}
			if !noSensitivity {
				rows, h, base, why, err := a.runSensitivity(name, f, sc, withSensitivity)
				switch {
				case err != nil:
					return fmt.Errorf("scenario %s: sensitivity: %w (--no-sensitivity skips it)", sc.Name, err)
				case why != "":
					out.Files[reports.SensitivityNoteFile] = []byte(why + "\n")
				default:
					out.Files[reports.SensitivityFile] = reports.SensitivityCSV(h.column, base, rows)
					top = rows[:min(3, len(rows))]
					headlineLabel = h.label
				}
			}
			if err := writeResultDir(dir, out.Files, !noReport); err != nil {
				return err
			}
			printSummary(a.stdout, &out.Summary, &out.Timing)
			if swapped != nil {
				printBackend(a.stdout, swapped)
			}
			if len(top) > 0 {
				parts := make([]string, len(top))
				for i, r := range top {
					parts[i] = fmt.Sprintf("%s [%s] (swing %.1f points)", r.Param, r.Grade, r.Swing())
				}
				fmt.Fprintf(a.stdout, "%s moves most with: %s; all in sensitivity.csv\n", headlineLabel, strings.Join(parts, ", "))
			}
			what := "summary.json, report.md, report.html, plots/"
			if noReport {
				what = "summary.json"
			}
			fmt.Fprintf(a.stdout, "\nresults: %s (%s)\n", dir, what)
			return nil
		},
	}
	f.add(c)
	c.Flags().StringVarP(&outDir, "output", "o", "", "result directory (default $CONSPIRATOR_OUT/<scenario name>, CONSPIRATOR_OUT defaulting to ./results)")
	c.Flags().BoolVar(&noReport, "no-report", false, "skip plots, report.md and report.html (summary and CSV files only)")
	c.Flags().StringVar(&backend, "backend", "", "also perform the data-path stages this real backend can (host: loopback TCP, memcpy, CPU work, under the scenario's background load; cuda: those and the GPU's copies, launch and a stand-in kernel) and write their times beside the model's (backend.json)")
	c.Flags().IntVar(&backendReps, "backend-reps", 200, "times each stage is performed on the --backend")
	c.Flags().BoolVar(&noSensitivity, "no-sensitivity", false, "skip the sensitivity of a data-path run's headline (sensitivity.csv, the report's \"rests on\" list)")
	c.Flags().BoolVar(&withSensitivity, "sensitivity", false, "compute the headline's sensitivity for a cluster run too (each of its points is a whole replay: about four more runs), or for a data-path run above 20,000 requests")
	return c
}

// maxSensitivityRequests bounds the requests of a data-path run whose
// sensitivity run computes by itself: about 40 reruns of the run, each
// well under a second up to here.
const maxSensitivityRequests = 20000

// runSensitivity is the sensitivity a run carries: every unsourced
// parameter across its plausible range, same seed, the headline at both
// ends. By default only for a data-path run of at most
// maxSensitivityRequests; force (--sensitivity) computes it for a cluster
// run or a longer data-path run too. It returns a reason instead where it
// is not computed.
func (a *app) runSensitivity(name string, f scenarioFlags, sc *scenarios.Scenario, force bool) (rows []reports.SensitivityRow, h headline, base float64, why string, err error) {
	switch {
	case sc.Cluster != nil && !force:
		return nil, h, 0, "not computed with the run: each of its points replays the whole cluster again; run with --sensitivity, or conspirator sensitivity " + sc.Name, nil
	case sc.Cluster == nil && sc.DataPath == nil:
		return nil, h, 0, "not computed: the scenario has no data-path or cluster headline", nil
	case sc.Cluster == nil && !force && sc.DataPath.Clients.Count*sc.DataPath.Clients.Requests > maxSensitivityRequests:
		return nil, h, 0, fmt.Sprintf("not computed with the run: %d requests, above the %d a run reruns about 40 times by itself; run with --sensitivity, or conspirator sensitivity %s",
			sc.DataPath.Clients.Count*sc.DataPath.Clients.Requests, maxSensitivityRequests, sc.Name), nil
	}
	policy := "conspirator"
	if sc.Cluster != nil && !slices.Contains(sc.Cluster.Policies, policy) {
		return nil, h, 0, "not computed: the run has no conspirator policy whose GPU-hours against the baseline would be the headline; conspirator sensitivity " + sc.Name + " --policy NAME picks another", nil
	}
	if sc.Cluster != nil && (sc.Cluster.Baseline == "" || sc.Cluster.Baseline == policy) {
		return nil, h, 0, "not computed: the run has no cluster.baseline to measure the conspirator policy's GPU-hours against", nil
	}
	if h, err = newHeadline(sc, policy); err != nil {
		return nil, h, 0, "", err
	}
	ps, err := sensitivityParams(sc, h, nil, 0.5, 2, false)
	if err != nil {
		return nil, h, 0, "", err
	}
	if base, _, err = h.eval(sc); err != nil {
		return nil, h, 0, "", err
	}
	rows, err = a.sensitivityRows(name, f, sc, h, ps)
	return rows, h, base, "", err
}

func (a *app) validateCmd() *cobra.Command {
	var f scenarioFlags
	c := &cobra.Command{
		Use:   "validate SCENARIO|FILE",
		Short: "Check a scenario without running it: every problem with file, line and key",
		Example: `  conspirator validate my.yaml
  conspirator validate paper/e2e --set datapath.host.background_load=95%`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			a.checkFilesOnLoad = true
			sc, err := a.load(args[0], f)
			if err != nil {
				return err
			}
			// What a sweep of the scenario's own list would load.
			if len(sc.Sweep) > 0 {
				const source = "sweep (the scenario's own list)"
				ps, err := parseParams(source, sc.Sweep)
				if err != nil {
					return err
				}
				for _, p := range ps {
					for _, v := range p.Values {
						if _, err := a.loadLate(args[0], f, source, []string{p.Key + "=" + v}); err != nil {
							return err
						}
					}
				}
			}
			if err := sim.Check(sc); err != nil {
				return usageError{err}
			}
			fmt.Fprintf(a.stdout, "%s: ok (scenario %q, seed %d)\n", args[0], sc.Name, sc.Seed)
			return nil
		},
	}
	f.add(c)
	return c
}

// defaultRunDir is where a run without -o writes: OUT/NAME for a built-in
// scenario run as it is, OUT/NAME-DIGEST (the inputs' fingerprint) for any
// other inputs (--set, --seed, environment, an edited copy of a built-in),
// so that two runs of different inputs never overwrite each other and a
// rerun of the same inputs replaces its own directory.
func (a *app) defaultRunDir(arg string, sc *scenarios.Scenario) (string, error) {
	digest, err := sim.InputsDigest(sc)
	if err != nil {
		return "", err
	}
	base := safeName(sc.Name)
	var plain scenarios.Scenario
	if err := scenarios.Load(sc.Name, nil, nil, &plain); err == nil {
		if d, err := sim.InputsDigest(&plain); err == nil && d == digest {
			// The built-in as it is, or a copy that computes the same.
			return filepath.Join(a.outRoot(), base), nil
		}
	}
	if !slices.Contains(scenarios.List(), arg) {
		// A scenario file is found by its file name: my.yaml, saved from
		// `scenarios show paper/e2e` and edited, still says name: paper/e2e.
		base = safeName(strings.TrimSuffix(filepath.Base(arg), filepath.Ext(arg)))
	}
	return filepath.Join(a.outRoot(), base+"-"+digest), nil
}

// safeName turns a scenario name ("paper/e2e") into a directory name.
func safeName(s string) string {
	r := strings.NewReplacer("/", "-", "\\", "-", " ", "_", ":", "-")
	if s = r.Replace(s); s == "" {
		s = "run"
	}
	return s
}

// checkWritableParent fails early, before any simulation time is spent,
// when the result directory cannot be created.
func checkWritableParent(dir string) error {
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return usagef("output directory %s cannot be created: %v", dir, err)
	}
	probe, err := os.CreateTemp(parent, ".conspirator-probe-*")
	if err != nil {
		return usagef("output directory %s is not writable: %v", dir, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return usagef("output path %s exists and is not a directory", dir)
	}
	return nil
}

// claimDir readies a result directory before any work is spent on it:
// its parent must be writable (checkWritableParent), and this process
// becomes its one writer (lockDir). Release the lock when it is written.
func claimDir(dir string) (*dirlock.Lock, error) {
	if err := checkWritableParent(dir); err != nil {
		return nil, err
	}
	return lockDir(dir)
}

// lockDir makes this process the one writer of the result directory dir
// (see internal/dirlock) and removes the temporaries that a writer killed
// earlier left beside it: with the lock held, no other writer's
// temporaries can be there. Release the lock when the directory is
// written.
func lockDir(dir string) (*dirlock.Lock, error) {
	dir = filepath.Clean(dir)
	l, err := dirlock.Exclusive(dir)
	if err != nil {
		return nil, err
	}
	if err := atomicfs.CleanTemps(atomicfs.OS, filepath.Dir(dir), filepath.Base(dir)); err != nil {
		l.Release()
		return nil, err
	}
	return l, nil
}

// writeResultDir writes files (and, if report, the plots and report.md)
// into a temporary sibling directory and puts it in place of dir in one
// atomic step (atomicfs.WriteDir), so that an interrupted run leaves the
// earlier complete result or the new one at dir, never a mixture. An
// earlier result at dir is replaced; any other non-empty directory there
// is refused before anything is written. The caller holds dir's lock
// (lockDir).
func writeResultDir(dir string, files map[string][]byte, report bool) error {
	return writeResultDirFS(atomicfs.OS, dir, files, report, nil)
}

// writeResultDirFS is writeResultDir through fsys; extra, if not nil,
// adds files (plots) to the temporary directory, inside the atomic step.
func writeResultDirFS(fsys atomicfs.FS, dir string, files map[string][]byte, report bool, extra func(tmp string) error) error {
	dir = filepath.Clean(dir)
	replace := false
	if _, err := os.Stat(dir); err == nil {
		// Replace an earlier result only if it is one (it has a
		// summary.json or is empty): never delete a user's unrelated folder.
		if !looksLikeResult(dir) {
			return usagef("output directory %s exists and is not a conspirator result directory; choose another -o", dir)
		}
		replace = true
	}
	fill := func(tmp string) error {
		if extra != nil {
			if err := extra(tmp); err != nil {
				return err
			}
		}
		if report {
			if err := reports.RenderFSBy(fsys, tmp, "conspirator run"); err != nil {
				return fmt.Errorf("rendering the report: %w", err)
			}
		}
		return nil
	}
	if err := atomicfs.WriteDir(fsys, dir, files, replace, fill); err != nil {
		return fmt.Errorf("writing the result directory %s: %w", dir, err)
	}
	return nil
}

func looksLikeResult(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	if len(entries) == 0 {
		return true
	}
	for _, e := range entries {
		if e.Name() == "summary.json" || e.Name() == "sweep.json" || e.Name() == "profile.yaml" || e.Name() == reports.SensitivityFile || e.Name() == reports.ReproduceJSON {
			return true
		}
	}
	return false
}

// sameInputsSensitivity returns the sensitivity.csv of the result in dir
// when that result was computed from the same inputs (inputs_sha256) as
// the summary about to replace it; nil otherwise.
func sameInputsSensitivity(dir string, files map[string][]byte) ([]byte, error) {
	old, err := os.ReadFile(filepath.Join(dir, reports.ResultFile))
	if err != nil {
		return nil, err
	}
	var a, b struct {
		Inputs string `json:"inputs_sha256"`
	}
	if json.Unmarshal(old, &a) != nil || json.Unmarshal(files[reports.ResultFile], &b) != nil || a.Inputs == "" || a.Inputs != b.Inputs {
		return nil, nil
	}
	return os.ReadFile(filepath.Join(dir, reports.SensitivityFile))
}
