package datapath

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/hw"
	"github.com/conspirator-sim/conspirator/hw/units"
)

// sourcedField is one Config field with its source tag and its value in
// Defaults.
type sourcedField struct {
	path, tag  string
	hasDefault bool
	value      reflect.Value
}

func sourcedFields() []sourcedField {
	var out []sourcedField
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		ty := v.Type()
		for i := 0; i < ty.NumField(); i++ {
			f := ty.Field(i)
			p := path + strings.Split(f.Tag.Get("yaml"), ",")[0]
			if f.Type.Kind() == reflect.Struct && !isQuantityType(f.Type) {
				walk(v.Field(i), p+".")
				continue
			}
			def, hasDefault := f.Tag.Lookup("default")
			tag := f.Tag.Get("source")
			if strings.HasPrefix(def, CatalogSource) && tag == "" {
				tag = def // a catalog default is sourced by its catalog entry
			}
			out = append(out, sourcedField{path: p, tag: tag, hasDefault: hasDefault, value: v.Field(i)})
		}
	}
	walk(reflect.ValueOf(Defaults()), "")
	return out
}

func isQuantityType(t reflect.Type) bool { return units.BaseUnit(reflect.Zero(t).Interface()) != "" }

// unsourced are the keys with a default but no source: switches and
// overrides whose default selects behaviour rather than stating a number
// about hardware or workload.
var unsourced = map[string]bool{
	"paths":                true, // all four pipelines: the paper compares all
	"record_requests":      true, // output switch
	"request.compute_time": true, // 0s means "take it from the tables", which carry their own sources
}

// Every default carries a source, and every source is either a key of
// hw.Provenance or a literal citation starting with its grade. A catalog
// key renamed in hw therefore fails here, not silently in the generated
// docs/scenario-keys.md.
func TestSourceTags(t *testing.T) {
	grades := map[string]bool{ChoiceGrade: true}
	for _, g := range []hw.Grade{hw.Vendor, hw.Measured, hw.Anecdotal, hw.Secondary, hw.Paper, hw.Derived, hw.Estimate} {
		grades[string(g)] = true
	}
	for _, f := range sourcedFields() {
		switch {
		case f.tag == "":
			if f.hasDefault && !unsourced[f.path] {
				t.Errorf("%s: has a default but no source tag; name its hw.Provenance key (source:\"hw:...\") or cite it (source:\"estimate: ...\")", f.path)
			}
		case strings.HasPrefix(f.tag, CatalogSource):
			if _, err := SourceText(f.tag); err != nil {
				t.Errorf("%s: %v", f.path, err)
			}
		default:
			grade, cite, ok := strings.Cut(f.tag, ": ")
			if !ok || !grades[grade] || strings.TrimSpace(cite) == "" {
				t.Errorf("%s: source %q should be \"<grade>: <citation>\" with a grade of hw (vendor, measured, ..., estimate) or %q", f.path, f.tag, ChoiceGrade)
			}
		}
	}
}

