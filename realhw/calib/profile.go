package calib

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"github.com/conspirator-sim/conspirator/internal/inputfile"
	"io"
	"math"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/realhw"
	"go.yaml.in/yaml/v3"
	"gonum.org/v1/gonum/stat"
)

// ProfileVersion is the schema version written into every profile.
const ProfileVersion = 1

// Profile is a calibration profile: fitted parameters with the provenance
// of the measurements behind them. Times and rates are written in the
// scenario unit syntax ("1.3us", "25GB/s"). A fit that is not good enough
// is kept with applied: false and its reason, never silently dropped or
// silently used.
type Profile struct {
	Version    int          `yaml:"version"`
	Provenance Provenance   `yaml:"provenance"`
	Stages     []StageFit   `yaml:"stages"`
	CPU        []CPUFit     `yaml:"cpu,omitempty"`
	Background []LoadFit    `yaml:"background,omitempty"`
	Decision   *DecisionFit `yaml:"decision,omitempty"`
	// Spread holds the host stages' costs as distributions (StageSpread),
	// from the unloaded host run; the scenario overrides carry their part
	// above the median onto datapath.host.spread.
	Spread []StageSpread `yaml:"spread,omitempty"`
	// SpreadCorrelation couples one request's stage draws (the copula's
	// rho, datapath.host.spread.correlation), from the same run.
	SpreadCorrelation float64        `yaml:"spread_correlation,omitempty"`
	Scenario          map[string]any `yaml:"scenario,omitempty"` // --set style overrides from applied fits (keys sorted on output)
	// ScenarioFrom says, per key of Scenario, which measurement and fit
	// the value comes from; a run that applies the profile carries it into
	// summary.json and its report.
	ScenarioFrom map[string]string `yaml:"scenario_from,omitempty"`
	// Notes are remarks a user must see, e.g. a stage name that no
	// measurement tool writes and no scenario key takes (a typo in an
	// imported CSV would otherwise be fitted and ignored without a word).
	Notes []string `yaml:"notes,omitempty"`
	// Compute is the measured GPU compute table (calibrate --import of
	// realhw/torch/measure_compute.py's CSV or its JSON); ComputeMode the
	// mode whose rows a run applies (graph unless chosen).
	Compute     []ComputeRow `yaml:"compute,omitempty"`
	ComputeMode string       `yaml:"compute_mode,omitempty"`

	// throughput holds the median bytes/second of single-size stages
	// (nvbandwidth), which have no line to fit.
	throughput map[string]float64
}

// Provenance says where, when and how the measurements were taken.
type Provenance struct {
	Machine Machine `yaml:"machine"`
	// Date is supplied by the caller (the CLI); nothing in this package
	// reads the wall clock for it.
	Date    string         `yaml:"date,omitempty"`
	Tool    string         `yaml:"tool"`
	Sources []string       `yaml:"sources,omitempty"`
	Samples map[string]int `yaml:"samples"` // per stage
	// GPU is the GPU (catalog type, device name, driver, CUDA) of GPU-side
	// measurements; a scenario that applies them must run that type.
	GPU *GPUInfo `yaml:"gpu,omitempty"`
}

// Machine identifies the measured machine.
type Machine struct {
	Hostname string `yaml:"hostname,omitempty"`
	CPUModel string `yaml:"cpu_model,omitempty"`
	GOARCH   string `yaml:"goarch"`
	Cores    int    `yaml:"cores,omitempty"`
	Clock    string `yaml:"clock,omitempty"` // e.g. "2.45GHz", from /proc/cpuinfo when it says
}

