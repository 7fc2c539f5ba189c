package trace

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// Source names the public trace a file belongs to, from its name or its
// format (aliases included), and how to write one otherwise.
func TestSource(t *testing.T) {
	for _, c := range []struct{ path, format, want string }{
		{"../shared/traces/alibaba-gpu-v2023/openb_pod_list_default.csv", "", "cluster-trace-gpu-v2023/csv"},
		{"openb_node_list_gpu_node.csv", "", "cluster-trace-gpu-v2023/csv"},
		{"mine.csv", "openb", "cluster-trace-gpu-v2023/csv"},
		{"x/pai_task_table.csv", "", "cluster-trace-gpu-v2020"},
		{"machines.csv", "pai-machines", "cluster-trace-gpu-v2020"},
		{"disaggregated_DLRM_trace.csv", "", "cluster-trace-gpu-v2025"},
		{"log.json", "philly", "msr-fiddle/philly-traces"},
		{"cluster_log.csv", "", "HeliosData"},
		{"jobs.csv", "", "generic format (workloads/trace/FORMATS.md)"},
		{"jobs.csv", "generic", "generic format (workloads/trace/FORMATS.md)"},
	} {
		if got := Source(c.path, c.format); !strings.Contains(got, c.want) {
			t.Errorf("Source(%q, %q) = %q, want it to hold %q", c.path, c.format, got, c.want)
		}
	}
}

// NotFound is nil for an error that is not a missing file, names the
// file that is missing (a PAI trace's task table when another table was
// given) and says where a relative path led.
func TestNotFound(t *testing.T) {
	if err := NotFound("trace", "a.csv", "", errors.New("permission denied"), "fix"); err != nil {
		t.Errorf("a non-missing error became %v", err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	_, err := ImportFile(filepath.Join("pai", "pai_job_table.csv"), Options{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("PAI without its task table: %v, want a missing file", err)
	}
	got := NotFound("trace", filepath.Join("pai", "pai_job_table.csv"), "", err, "give the path").Error()
	want := "trace: file " + filepath.Join("pai", "pai_task_table.csv") + " not found (resolved to " + filepath.Join(dir, "pai", "pai_task_table.csv") + " from the working directory " + dir + "); " +
		Source("pai_task_table.csv", "") + "; download the file there, or give the path"
	if got != want {
		t.Errorf("NotFound:\n got %s\nwant %s", got, want)
	}
	if got := Resolved("/abs/x.csv"); got != "" {
		t.Errorf("Resolved of an absolute path = %q, want nothing", got)
	}
}
