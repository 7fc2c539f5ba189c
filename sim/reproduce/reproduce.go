// Package reproduce runs the built-in scenarios behind every published
// result the project measures itself against (the Conspirator paper's R1
// to R7, the FGD paper's allocation table, the in-network aggregation
// anchors of ESA, ATP and SwitchML) and gathers each into one row: the
// claim, the published figure, ours with its 95% confidence interval over
// seeds, the command a user runs to see it, and a verdict of a word or two.
//
// The rows are a fixed, named list (Rows): `conspirator reproduce` runs
// them and writes the table, and the docs' result tables are generated
// from what it wrote, so a figure in the docs is always one the code gave.
// A quick run (Options.Quick) runs some rows with fewer seeds, each saying
// what it reduced, so that the whole check fits in CI.
//
// Everything here is deterministic but for the wall time of each row
// (Result.WallS) and the decision times of r7-solve-time, which are
// measurements of the machine and are marked so (Figure.WallClock).
package reproduce

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim"
	"github.com/conspirator-sim/conspirator/sim/cluster"
)

// Figure is one number of a row: a mean over Seeds runs with the
// half-width of its 95% CI (nil with one seed or where the quantity has
// none, e.g. arithmetic on the paper's inputs).
type Figure struct {
	// Key names the figure within its row, stable across versions
	// (the docs test matches figures by it).
	Key   string   `json:"key"`
	Label string   `json:"label"`
	Value float64  `json:"value"`
	CI95  *float64 `json:"ci95,omitempty"`
	// Unit is printed after the value: "%", "x", "us", "GPU-h", "pts".
	Unit string `json:"unit"`
	// Decimals is the precision the figure is stated at; the docs test
	// allows one unit of the last decimal between a documented figure
	// and the code's.
	Decimals int `json:"decimals"`
	Seeds    int `json:"seeds"`
	// Published is the publication's value of the same quantity, where
	// the figure has one of its own (a row of a published table).
	Published *float64 `json:"published,omitempty"`
	// WallClock marks a wall-clock measurement of this machine: it is
	// not deterministic, so the docs test checks only its verdict.
	WallClock bool `json:"wall_clock,omitempty"`
}

// Text is the figure as the tables print it: "6.5% ± 0.2".
func (f Figure) Text() string {
	s := fmtNum(f.Value, f.Decimals) + f.Unit
	if f.CI95 != nil && !math.IsNaN(*f.CI95) {
		s += " ± " + fmtNum(*f.CI95, f.Decimals)
	}
	return s
}

// Tolerance is how far a documented figure may be from the code's: one
// unit of its last stated decimal (rounding on another machine may move
// the last digit by one).
func (f Figure) Tolerance() float64 { return math.Pow(10, -float64(f.Decimals)) }

