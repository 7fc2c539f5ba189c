package gpu

import (
	"fmt"
	"sort"
	"strings"
)

// TraceTypeMap maps GPU type codes found in cluster traces (upper case,
// e.g. "V100M32") to catalog names ("v100m32"). Scenarios may replace any
// entry, in particular the undisclosed Alibaba codes G1-G3.
type TraceTypeMap map[string]string

// DefaultTraceTypeMap returns a fresh copy of the default mapping.
//
// Alibaba openb (cluster-trace-gpu-v2023) codes: G1, G2, G3, T4, P100,
// V100M16, V100M32, A10. G1-G3 are undisclosed internal codes. The choice
// below is an estimate (E): the disclosed codes are all pre-Ampere or
// small inference parts, so the undisclosed ones are most likely the
// data-centre Ampere parts Alibaba Cloud offered when the trace was taken
// (gn7 family, A100). G2 nodes (549 of them, 8 GPUs, 96 vCPU, 384 GiB) are
// taken as A100-40GB; G3 nodes (39, 8 GPUs, 128 vCPU, 768 GiB, the larger
// host of a later generation) as A100-80GB; G1 (no node in the node list)
// as A100-40GB. This gives the simulator MIG-capable GPUs to schedule on;
// a study sensitive to it should sweep the mapping.
//
// Alibaba PAI v2020 codes: P100, T4, V100 (16 GB), V100M32, MISC. MISC is
// "older GPUs (K40m, K80, M60)" (trace README) and maps to k80, the one
// Kepler-class spec in the catalog (E: M60 is Maxwell and somewhat faster).
func DefaultTraceTypeMap() TraceTypeMap {
	return TraceTypeMap{
		"G1":      "a100-40gb", // E, see above
		"G2":      "a100-40gb", // E
		"G3":      "a100-80gb", // E
		"T4":      "t4",
		"P100":    "p100",
		"V100":    "v100",
		"V100M16": "v100",
		"V100M32": "v100m32",
		"A10":     "a10",
		"MISC":    "k80", // E: K40m/K80/M60 class
	}
}

// Codes returns the map's trace codes, sorted.
func (m TraceTypeMap) Codes() []string {
	out := make([]string, 0, len(m))
	for c := range m {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Validate checks that every code maps to a catalog GPU; the error names
// each bad entry.
func (m TraceTypeMap) Validate() error {
	var bad []string
	for _, c := range m.Codes() {
		if _, err := Lookup(m[c]); err != nil {
			bad = append(bad, fmt.Sprintf("%s=%s: %v", c, m[c], err))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("trace type map: %s", strings.Join(bad, "; "))
	}
	return nil
}

// ResolveTraceType returns the catalog name for a trace's GPU type code
// (matched case-insensitively, surrounding space ignored); a nil m means
// DefaultTraceTypeMap. An empty code (a CPU-only node) or an unknown one
// is an error that lists the known codes.
func ResolveTraceType(code string, m TraceTypeMap) (string, error) {
	if m == nil {
		m = DefaultTraceTypeMap()
	}
	key := strings.ToUpper(strings.TrimSpace(code))
	if key == "" {
		return "", fmt.Errorf("empty gpu type code (a CPU-only node?); known codes: %s", strings.Join(m.Codes(), ", "))
	}
	name, ok := m[key]
	if !ok {
		// Accept catalog names given directly ("a100-40gb").
		if s, err := Lookup(code); err == nil {
			return s.Name, nil
		}
		return "", fmt.Errorf("unknown gpu type code %q; known codes: %s (add it to the trace type map)", code, strings.Join(m.Codes(), ", "))
	}
	s, err := Lookup(name)
	if err != nil {
		return "", fmt.Errorf("gpu type code %q maps to %q: %w", code, name, err)
	}
	return s.Name, nil
}

// ParseTraceTypeMap reads "CODE=gpu" pairs separated by commas or spaces
// ("G2=a100-80gb, MISC=p100") over the defaults: listed codes replace or
// add entries, the others keep their default. Codes are upper-cased and
// every target must be a catalog GPU.
func ParseTraceTypeMap(text string) (TraceTypeMap, error) {
	m := DefaultTraceTypeMap()
	fields := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
	for i, f := range fields {
		code, name, ok := strings.Cut(f, "=")
		code = strings.ToUpper(code)
		if !ok || code == "" || name == "" {
			return nil, fmt.Errorf("trace type map %q, entry %d (%q): want CODE=gpu, e.g. G2=a100-80gb", text, i+1, f)
		}
		s, err := Lookup(name)
		if err != nil {
			return nil, fmt.Errorf("trace type map %q, entry %d (%q): %w", text, i+1, f, err)
		}
		m[code] = s.Name
	}
	return m, nil
}