// StageFit is a stage's latency = fixed + bytes / bandwidth.
type StageFit struct {
	Stage string `yaml:"stage"`
	// Kind is the data-path stage kind the stage measures (MeasuredKind);
	// empty for the whole request or a name no tool writes.
	Kind      string   `yaml:"kind,omitempty"`
	Fixed     string   `yaml:"fixed"`               // duration, e.g. "12.5us"
	Bandwidth string   `yaml:"bandwidth,omitempty"` // e.g. "9.87GB/s"; empty when no slope was fitted
	RSquared  float64  `yaml:"r_squared"`
	Sizes     []int64  `yaml:"sizes,flow"`
	Residuals []string `yaml:"residuals,flow"` // per size: median - fit, as durations with sign
	Samples   int      `yaml:"samples"`
	Applied   bool     `yaml:"applied"`
	Reason    string   `yaml:"reason,omitempty"`
	// Method is how the line was fitted (LinearFit.Method); Note what a
	// two-regime fit leaves out.
	Method string    `yaml:"method,omitempty"`
	Note   string    `yaml:"note,omitempty"`
	fit    LinearFit `yaml:"-"`
}

// CPUFit is the CPU time a stage costs: fixed + bytes * per-byte, from
// the kernel's per-thread accounting.
type CPUFit struct {
	Stage         string  `yaml:"stage"`
	Fixed         string  `yaml:"fixed"`
	NsPerByte     float64 `yaml:"ns_per_byte"`
	CyclesPerByte float64 `yaml:"cycles_per_byte,omitempty"` // ns_per_byte * clock, when the clock is known
	RSquared      float64 `yaml:"r_squared"`
	Samples       int     `yaml:"samples"`
	Applied       bool    `yaml:"applied"`
	Reason        string  `yaml:"reason,omitempty"`
}

// LoadFit is a stage's slowdown under background load u: its median
// latency is stretched by 1 + SlowdownPerLoad*u. Levels carry, per measured
// load, the distribution of latency over the unloaded fit, normalized by
// its median, and of latency minus the unloaded fit (quantiles at the
// probabilities QuantileP), from which the model draws the spread and the
// tail.
type LoadFit struct {
	Stage           string      `yaml:"stage"`
	SlowdownPerLoad float64     `yaml:"slowdown_per_load"`
	RSquared        float64     `yaml:"r_squared"`
	Levels          []LoadLevel `yaml:"levels"`
	Applied         bool        `yaml:"applied"`
	Reason          string      `yaml:"reason,omitempty"`
}

// LoadLevel is one measured background load of a LoadFit.
type LoadLevel struct {
	Load        float64   `yaml:"load"`
	MedianRatio float64   `yaml:"median_ratio"` // median latency / unloaded fit
	Samples     int       `yaml:"samples"`
	Quantiles   []float64 `yaml:"quantiles,flow"` // of latency / (fit * median_ratio)
	// DelayQuantiles are the quantiles (same p) of latency - unloaded fit,
	// in microseconds: the absolute delay over the fit. What background
	// load adds to a request is a wait of a few microseconds to a slice,
	// the same for a 1 KiB and a 256 KiB request, which a ratio would
	// spread from small requests onto large ones.
	DelayQuantiles []float64 `yaml:"delay_quantiles_us,flow"`
}

// QuantileP are the probabilities of LoadLevel's quantiles: every 1% up
// to 99%, then every 0.1% to 99.9%, then 99.99% and the maximum. The tail
// points matter: between two stored quantiles the model interpolates
// linearly, and with only p99 and the maximum (a stall of milliseconds) the
// top 1% of draws would spread uniformly up to that maximum and drag the
// model's p99 with them at the slightest sampling excess.
var QuantileP = func() []float64 {
	var p []float64
	for i := range 100 {
		p = append(p, float64(i)/100)
	}
	// 0.991 .. 0.999 (0.99 is the last of the 1% steps: listed twice, as
	// it was before, the table had no 99.9% point).
	for i := 1; i <= 9; i++ {
		p = append(p, 0.99+float64(i)/1000)
	}
	return append(p, 0.9999, 1)
}()

// NumQuantiles is the length of LoadLevel's quantile lists.
var NumQuantiles = len(QuantileP)

