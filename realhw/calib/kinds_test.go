package calib

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/conspirator-sim/conspirator/realhw"
	"github.com/conspirator-sim/conspirator/realhw/host"
	"github.com/conspirator-sim/conspirator/realhw/nvbandwidth"
	"github.com/conspirator-sim/conspirator/realhw/perftest"
	"github.com/conspirator-sim/conspirator/sim/datapath"
)

// Every stage name the tools write has a data-path stage kind: the host
// backend's path and memcpy samples, and the perftest and nvbandwidth
// importers over every committed fixture. A tool that starts writing a
// new name fails here until measuredKinds says what it measures.
func TestMeasuredKindsCoverTools(t *testing.T) {
	var ss []realhw.Sample
	ss = append(ss, syntheticRun(0, 0, 0, 3, 1).Samples()...)
	ss = append(ss, realhw.Sample{Stage: host.StageMemcpy}, realhw.Sample{Stage: host.StageCPUSpin})
	files, _ := filepath.Glob(filepath.Join("..", "perftest", "testdata", "*.txt"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r, err := perftest.Parse(bytes.NewReader(b), f)
		if err != nil {
			continue // the truncated fixtures are refused on purpose
		}
		ss = append(ss, r.Samples()...)
	}
	b, err := os.ReadFile(filepath.Join("..", "nvbandwidth", "testdata", "h100.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ts, err := nvbandwidth.Parse(bytes.NewReader(b), "h100.txt")
	if err != nil {
		t.Fatal(err)
	}
	nv, err := nvbandwidth.Samples(ts, 512<<20)
	if err != nil {
		t.Fatal(err)
	}
	ss = append(ss, nv...)
	seen := map[string]bool{}
	for _, s := range ss {
		if seen[s.Stage] {
			continue
		}
		seen[s.Stage] = true
		k, ok := MeasuredKind(s.Stage)
		if !ok {
			t.Errorf("stage %q written by a tool has no kind", s.Stage)
			continue
		}
		if k != "" && !slices.ContainsFunc(datapath.StageKinds, func(e struct {
			Kind  datapath.StageKind
			Label string
		}) bool {
			return e.Kind == k
		}) {
			t.Errorf("stage %q maps to %q, not a data-path stage kind", s.Stage, k)
		}
	}
	if len(seen) < 12 {
		t.Errorf("only %d stage names seen (%v): a fixture went missing", len(seen), seen)
	}
	// Hand-checked examples, and an unknown name.
	for name, want := range map[string]datapath.StageKind{
		"tcp-network": datapath.KindNetwork, "cuda-h2d-pageable": datapath.KindHostCopy,
		"cuda-h2d-pinned": datapath.KindDMA, "nvbandwidth/host_to_device_memcpy_ce": datapath.KindDMA, "tcp-e2e": "",
	} {
		if k, ok := MeasuredKind(name); !ok || k != want {
			t.Errorf("%s: kind %q (%v), want %q", name, k, ok, want)
		}
	}
	if _, ok := MeasuredKind("tcp-netwrok"); ok {
		t.Error("a misspelt stage name was taken as known")
	}
}
