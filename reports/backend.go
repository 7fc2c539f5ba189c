package reports

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// BackendFile is written by `run --backend`: each data-path stage's model
// time beside the real backend's (realhw/swap.Report).
const BackendFile = "backend.json"

// backendReport mirrors the parts of backend.json the report shows.
type backendReport struct {
	Backend        string  `json:"backend"`
	BackgroundLoad float64 `json:"background_load"`
	Note           string  `json:"note"`
	Rows           []struct {
		Path, Stage, Kind string
		ModelP50US        float64 `json:"model_p50_us"`
		Real              *struct {
			Op    string  `json:"op"`
			Reps  int     `json:"reps"`
			P50US float64 `json:"p50_us"`
			P99US float64 `json:"p99_us"`
		} `json:"real"`
		Simulated string `json:"simulated"`
	} `json:"stages"`
	Paths []struct {
		Path           string  `json:"path"`
		Performed      int     `json:"stages_performed"`
		ModelMeanUS    float64 `json:"model_mean_us"`
		WithRealMeanUS float64 `json:"with_real_stages_mean_us"`
	} `json:"paths"`
}

// writeBackend adds the real-backend section when the run has one.
func writeBackend(md *strings.Builder, dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, BackendFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var r backendReport
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: %w", BackendFile, err)
	}
	fmt.Fprintf(md, "\n## Stages on the %s backend\n\n", r.Backend)
	fmt.Fprintf(md, "Background load %s. %s.\n\n", fmtPct(r.BackgroundLoad), strings.ToUpper(r.Note[:1])+r.Note[1:])
	md.WriteString("| path | stage | kind | model p50 (µs) | real p50 (µs) | real p99 (µs) | backend call |\n|---|---|---|---:|---:|---:|---|\n")
	for _, s := range r.Rows {
		if s.Real == nil {
			fmt.Fprintf(md, "| %s | %s | %s | %s | simulated | | %s |\n", s.Path, s.Stage, s.Kind, fmtSig(s.ModelP50US), s.Simulated)
			continue
		}
		fmt.Fprintf(md, "| %s | %s | %s | %s | %s | %s | %s x %d |\n", s.Path, s.Stage, s.Kind, fmtSig(s.ModelP50US), fmtSig(s.Real.P50US), fmtSig(s.Real.P99US), s.Real.Op, s.Real.Reps)
	}
	md.WriteString("\n| path | stages performed | model mean (µs) | with real stages (µs) |\n|---|---:|---:|---:|\n")
	mean := map[string][2]float64{}
	for _, p := range r.Paths {
		fmt.Fprintf(md, "| %s | %d | %s | %s |\n", p.Path, p.Performed, fmtSig(p.ModelMeanUS), fmtSig(p.WithRealMeanUS))
		mean[p.Path] = [2]float64{p.ModelMeanUS, p.WithRealMeanUS}
	}
	hr, okh := mean["host-rdma"]
	co, okc := mean["conspirator"]
	if okh && okc && (co[0] < hr[0]) != (co[1] < hr[1]) {
		fmt.Fprintf(md, "\n**With these stages host-rdma and conspirator swap places against the model**: the %s backend stands in a host memcpy for the PCIe host-to-GPU copy and loopback for the network, so the swap compares this machine's stand-ins, not the paths' hardware.\n", r.Backend)
	}
	return nil
}
