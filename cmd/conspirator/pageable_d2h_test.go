package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// datapath.host.pageable_d2h_factor through the scenario loader: unset it
// takes the scenario's pageable_factor (not the catalog's 40%), set it is
// its own, out of (0%, 100%] it is exit 2 naming the key and the fix, with
// nothing written; `explain` says where its default comes from.
func TestPageableD2HFactorKey(t *testing.T) {
	dir := t.TempDir()
	host := func(args ...string) map[string]any {
		t.Helper()
		out := filepath.Join(dir, strings.NewReplacer("=", "", "%", "", ".", "", "/", "", "-", "").Replace(strings.Join(args, "_")))
		code, _, stderr := cli(t, nil, append([]string{"run", "paper/e2e", "--set", "datapath.clients.requests=20", "--set", "datapath.warmup_requests=0", "--set", "datapath.paths=[host-rdma]",
			"--no-report", "--no-sensitivity", "-o", out}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		b, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Inputs struct {
				Datapath struct {
					Host map[string]any `json:"host"`
				} `json:"datapath"`
			} `json:"inputs"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		return s.Inputs.Datapath.Host
	}
	if h := host("--set", "datapath.host.pageable_factor=25%"); h["pageable_d2h_factor"] != "25%" {
		t.Errorf("unset, with pageable_factor 25%%: pageable_d2h_factor %v", h["pageable_d2h_factor"])
	}
	if h := host("--set", "datapath.host.pageable_d2h_factor=20%"); h["pageable_d2h_factor"] != "20%" || h["pageable_factor"] != "40%" {
		t.Errorf("set to 20%%: pageable_d2h_factor %v, pageable_factor %v", h["pageable_d2h_factor"], h["pageable_factor"])
	}
	out := filepath.Join(dir, "bad")
	code, _, stderr := cli(t, nil, "run", "paper/e2e", "--set", "datapath.host.pageable_d2h_factor=150%", "-o", out)
	if code != exitUsage || !strings.Contains(stderr, "datapath.host.pageable_d2h_factor") || !strings.Contains(stderr, "150%") || !strings.Contains(stderr, "unset to take host.pageable_factor") {
		t.Errorf("150%%: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s written", out)
	}
	code, stdout, stderr := cli(t, nil, "explain", "pageable_d2h_factor")
	if code != 0 || !strings.Contains(stdout, "default:  the value of datapath.host.pageable_factor") {
		t.Errorf("explain: exit %d: %s%s", code, stdout, stderr)
	}
}