// FromSamples fits every stage found in samples: latency on bytes from the
// unloaded samples (background load 0), CPU time on bytes where samples
// carry CPU time, and the slowdown per unit of load where a stage was also
// measured under load. Provenance.Machine and Date are left for the caller;
// Samples counts are filled in. Invalid samples are skipped and counted
// under the pseudo-stage "invalid".
func FromSamples(samples []realhw.Sample) *Profile {
	p := &Profile{Version: ProfileVersion, Provenance: Provenance{Samples: map[string]int{}}}
	p.Provenance.Machine.GOARCH = runtime.GOARCH
	p.Provenance.Tool = "conspirator calibrate"
	valid := samples[:0:0]
	for _, s := range samples {
		if s.Validate() != nil {
			p.Provenance.Samples["invalid"]++
			continue
		}
		valid = append(valid, s)
	}
	names, by := groupByStage(valid)
	for _, name := range names {
		ss := by[name]
		p.Provenance.Samples[name] = len(ss)
		var idle []realhw.Sample
		var cpu []realhw.Sample
		for _, s := range ss {
			if s.BackgroundLoad == 0 {
				idle = append(idle, s)
				if s.CPUTime > 0 {
					c := s
					c.Latency = s.CPUTime
					cpu = append(cpu, c)
				}
			}
		}
		f := FitLinear(name, idle)
		p.Stages = append(p.Stages, stageFit(f))
		if f.Note != "" {
			p.Notes = append(p.Notes, name+": "+f.Note)
		}
		if len(cpu) > 0 {
			p.CPU = append(p.CPU, cpuFit(FitLinear(name, cpu), 0))
		}
		if lf, ok := fitLoad(f, ss); ok {
			p.Background = append(p.Background, lf)
		}
		if len(f.Sizes) == 1 && len(idle) > 0 {
			rates := make([]float64, 0, len(idle))
			for _, s := range idle {
				if s.Latency > 0 {
					rates = append(rates, float64(s.Bytes)/s.Latency.Seconds())
				}
			}
			if len(rates) > 0 {
				sort.Float64s(rates)
				if p.throughput == nil {
					p.throughput = map[string]float64{}
				}
				p.throughput[name] = rates[len(rates)/2]
			}
		}
	}
	p.fillScenario()
	for _, s := range p.Stages {
		if !knownStage(s.Stage) {
			p.Notes = append(p.Notes, fmt.Sprintf("stage %q (%d samples) is not a stage that the measurement tools write (%s); its fit is kept for reference but sets no scenario value: check the name", s.Stage, s.Samples, strings.Join(knownStageNames(), ", ")))
		}
	}
	return p
}

func stageFit(f LinearFit) StageFit {
	k, _ := MeasuredKind(f.Stage)
	sf := StageFit{Stage: f.Stage, Kind: string(k), RSquared: round(f.RSquared, 4), Sizes: f.Sizes, Samples: f.Samples, Applied: f.Applied, Reason: f.Reason, Method: f.Method, Note: f.Note, fit: f}
	sf.Fixed = signedDuration(f.Fixed)
	if f.PerByte > 0 {
		sf.Bandwidth = units.Bandwidth(round(1/f.PerByte, 4)).String()
	}
	for _, r := range f.Residuals {
		sf.Residuals = append(sf.Residuals, signedDuration(r))
	}
	return sf
}

func cpuFit(f LinearFit, clockHz float64) CPUFit {
	c := CPUFit{Stage: f.Stage, Fixed: signedDuration(f.Fixed), NsPerByte: round(f.PerByte*1e9, 4), RSquared: round(f.RSquared, 4), Samples: f.Samples, Applied: f.Applied, Reason: f.Reason}
	if clockHz > 0 {
		c.CyclesPerByte = round(f.PerByte*clockHz, 4)
	}
	return c
}

