package reports

import (
	"bytes"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
	"github.com/conspirator-sim/conspirator/sim/datapath"
)

// The stage breakdown stacks kinds: stages of one kind on a path add up,
// each kind keeps its colour whichever paths are shown, and a kind no path
// spends time in is left out of the legend. Results without kinds (older
// versions) stack stage names instead.
func TestStageBreakdownByKind(t *testing.T) {
	if len(kindColours) != len(datapath.StageKinds) {
		t.Fatalf("%d kind colours for %d kinds: one colour per kind", len(kindColours), len(datapath.StageKinds))
	}
	seen := map[color.Color]bool{}
	for _, c := range kindColours {
		if seen[c] {
			t.Errorf("colour %v used for two kinds", c)
		}
		seen[c] = true
	}
	colourOf := func(k datapath.StageKind) color.Color {
		for i, sk := range datapath.StageKinds {
			if sk.Kind == k {
				return kindColours[i]
			}
		}
		t.Fatalf("kind %s not in the vocabulary", k)
		return nil
	}
	labelOf := func(k datapath.StageKind) string {
		for _, sk := range datapath.StageKinds {
			if sk.Kind == k {
				return sk.Label
			}
		}
		return ""
	}
	tcp := PathResult{Name: "tcp",
		StagesUS:   map[string]Num{"network": 10, "decide": 2, "reply-tx": 3, "gpu": 100, "reply": 5},
		StageKinds: map[string]string{"network": "network", "decide": "host-cpu", "reply-tx": "host-cpu", "gpu": "compute", "reply": "reply"}}
	nic := PathResult{Name: "conspirator",
		StagesUS:   map[string]Num{"buffer": 0, "network": 8, "soc-decide": 4, "soc-notify": 1, "gpu": 100, "reply": 5},
		StageKinds: map[string]string{"buffer": "nic", "network": "network", "soc-decide": "soc", "soc-notify": "soc", "gpu": "compute", "reply": "reply"}}
	segs := kindSegments([]PathResult{tcp, nic})
	want := []struct {
		kind datapath.StageKind
		vals [2]float64
	}{ // in the vocabulary's order; "nic" takes no time anywhere
		{datapath.KindNetwork, [2]float64{10, 8}},
		{datapath.KindHostCPU, [2]float64{5, 0}},
		{datapath.KindSoC, [2]float64{0, 5}},
		{datapath.KindCompute, [2]float64{100, 100}},
		{datapath.KindReply, [2]float64{5, 5}},
	}
	if len(segs) != len(want) {
		t.Fatalf("%d segments, want %d: %+v", len(segs), len(want), segs)
	}
	for i, w := range want {
		s := segs[i]
		if s.label != labelOf(w.kind) || s.colour != colourOf(w.kind) || s.vals[0] != w.vals[0] || s.vals[1] != w.vals[1] {
			t.Errorf("segment %d = %s %v %v, want %s %v %v", i, s.label, s.colour, s.vals, labelOf(w.kind), colourOf(w.kind), w.vals)
		}
	}
	// One path alone: its kinds keep their colours.
	for _, s := range kindSegments([]PathResult{nic}) {
		if s.label == labelOf(datapath.KindSoC) && s.colour != colourOf(datapath.KindSoC) {
			t.Errorf("soc changed colour when shown alone")
		}
	}

	old := tcp
	old.StageKinds = nil
	if kindSegments([]PathResult{old, nic}) != nil {
		t.Errorf("a path without kinds must fall back to stage names")
	}
	alien := nic
	alien.StageKinds = map[string]string{"buffer": "nic", "network": "network", "soc-decide": "warp-drive", "soc-notify": "soc", "gpu": "compute", "reply": "reply"}
	if kindSegments([]PathResult{alien}) != nil {
		t.Errorf("an unknown kind must fall back to stage names")
	}
	f, err := stageBreakdown([]PathResult{old}, []string{"network", "decide", "gpu", "reply-tx", "reply"})
	if err != nil || f == nil {
		t.Fatalf("fallback figure: %v", err)
	}
	if got := f.legend.names; len(got) != 5 || got[0] != "reply" || got[4] != "network" {
		t.Errorf("fallback legend %v, want the five stages top of the stack first", got)
	}
}