// fmtNum prints v at d decimals, with thousands separators on the
// integer part and "-0" printed as "0".
func fmtNum(v float64, d int) string {
	s := fmt.Sprintf("%.*f", d, v)
	if strings.Trim(s, "-0.") == "" {
		s = strings.TrimPrefix(s, "-")
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	intPart, frac, hasFrac := strings.Cut(s, ".")
	if len(intPart) > 4 {
		var b strings.Builder
		for i, c := range intPart {
			if i > 0 && (len(intPart)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		intPart = b.String()
	}
	if hasFrac {
		intPart += "." + frac
	}
	if neg {
		intPart = "-" + intPart
	}
	return intPart
}

// Status of a row after a run.
const (
	StatusRan     = "ran"
	StatusSkipped = "skipped" // its data is missing (../shared absent)
	StatusFailed  = "failed"
)

// Result is one row as run: its definition's texts, what it measured and
// the verdict.
type Result struct {
	Name    string `json:"name"`
	Claim   string `json:"claim"`
	Source  string `json:"source"`
	Paper   string `json:"paper"`
	Chapter string `json:"chapter"`
	// Commands give the row's figures one run (or sweep) each, as a
	// user types them.
	Commands []string `json:"commands"`
	Status   string   `json:"status"`
	// Message says why a row was skipped or failed.
	Message string   `json:"message,omitempty"`
	Figures []Figure `json:"figures,omitempty"`
	// Ours is the row's figures in a line (Row.Ours), Verdict a word or
	// two (Row.Verdict), Note what the verdict rests on.
	Ours    string `json:"ours,omitempty"`
	Verdict string `json:"verdict,omitempty"`
	Note    string `json:"note,omitempty"`
	// Reduced says what a quick run left out of this row ("" where the
	// quick row is the full one).
	Reduced string `json:"reduced,omitempty"`
	// WallS is the wall time of the row on the machine that ran it;
	// SharedWith names the earlier row whose runs it reused (its wall
	// time is then that of reading them).
	WallS      float64 `json:"wall_s"`
	SharedWith string  `json:"shared_with,omitempty"`
}

// Figure returns the row's figure of that key, or nil.
func (r *Result) Figure(key string) *Figure {
	for i := range r.Figures {
		if r.Figures[i].Key == key {
			return &r.Figures[i]
		}
	}
	return nil
}

// Report is a whole reproduce run: results.json.
type Report struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
	// Quick says the rows ran in their reduced form where they have one.
	Quick bool     `json:"quick"`
	Rows  []Result `json:"rows"`
}

// Failed counts the rows that ran and failed.
func (r *Report) Failed() int {
	n := 0
	for _, row := range r.Rows {
		if row.Status == StatusFailed {
			n++
		}
	}
	return n
}

// Row is one published result and how this project reproduces it.
type Row struct {
	Name    string
	Claim   string // the claim in the publication's words, short
	Source  string // where it is published: paper and figure or section
	Paper   string // the published figure
	Chapter string // the docs chapter (relative to docs/) that discusses it
	// Commands are what a user runs to see the row's figures: one
	// command per run behind them (TestRowCommandsRun runs each).
	Commands []string
	// Quick says what the quick form reduces ("" where it runs in full).
	Quick string
	// run measures the row's figures; quick asks for the reduced form.
	run func(r *Runner, quick bool) ([]Figure, error)
	// judge gives the row's one line of figures, its verdict (a word or
	// two) and what the verdict rests on.
	judge func(fs map[string]Figure) (ours, verdict, note string)
}

// Options of a reproduce run.
type Options struct {
	Quick bool
	// Only runs the named rows (all where empty).
	Only []string
	// Progress, if set, is told after each row: rows done, of how many,
	// and the name of the row that just finished.
	Progress func(done, total int, name string)
	// Now is the wall clock for each row's time (time.Now if nil).
	Now func() time.Time
}

// Runner runs the scenarios behind the rows: the built-ins as they are,
// with the row's settings. It reads no environment (a published figure
// is reproduced from the built-in scenario, whatever CONSPIRATOR_
// variables the user has set) and writes no file.
type Runner struct {
	// Load resolves a built-in scenario with --set style settings;
	// LoadBuiltin by default.
	Load func(name string, sets []string) (*scenarios.Scenario, error)
	// Run simulates it; sim.Run by default.
	Run func(sc *scenarios.Scenario) (*sim.Output, error)

	e2e, optimal *memo
	// ran is the row now running; shared is set by a row that reused
	// the runs of an earlier one (its name).
	ran, shared string
}

// LoadBuiltin loads a built-in scenario with settings, no environment.
func LoadBuiltin(name string, sets []string) (*scenarios.Scenario, error) {
	var sc scenarios.Scenario
	if err := scenarios.LoadInput(name, scenarios.Input{Overrides: sets}, &sc); err != nil {
		return nil, err
	}
	return &sc, nil
}

// MissingData is the error of a row whose scenario's data files are
// absent: the row is skipped, the others still run.
type MissingData struct{ Err error }

func (m *MissingData) Error() string { return m.Err.Error() }
func (m *MissingData) Unwrap() error { return m.Err }

// scenario runs name with sets and returns its output.
func (r *Runner) scenario(name string, sets ...string) (*sim.Output, error) {
	load, run := r.Load, r.Run
	if load == nil {
		load = LoadBuiltin
	}
	if run == nil {
		run = sim.Run
	}
	sc, err := load(name, sets)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := sim.CheckFiles(sc); err != nil {
		return nil, &MissingData{Err: err}
	}
	out, err := run(sc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// Names lists the rows' names in their order.
func Names() []string {
	out := make([]string, len(Rows))
	for i, r := range Rows {
		out[i] = r.Name
	}
	return out
}

// Find returns the row of that name.
func Find(name string) (Row, bool) {
	for _, r := range Rows {
		if r.Name == name {
			return r, true
		}
	}
	return Row{}, false
}

// UnknownRowError names a row that is not in the list, and the list.
type UnknownRowError struct{ Name string }

func (e *UnknownRowError) Error() string {
	return fmt.Sprintf("no row %q; the rows are: %s", e.Name, strings.Join(Names(), ", "))
}

// Run runs the rows (all, or opts.Only) in their order and returns the
// report. A row whose data is missing is skipped, one that fails is
// marked failed with its error; the others still run. An unknown name in
// opts.Only is an *UnknownRowError before anything runs.
func Run(r *Runner, opts Options) (*Report, error) {
	rows := Rows
	if len(opts.Only) > 0 {
		rows = nil
		for _, n := range opts.Only {
			row, ok := Find(n)
			if !ok {
				return nil, &UnknownRowError{Name: n}
			}
			rows = append(rows, row)
		}
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	rep := &Report{Version: sim.Version, Commit: sim.Commit(), Quick: opts.Quick}
	for i, row := range rows {
		start := now()
		res := Result{Name: row.Name, Claim: row.Claim, Source: row.Source, Paper: row.Paper, Chapter: row.Chapter, Commands: row.Commands}
		if opts.Quick {
			res.Reduced = row.Quick
		}
		r.ran, r.shared = row.Name, ""
		figs, err := row.run(r, opts.Quick)
		res.SharedWith = r.shared
		var md *MissingData
		switch {
		case errors.As(err, &md):
			res.Status, res.Message = StatusSkipped, md.Error()
		case err != nil:
			res.Status, res.Message = StatusFailed, err.Error()
		default:
			res.Status, res.Figures = StatusRan, figs
			byKey := map[string]Figure{}
			for _, f := range figs {
				byKey[f.Key] = f
			}
			res.Ours, res.Verdict, res.Note = row.judge(byKey)
		}
		res.WallS = math.Round(now().Sub(start).Seconds()*10) / 10
		rep.Rows = append(rep.Rows, res)
		if opts.Progress != nil {
			opts.Progress(i+1, len(rows), row.Name)
		}
	}
	return rep, nil
}

// ci returns a pointer to a finite half-width, or nil.
func ci(h float64) *float64 {
	if math.IsNaN(h) || math.IsInf(h, 0) {
		return nil
	}
	return &h
}

// policy returns the cluster policy of that name from a summary.
func policy(out *sim.Output, name string) (*cluster.PolicyResult, error) {
	for i := range out.Summary.Policies {
		if out.Summary.Policies[i].Name == name {
			return &out.Summary.Policies[i], nil
		}
	}
	return nil, fmt.Errorf("the run has no policy %q", name)
}