// fitLoad fits the slowdown of a stage's latency with background load:
// for each load level, the median over samples of latency / unloaded fit;
// then (ratio - 1) = k*u through the origin by least squares. It needs an
// applied unloaded fit and at least one loaded level.
func fitLoad(f LinearFit, ss []realhw.Sample) (LoadFit, bool) {
	byLoad := map[float64][]float64{}
	delays := map[float64][]float64{}
	for _, s := range ss {
		pred := f.Predict(s.Bytes)
		if pred > 0 {
			byLoad[s.BackgroundLoad] = append(byLoad[s.BackgroundLoad], s.Latency.Seconds()/pred)
			delays[s.BackgroundLoad] = append(delays[s.BackgroundLoad], (s.Latency.Seconds()-pred)*1e6)
		}
	}
	if len(byLoad) < 2 || f.Stage == "" {
		return LoadFit{}, false
	}
	lf := LoadFit{Stage: f.Stage}
	loads := make([]float64, 0, len(byLoad))
	for u := range byLoad {
		loads = append(loads, u)
	}
	slices.Sort(loads)
	var x, y []float64
	for _, u := range loads {
		r := byLoad[u]
		m := median(r)
		lvl := LoadLevel{Load: u, MedianRatio: round(m, 4), Samples: len(r)}
		norm := make([]float64, len(r))
		for i, v := range r {
			norm[i] = v / m
		}
		slices.Sort(norm)
		d := delays[u]
		slices.Sort(d)
		for _, p := range QuantileP {
			lvl.Quantiles = append(lvl.Quantiles, round(sortedQuantile(norm, p), 4))
			lvl.DelayQuantiles = append(lvl.DelayQuantiles, round(sortedQuantile(d, p), 4))
		}
		lf.Levels = append(lf.Levels, lvl)
		x = append(x, u)
		y = append(y, m-1)
	}
	// Through the origin: at u = 0 the ratio is 1 by construction.
	_, k := stat.LinearRegression(x, y, nil, true)
	lf.SlowdownPerLoad = round(k, 4)
	lf.RSquared = round(stat.RSquared(x, y, nil, 0, k), 4)
	switch {
	case !f.Applied:
		lf.Reason = "the unloaded fit it is relative to is not applied: " + f.Reason
	case len(loads) < 3:
		lf.Reason = fmt.Sprintf("too few load levels: %d, need at least 3 (0 and two loaded)", len(loads))
	case loads[0] != 0:
		lf.Reason = "no unloaded level to compare with"
	default:
		lf.Applied = true
	}
	return lf, true
}

// signedDuration writes seconds as a duration in the scenario syntax,
// rounded to the nanosecond, with a leading '-' when negative (such a value
// is only ever a residual or a flagged fit).
func signedDuration(sec float64) string {
	if math.IsNaN(sec) || math.IsInf(sec, 0) {
		return "NaN"
	}
	return units.Duration(engine.Seconds(sec)).String()
}

// round keeps sig significant digits, so that YAML carries no noise digits.
func round(v float64, sig int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', sig, 64), 64)
	return f
}

// WriteYAML writes the profile as YAML.
func (p *Profile) WriteYAML(w io.Writer) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		return fmt.Errorf("calib: writing profile: %w", err)
	}
	return enc.Close()
}

// LoadProfile reads a profile written by WriteYAML. Unknown keys, a wrong
// version and unparsable durations or bandwidths are errors naming the
// file and line.
func LoadProfile(path string) (*Profile, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("calib: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("calib: %s is a directory; give the profile.yaml that calibrate wrote", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxProfileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("calib: %w", err)
	}
	if len(b) > MaxProfileBytes {
		return nil, fmt.Errorf("calib: %s is larger than %d MiB, the most a calibration profile may hold (calibrate writes a few KiB); is it the right file?", path, MaxProfileBytes>>20)
	}
	return ReadProfile(bytes.NewReader(b), path)
}