// A figure is saved in three formats; the PDF is a PDF with its fonts
// embedded and no wall-clock date in it (outputs are byte-identical run to
// run, which TestRenderIdempotentAndByteStable checks across renders).
func TestFigureFormats(t *testing.T) {
	f, err := stageBreakdown([]PathResult{{Name: "tcp", StagesUS: map[string]Num{"network": 10, "gpu": 90}, StageKinds: map[string]string{"network": "network", "gpu": "compute"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	base, err := f.save(atomicfs.OS, dir)
	if err != nil {
		t.Fatal(err)
	}
	if base != "stage_breakdown.png" {
		t.Errorf("base %q", base)
	}
	for ext, magic := range map[string]string{".png": "\x89PNG", ".svg": "<?xml", ".pdf": "%PDF-"} {
		b, err := os.ReadFile(filepath.Join(dir, "stage_breakdown"+ext))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte(magic)) {
			t.Errorf("%s starts %q, want %q", ext, b[:min(len(b), 8)], magic)
		}
		if ext == ".pdf" {
			if !bytes.Contains(b, []byte("/FontFile2")) {
				t.Errorf("pdf embeds no TrueType font")
			}
			if !bytes.Contains(b, []byte("/CreationDate (D:19700101000000)")) {
				t.Errorf("pdf creation date is not pinned to the epoch")
			}
		}
	}
}

// A run's report lists the three parameters its headline moves most with,
// from the sensitivity.csv the run wrote, largest swing first; a run
// without one shows its note; a damaged table is an error naming the row.
func TestReportRestsOn(t *testing.T) {
	dir := copyDir(t, filepath.Join("testdata", "run-datapath"))
	rows := []SensitivityRow{
		{Param: "datapath.host.pageable_factor", Grade: "derived", Range: "catalog host.pageable_factor", LowValue: "19%", Low: 35.6, HighValue: "50%", High: 9.2},
		{Param: "datapath.smartnic.dma_bandwidth", Grade: "estimate", Range: "catalog x", LowValue: "15.1GB/s", Low: 4.2, HighValue: "25.6GB/s", High: 16.6},
		{Param: "datapath.request.batch", Grade: "choice", Range: "x0.5..x2", LowValue: "4", Low: 10.8, HighValue: "16", High: 14.2},
		{Param: "datapath.host.post_send", Grade: "estimate", Range: "catalog y", LowValue: "100ns", Low: 15.2, HighValue: "1us", High: 14},
	}
	if err := os.WriteFile(filepath.Join(dir, SensitivityFile), SensitivityCSV("gain_pct", 14.1, rows), 0o644); err != nil {
		t.Fatal(err)
	}
	back, metric, base, err := ReadSensitivity(filepath.Join(dir, SensitivityFile))
	if err != nil || metric != "gain_pct" || base != 14.1 || len(back) != 4 || back[1] != rows[1] {
		t.Fatalf("read back %v %q %v: %+v", err, metric, base, back)
	}
	if err := Render(dir); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	s := string(md)
	i, j, k := strings.Index(s, "`datapath.host.pageable_factor` | derived"), strings.Index(s, "`datapath.smartnic.dma_bandwidth`"), strings.Index(s, "`datapath.request.batch`")
	if i < 0 || j < i || k < j || strings.Contains(s, "`datapath.host.post_send`") || !strings.Contains(s, "14.1% as run") || !strings.Contains(s, "| 26.4 |") {
		t.Errorf("report.md does not list the top three in order:\n%s", s)
	}

	note := copyDir(t, filepath.Join("testdata", "run-cluster"))
	if err := os.WriteFile(filepath.Join(note, SensitivityNoteFile), []byte("not computed with the run: because\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Render(note); err != nil {
		t.Fatal(err)
	}
	if md, _ := os.ReadFile(filepath.Join(note, ReportFile)); !strings.Contains(string(md), "Sensitivity not computed with the run: because") {
		t.Errorf("the note is not in the report")
	}

	if err := os.WriteFile(filepath.Join(dir, SensitivityFile), []byte("param,grade,range,low_value,gain_pct_low,high_value,gain_pct_high,swing,gain_pct_base\na,b,c,d,NaNx,f,1,2,3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Render(dir); err == nil || !strings.Contains(err.Error(), "row 2, column gain_pct_low") {
		t.Errorf("a damaged table: %v", err)
	}
}
