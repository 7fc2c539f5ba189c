package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/realhw/calib"
)

// Testbed measurements (fixtures written from the documented perftest and
// nvbandwidth formats) produce a calibration profile that `run` accepts:
// the profile's values reach the resolved inputs in summary.json, and a
// --set still wins over the profile.
func TestCalibrateImportThenRun(t *testing.T) {
	dir := t.TempDir()
	lat := filepath.Join("..", "..", "realhw", "perftest", "testdata", "ib_write_lat.txt")
	nvb := filepath.Join("..", "..", "realhw", "nvbandwidth", "testdata", "h100.txt")
	out := filepath.Join(dir, "testbed")
	code, stdout, stderr := cli(t, nil, "calibrate", "--import", lat, "--import", nvb, "--buffer-bytes", "512MiB", "-o", out)
	if code != 0 {
		t.Fatalf("calibrate --import: exit %d: %s", code, stderr)
	}
	for _, w := range []string{"datapath.host.pinned_h2d", "datapath.network.latency"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("calibrate output lacks the override %s:\n%s", w, stdout)
		}
	}
	prof := filepath.Join(out, "profile.yaml")
	run := filepath.Join(dir, "run")
	code, _, stderr = cli(t, nil, "run", "paper/e2e", "--set", "calibration="+prof, "--set", "datapath.clients.requests=100",
		"--set", "datapath.network.latency=2us", "-o", run)
	if code != 0 {
		t.Fatalf("run with the profile: exit %d: %s", code, stderr)
	}
	var s struct {
		Inputs struct {
			DataPath struct {
				Host struct {
					PinnedH2D string `json:"pinned_h2d"`
				} `json:"host"`
				Network struct {
					Latency string `json:"latency"`
				} `json:"network"`
			} `json:"datapath"`
		} `json:"inputs"`
		Calibration *struct {
			Profile, Date, Tool string
			Sources             []string
			Values              []struct {
				Key, Value, From string
				OverriddenBySet  bool `json:"overridden_by_set"`
			}
		} `json:"calibration"`
	}
	b, err := os.ReadFile(filepath.Join(run, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	// The h100.txt fixture's host_to_device_memcpy_ce cells are 55.63 and
	// 55.41 GB/s; the median of two is the upper one (index n/2).
	if got := s.Inputs.DataPath.Host.PinnedH2D; got != "55.63GB/s" {
		t.Errorf("pinned_h2d = %q, want the profile's 55.63GB/s", got)
	}
	if got := s.Inputs.DataPath.Network.Latency; got != "2us" {
		t.Errorf("network.latency = %q, want the --set 2us to win over the profile", got)
	}
	// The trace: both values, where each was measured, the one --set
	// replaced marked so, the profile's date and sources.
	c := s.Calibration
	if c == nil || c.Profile != prof || c.Date == "" || c.Tool != "conspirator calibrate --import" || len(c.Sources) != 2 || len(c.Values) != 2 {
		t.Fatalf("calibration trace %+v, want the profile, its date, tool, two sources and two values", c)
	}
	for _, v := range c.Values {
		switch v.Key {
		case "datapath.host.pinned_h2d":
			if v.Value != "55.63GB/s" || !strings.Contains(v.From, "nvbandwidth host_to_device_memcpy_ce") || v.OverriddenBySet {
				t.Errorf("pinned_h2d trace %+v", v)
			}
		case "datapath.network.latency":
			if !strings.Contains(v.From, "rdma-write latency fit") || !v.OverriddenBySet {
				t.Errorf("network.latency trace %+v, want the rdma-write fit, overridden by --set", v)
			}
		default:
			t.Errorf("unexpected traced key %+v", v)
		}
	}
	md, err := os.ReadFile(filepath.Join(run, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"## Calibration", "`datapath.host.pinned_h2d` | 55.63GB/s | nvbandwidth", "no: --set gave another value"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("report.md lacks %q", w)
		}
	}
}

// calibrate --validate on this machine prints the error table and writes
// validation.json in the documented shape.
func TestCalibrateValidateHost(t *testing.T) {
	if testing.Short() {
		t.Skip("measures this machine for a few seconds")
	}
	out := filepath.Join(t.TempDir(), "cal")
	code, stdout, stderr := cli(t, nil, "calibrate", "--backend", "host", "--validate", "--short", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "p50 error") {
		t.Errorf("no error table:\n%s", stdout)
	}
	var v struct {
		Model string `json:"model"`
		Path  string `json:"path"`
		Fit   *struct {
			WakeupMiss *float64 `json:"wakeup_miss"`
		} `json:"fit"`
		Levels []struct {
			Load       *float64 `json:"load"`
			UsedForFit *bool    `json:"used_for_fit"`
			P50        *float64 `json:"p50_error"`
			P99        *float64 `json:"p99_error"`
			Stages     []struct {
				Stage string `json:"stage"`
			} `json:"stages"`
			Dominant string `json:"dominant_stage"`
		} `json:"levels"`
	}
	b, err := os.ReadFile(filepath.Join(out, "validation.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if v.Model != "datapath" || v.Path != "loopback" || v.Fit == nil || v.Fit.WakeupMiss == nil {
		t.Errorf("model %q, path %q, fit %+v: want sim/datapath's loopback path and its fit", v.Model, v.Path, v.Fit)
	}
	if len(v.Levels) != 3 {
		t.Fatalf("%d levels, want 20%%, 40%%, 60%%", len(v.Levels))
	}
	for i, want := range []float64{0.2, 0.4, 0.6} {
		l := v.Levels[i]
		if l.Load == nil || *l.Load != want || l.UsedForFit == nil || *l.UsedForFit || l.P50 == nil || l.P99 == nil || len(l.Stages) != 4 || l.Dominant == "" {
			t.Errorf("level %d = %+v, want load %v held out of the fit, with p50_error, p99_error, four stages and the dominant one", i, l, want)
		}
		for _, ext := range []string{"png", "svg", "pdf"} {
			f := fmt.Sprintf("plots/validation_cdf_load%02.0f.%s", 100*want, ext)
			if _, err := os.Stat(filepath.Join(out, f)); err != nil {
				t.Errorf("missing %s: %v", f, err)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(out, "profile.yaml")); err != nil {
		t.Error(err)
	}
}

func TestCalibrateBadInput(t *testing.T) {
	dir := t.TempDir()
	junk := writeFile(t, dir, "junk.txt", "hello\n")
	nvb := filepath.Join("..", "..", "realhw", "nvbandwidth", "testdata", "h100.txt")
	body, err := os.ReadFile(nvb)
	if err != nil {
		t.Fatal(err)
	}
	withCmd := writeFile(t, dir, "nvb-b256.txt", "$ ./nvbandwidth -b 256\n"+string(body))
	// With the command line pasted, no --buffer-bytes is needed, and the
	// size read is said.
	code, stdout, stderr := cli(t, nil, "calibrate", "--import", withCmd, "-o", filepath.Join(dir, "ok"))
	if code != 0 || !strings.Contains(stderr+stdout, "buffer size 256MiB read from the nvbandwidth command line") {
		t.Errorf("nvbandwidth with -b 256 pasted: exit %d, output %q", code, stderr+stdout)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"calibrate", "--import", junk, "-o", filepath.Join(dir, "a")}, "cannot tell the format"},
		{[]string{"calibrate", "--import", nvb, "-o", filepath.Join(dir, "b")}, "--buffer-bytes"},
		{[]string{"calibrate", "--backend", "fpga", "-o", filepath.Join(dir, "c")}, `--backend "fpga"`},
		{[]string{"calibrate", "--import", nvb, "--buffer-bytes", "5x12", "-o", filepath.Join(dir, "e")}, `unknown unit "x12"`},
		{[]string{"calibrate", "--import", filepath.Join(dir, "missing.txt"), "-o", filepath.Join(dir, "d")}, "missing.txt"},
		{[]string{"calibrate", "--import", withCmd, "--buffer-bytes", "512MiB", "-o", filepath.Join(dir, "f")}, "disagrees with the command line at line 1 (-b 256 MiB)"},
	} {
		code, _, stderr := cli(t, nil, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// A bad value in a calibration profile is blamed on the profile (named),
// not on a --set the user never gave; a --set of the user's own is still
// named as such.
func TestBadProfileValueBlamesProfile(t *testing.T) {
	dir := t.TempDir()
	prof := writeFile(t, dir, "prof.yaml", fmt.Sprintf("version: %d\nprovenance:\n  tool: x\n  machine: {}\n  samples: {}\nstages: []\nscenario:\n  datapath.host.decision_time: fast\n", calib.ProfileVersion))
	code, _, stderr := cli(t, nil, "run", "paper/e2e", "--set", "calibration="+prof, "--no-report")
	if code != exitUsage || !strings.Contains(stderr, "calibration profile "+prof+": datapath.host.decision_time=fast") || strings.Contains(stderr, "--set datapath.host.decision_time") {
		t.Errorf("exit %d, stderr %q: want exit 2 blaming the profile", code, stderr)
	}
	good := writeFile(t, dir, "good.yaml", fmt.Sprintf("version: %d\nprovenance:\n  tool: x\n  machine: {}\n  samples: {}\nstages: []\nscenario:\n  datapath.host.decision_time: 2us\n", calib.ProfileVersion))
	code, _, stderr = cli(t, nil, "run", "paper/e2e", "--set", "calibration="+good, "--set", "datapath.host.cores=0", "--no-report")
	if code != exitUsage || !strings.Contains(stderr, "--set datapath.host.cores=0") {
		t.Errorf("exit %d, stderr %q: want the user's --set named", code, stderr)
	}
}

// The format is told from the text: a CSV is known by its header, also
// after comment lines (realhw/cuda's measurements open with one).
func TestDetectFormat(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"stage,bytes,latency_us\nx,1,2\n", "csv"},
		{"# realhw/cuda.Measure on device 0\n\n  # more\nstage,bytes,latency_us\nx,1,2\n", "csv"},
		{"# a comment\nbytes,latency\n", ""},
		{"#bytes #iterations BW peak[MB/sec]\n", "perftest"},
		{"nvbandwidth Version: v0.4\n", "nvbandwidth"},
		{"", ""},
	} {
		if got := detectFormat([]byte(c.text)); got != c.want {
			t.Errorf("detectFormat(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// Bad spreads and load targets exit 2 naming the key, and write nothing:
// a load target outside (0, 95%], a spread distribution that does not
// exist, a negative spread, a quantile table that is not monotone (given
// with --set, through a profile's proposed override, or in a profile's
// spread section).
func TestSpreadAndLoadBadInput(t *testing.T) {
	dir := t.TempDir()
	head := fmt.Sprintf("version: %d\nprovenance:\n  tool: x\n  machine: {}\n  samples: {}\nstages: []\n", calib.ProfileVersion)
	override := writeFile(t, dir, "override.yaml", head+"scenario:\n  datapath.host.spread.copy: '{distribution: empirical, p: [0, 0.5, 1], excess_us: [0, 3, 2]}'\n")
	section := writeFile(t, dir, "section.yaml", head+"spread:\n  - {stage: network, measured: tcp-network, key: datapath.host.spread.network, samples: 3, shift_us: 0, p50_us: 1, p99_us: 1, p999_us: 1, distribution: empirical, p: [0, 1], excess_us: [-1, 2]}\n")
	for i, c := range []struct {
		args []string
		want string
	}{
		{[]string{"calibrate", "--backend", "host", "--fit-load", "0%"}, `--fit-load "0%": a background load target must be in (0%, 95%]`},
		{[]string{"calibrate", "--backend", "host", "--validate", "--validation-loads", "20%,96%"}, `--validation-loads[1] "96%"`},
		{[]string{"calibrate", "--backend", "host", "--fit-load", "10%,0.1"}, `--fit-load[1] "0.1": given twice`},
		{[]string{"calibrate", "--backend", "host", "--validate", "--validation-loads", "20%,0.2"}, `--validation-loads[1] "0.2": given twice`},
		{[]string{"calibrate", "--backend", "host", "--fit-load", "10%,0%"}, `--fit-load[1] "0%": a background load target must be in (0%, 95%]`},
		{[]string{"run", "paper/e2e", "--no-report", "--set", "datapath.host.wakeup_miss_floor=101%"}, "host.wakeup_miss_floor"},
		{[]string{"run", "paper/e2e", "--no-report", "--set", "datapath.host.background_model=slice", "--set", "datapath.host.background_load=90%", "--set", "datapath.host.wakeup_miss=100%", "--set", "datapath.host.wakeup_miss_floor=50%"}, "is a share above 100% of wake-ups"},
		{[]string{"calibrate", "--backend", "host", "--validation-loads", "-0.1"}, `--validation-loads[0] "-0.1"`},
		{[]string{"calibrate", "--import", "x.txt", "--fit-load", "50%"}, "--fit-load sets a background load"},
		{[]string{"calibrate", "--backend", "cuda", "--validation-loads", "50%"}, "--validation-loads sets a background load of --backend host's runs; it does not apply to --backend cuda"},
		{[]string{"run", "paper/e2e", "--no-report", "--set", "datapath.host.spread.cpu_work={distribution: weibull}"}, `datapath.host.spread.cpu_work.distribution: unknown distribution "weibull"`},
		{[]string{"run", "paper/e2e", "--no-report", "--set", "datapath.host.spread.reply={distribution: empirical, p: [0, 1], excess_us: [-2, 1]}"}, "datapath.host.spread.reply.excess_us[0]: -2 is a negative spread"},
		{[]string{"run", "paper/e2e", "--no-report", "--set", "calibration=" + override}, "datapath.host.spread.copy.excess_us[2]: 2 is below excess_us[1] = 3"},
		{[]string{"run", "paper/e2e", "--no-report", "--set", "calibration=" + section}, "spread[0] (network).excess_us[0]: -1 is a negative spread"},
	} {
		out := filepath.Join(dir, fmt.Sprint("out", i))
		code, _, stderr := cli(t, nil, append(c.args, "-o", out)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: wrote %s", c.args, out)
		}
	}
}