// MaxProfileBytes bounds a calibration profile read whole: calibrate
// writes a few KiB.
const MaxProfileBytes = 4 << 20

// ReadProfile is LoadProfile from a reader; name is used in errors.
func ReadProfile(r io.Reader, name string) (*Profile, error) {
	dec := yaml.NewDecoder(bufio.NewReader(r))
	dec.KnownFields(true)
	var p Profile
	if err := dec.Decode(&p); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty calibration profile", name)
		}
		return nil, profileYAMLError(name, err)
	}
	if p.Version != ProfileVersion {
		return nil, fmt.Errorf("%s: profile version %d, this build reads version %d", name, p.Version, ProfileVersion)
	}
	for i := range p.Stages {
		s := &p.Stages[i]
		fixed, err := parseSignedDuration(s.Fixed)
		if err != nil {
			return nil, fmt.Errorf("%s: stages[%d] (%s).fixed: %w", name, i, s.Stage, err)
		}
		s.fit = LinearFit{Stage: s.Stage, Fixed: fixed, RSquared: s.RSquared, Sizes: s.Sizes, Samples: s.Samples, Applied: s.Applied, Reason: s.Reason}
		if s.Bandwidth != "" {
			bw, err := units.ParseBandwidth(s.Bandwidth)
			if err != nil {
				return nil, fmt.Errorf("%s: stages[%d] (%s).bandwidth: %w", name, i, s.Stage, err)
			}
			if bw <= 0 {
				return nil, fmt.Errorf("%s: stages[%d] (%s).bandwidth %q must be > 0", name, i, s.Stage, s.Bandwidth)
			}
			s.fit.PerByte = 1 / bw.BytesPerSecond()
		}
	}
	if err := p.readComputeTimes(name); err != nil {
		return nil, err
	}
	if len(p.Compute) > 0 && (p.Provenance.GPU == nil || p.Provenance.GPU.Type == "") {
		return nil, fmt.Errorf("%s: compute rows without provenance.gpu.type: the GPU they were measured on must be named", name)
	}
	if d := p.Decision; d != nil {
		for i := range d.Sizes {
			z := &d.Sizes[i]
			mean, err := units.ParseDuration(z.Mean)
			if err != nil {
				return nil, fmt.Errorf("%s: decision.sizes[%d].mean: %w", name, i, err)
			}
			if _, err := units.ParseDuration(z.P99); err != nil {
				return nil, fmt.Errorf("%s: decision.sizes[%d].p99: %w", name, i, err)
			}
			z.meanS = mean.Time().Seconds()
		}
		if d.Applied {
			if _, err := units.ParseDuration(d.HostDecisionTime); err != nil {
				return nil, fmt.Errorf("%s: decision.host_decision_time: %w", name, err)
			}
		}
	}
	if err := checkSpreads(name, p.Spread); err != nil {
		return nil, err
	}
	if !(p.SpreadCorrelation >= 0 && p.SpreadCorrelation <= 1) {
		return nil, fmt.Errorf("%s: spread_correlation %v is outside [0, 1]", name, p.SpreadCorrelation)
	}
	for i, lf := range p.Background {
		for j, l := range lf.Levels {
			if len(l.Quantiles) != NumQuantiles || !slices.IsSorted(l.Quantiles) {
				return nil, fmt.Errorf("%s: background[%d] (%s).levels[%d]: need %d ascending quantiles, got %d", name, i, lf.Stage, j, NumQuantiles, len(l.Quantiles))
			}
			if len(l.DelayQuantiles) != NumQuantiles || !slices.IsSorted(l.DelayQuantiles) {
				return nil, fmt.Errorf("%s: background[%d] (%s).levels[%d]: need %d ascending delay_quantiles_us, got %d", name, i, lf.Stage, j, NumQuantiles, len(l.DelayQuantiles))
			}
			if !(l.Load >= 0 && l.Load < 1) || !(l.MedianRatio > 0) {
				return nil, fmt.Errorf("%s: background[%d] (%s).levels[%d]: load %v must be in [0,1) and median_ratio %v > 0", name, i, lf.Stage, j, l.Load, l.MedianRatio)
			}
		}
	}
	return &p, nil
}

