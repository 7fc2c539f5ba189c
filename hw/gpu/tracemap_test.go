package gpu

import (
	"encoding/csv"
	"os"
	"strings"
	"testing"
)

func TestResolveTraceType(t *testing.T) {
	tests := []struct{ code, want string }{
		{"G1", "a100-40gb"}, {"G2", "a100-40gb"}, {"G3", "a100-80gb"},
		{"T4", "t4"}, {"P100", "p100"}, {"V100M16", "v100"}, {"V100M32", "v100m32"},
		{"A10", "a10"}, {"V100", "v100"}, {"MISC", "k80"},
		{" v100m32 ", "v100m32"},   // case and space
		{"h100-80gb", "h100-80gb"}, // a catalog name passes through
	}
	for _, tc := range tests {
		got, err := ResolveTraceType(tc.code, nil)
		if err != nil || got != tc.want {
			t.Errorf("ResolveTraceType(%q) = %q, %v; want %q", tc.code, got, err, tc.want)
		}
	}
	for _, c := range []struct{ code, want string }{
		{"", "empty gpu type code"},
		{"CPU", `unknown gpu type code "CPU"; known codes: A10, G1, G2, G3, MISC, P100, T4, V100, V100M16, V100M32`},
	} {
		if _, err := ResolveTraceType(c.code, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ResolveTraceType(%q) error %v, want %q", c.code, err, c.want)
		}
	}
	bad := TraceTypeMap{"G2": "a100-90gb"}
	if _, err := ResolveTraceType("G2", bad); err == nil || !strings.Contains(err.Error(), `maps to "a100-90gb"`) {
		t.Errorf("bad map: %v", err)
	}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "G2=a100-90gb") {
		t.Errorf("Validate: %v", err)
	}
	if err := DefaultTraceTypeMap().Validate(); err != nil {
		t.Error(err)
	}

	m, err := ParseTraceTypeMap("g2=A100-80GB, MISC=p100")
	if err != nil {
		t.Fatal(err)
	}
	if m["G2"] != "a100-80gb" || m["MISC"] != "p100" || m["G3"] != "a100-80gb" {
		t.Errorf("parsed map %v", m)
	}
	for _, c := range []struct{ text, want string }{
		{"G2", "entry 1 (\"G2\"): want CODE=gpu"},
		{"G2=a100-40gb =t4", "entry 2"},
		{"G2=mi300x", "unknown gpu \"mi300x\""},
	} {
		if _, err := ParseTraceTypeMap(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseTraceTypeMap(%q) error %v, want %q", c.text, err, c.want)
		}
	}
}

// TestTraceCodesResolve checks that every GPU model code in the real
// Alibaba node lists resolves (CPU-only rows excepted).
func TestTraceCodesResolve(t *testing.T) {
	files := []struct {
		rel string
		col int
	}{
		{"traces/alibaba-gpu-v2023/openb_node_list_gpu_node.csv", 4}, // sn,cpu_milli,memory_mib,gpu,model (header)
		{"traces/alibaba-gpu-v2020/pai_machine_spec.csv", 1},         // machine,gpu_type,... (no header)
	}
	for _, f := range files {
		path := sharedPath(t, f.rel)
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(fh).ReadAll()
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		codes := map[string]bool{}
		for i, r := range rows {
			code := r[f.col]
			if code == "model" || code == "CPU" || code == "" {
				continue
			}
			if !codes[code] {
				if _, err := ResolveTraceType(code, nil); err != nil {
					t.Errorf("%s:%d: %v", path, i+1, err)
				}
			}
			codes[code] = true
		}
		if len(codes) < 5 {
			t.Errorf("%s: only %d gpu codes found (%v)", path, len(codes), codes)
		}
	}
}

func FuzzParseTraceTypeMap(f *testing.F) {
	for _, s := range []string{"", "G2=a100-80gb", "g1=t4,MISC=p100", "=", "G2=", "=t4", "a=b=c", "G2=A100-40GB\nG3=h100"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		m, err := ParseTraceTypeMap(text)
		if err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("ParseTraceTypeMap(%q) gave an invalid map: %v", text, err)
		}
	})
}