// A default that names a catalog key is a copy of the catalog value: the
// same number once both are in SI units. Each pair below is the field's
// base unit (units.BaseUnit, "" for a plain number) and the catalog's unit,
// with the factor that turns the field's value into the catalog's (ns ->
// s: 1e-9; B/s -> bit/s: 8). An unlisted pair fails, so a unit mismatch
// cannot pass by accident.
func TestCatalogSourcesMatchDefaults(t *testing.T) {
	toCatalog := map[[2]string]float64{
		{"ns", "s"}:                      1e-9,
		{"B/s", "bit/s"}:                 8,
		{"B/s", "B/s"}:                   1,
		{"B", "B"}:                       1,
		{"Hz", "Hz"}:                     1,
		{"W", "W"}:                       1,
		{"USD", "USD"}:                   1,
		{"ratio (write %)", "1"}:         1,
		{"fraction of 1 (write %)", "1"}: 1,
		{"", "1"}:                        1, // counts (cores) and factors
		{"", "cycle/B"}:                  1,
	}
	n := 0
	for _, f := range sourcedFields() {
		key, ok := strings.CutPrefix(f.tag, CatalogSource)
		if !ok {
			continue
		}
		p, ok := catalogParam(key)
		if !ok {
			continue // reported by TestSourceTags
		}
		n++
		var v float64
		switch f.value.Kind() {
		case reflect.Int, reflect.Int64:
			v = float64(f.value.Int())
		case reflect.Float64:
			v = f.value.Float()
		default:
			t.Errorf("%s: %s value cannot be compared with a catalog number", f.path, f.value.Type())
			continue
		}
		fieldUnit := units.BaseUnit(f.value.Interface())
		factor, ok := toCatalog[[2]string{fieldUnit, p.Unit}]
		if !ok {
			t.Errorf("%s: field unit %q does not convert to catalog unit %q of %s", f.path, fieldUnit, p.Unit, key)
			continue
		}
		if got := v * factor; math.Abs(got-p.Value) > 1e-9*math.Abs(p.Value) {
			t.Errorf("%s: default %v %s is %g %s, catalog %s is %g %s", f.path, v, fieldUnit, got, p.Unit, key, p.Value, p.Unit)
		}
	}
	// 32 hw: tags in config.go, counted by hand: host 21 (cores, clock,
	// sched_slice, wakeup_miss, wakeup_miss_floor, idle_wake, interference, memcpy_bandwidth,
	// pinned_h2d, pageable_factor, memcpy_issue, kernel_launch, sync_wait,
	// poll_completion, post_send, four tcp_*, price, power), network 4,
	// smartnic 7. Another count means the walk missed fields or a tag was
	// added or dropped without this test.
	if n != 32 {
		t.Errorf("compared %d catalog defaults, want the 32 tagged in Config", n)
	}
}

func TestSourceText(t *testing.T) {
	cases := []struct {
		tag, want string
		wantErr   bool
	}{
		// Grade, citation and key of the catalog entry, as hw.Provenance
		// records host.kernel_launch (hw/catalog.go).
		{"hw:host.kernel_launch", "measured: reframe kernel_latency.py, A100 async launch (hw host.kernel_launch)", false},
		{"estimate: reasoning only", "estimate: reasoning only", false},
		{"hw:host.no_such_key", "", true},
		{"hw:", "", true},
	}
	for _, c := range cases {
		got, err := SourceText(c.tag)
		if (err != nil) != c.wantErr || got != c.want {
			t.Errorf("SourceText(%q) = %q, %v; want %q, error %v", c.tag, got, err, c.want, c.wantErr)
		}
	}
}

// A catalog default tag turns into the catalog value in the field's
// scenario syntax (hw/catalog.go: host.memcpy_issue 10e-6 s, host.interference
// 0.10, host.tcp_rx_cycles_per_byte 0.6); an unknown key or a unit the field
// cannot hold is an error, and any other tag is returned as written.
func TestDefaultText(t *testing.T) {
	cases := []struct {
		tag  string
		typ  reflect.Type
		want string
		err  string
	}{
		{"hw:host.memcpy_issue", reflect.TypeOf(units.Duration(0)), "10us", ""},
		{"hw:host.interference", reflect.TypeOf(units.Ratio(0)), "10%", ""},
		{"hw:host.tcp_rx_cycles_per_byte", reflect.TypeOf(0.0), "0.6", ""},
		{"4", reflect.TypeOf(0), "4", ""},
		{"hw:host.no_such_key", reflect.TypeOf(0.0), "", `no key "host.no_such_key"`},
		{"hw:host.interference", reflect.TypeOf(units.Duration(0)), "", `catalog value in "1" cannot fill`},
	}
	for _, c := range cases {
		got, err := DefaultText(c.tag, c.typ)
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("DefaultText(%q, %s) = %q, %v; want %q, error containing %q", c.tag, c.typ, got, err, c.want, c.err)
		}
	}
}