func parseSignedDuration(s string) (float64, error) {
	neg := strings.HasPrefix(s, "-")
	d, err := units.ParseDuration(strings.TrimPrefix(s, "-"))
	if err != nil {
		return 0, err
	}
	v := d.Time().Seconds()
	if neg {
		v = -v
	}
	return v, nil
}

// Stage returns the named stage's fit, and whether there is one.
func (p *Profile) Stage(name string) (LinearFit, bool) {
	for _, s := range p.Stages {
		if s.Stage == name {
			return s.fit, true
		}
	}
	return LinearFit{}, false
}

// Load returns the named stage's background-load fit, and whether there
// is one.
func (p *Profile) Load(name string) (LoadFit, bool) {
	for _, l := range p.Background {
		if l.Stage == name {
			return l, true
		}
	}
	return LoadFit{}, false
}

// yamlTypeMsg matches yaml.v3's "line N: cannot unmarshal !!TAG `VALUE`
// into GOTYPE" (VALUE is absent for collections).
var yamlTypeMsg = regexp.MustCompile("^line (\\d+): cannot unmarshal !!(\\w+)(?: `(.*)`)? into (.+)$")

var yamlTags = map[string]string{
	"str": "text", "int": "an integer", "float": "a number", "bool": "true or false",
	"seq": "a list", "map": "a mapping (key: value lines)", "null": "nothing",
}

// goTypes says in words what a profile field of a Go type holds.
var goTypes = map[string]string{
	"[]calib.StageFit":        "a list of stage fits (- stage: NAME, fixed: 1.3us, ...)",
	"[]calib.CPUFit":          "a list of CPU fits (- stage: NAME, ...)",
	"[]calib.LoadFit":         "a list of background-load fits (- stage: NAME, levels: [...])",
	"[]calib.LoadLevel":       "a list of load levels",
	"calib.Provenance":        "a mapping (machine:, tool:, samples:)",
	"calib.Machine":           "a mapping (hostname:, cpu_model:, ...)",
	"calib.DecisionFit":       "a mapping (sizes:, applied:, ...)",
	"calib.StageFit":          "a stage fit mapping (stage: NAME, fixed: 1.3us, ...)",
	"map[string]int":          "a mapping of names to integers",
	"map[string]interface {}": "a mapping of scenario keys to values",
	"int":                     "an integer",
	"float64":                 "a number",
	"bool":                    "true or false",
	"string":                  "text",
	"[]string":                "a list of text",
	"[]int64":                 "a list of integers",
	"[]float64":               "a list of numbers",
}

// profileYAMLError turns yaml.v3's decoding errors into messages that name
// the file and line and say, in words, what was found and what belongs
// there (never a Go type such as []calib.StageFit).
func profileYAMLError(name string, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return fmt.Errorf("%s: %w", name, err)
	}
	lines := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		m := yamlTypeMsg.FindStringSubmatch(e)
		if m == nil {
			lines = append(lines, name+": "+e)
			continue
		}
		found := yamlTags[m[2]]
		if found == "" {
			found = "a " + m[2]
		}
		if m[3] != "" {
			found = fmt.Sprintf("%q (%s)", m[3], found)
		}
		want := goTypes[m[4]]
		if want == "" {
			want = strings.TrimPrefix(m[4], "calib.")
		}
		lines = append(lines, fmt.Sprintf("%s:%s: found %s where %s belongs (calibration profiles are written by 'conspirator calibrate')", name, m[1], found, want))
	}
	return errors.New(strings.Join(lines, "\n"))
}
