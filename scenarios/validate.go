package scenarios

import (
	"errors"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/hw/units"
)

// Validator is implemented by config sections that check ranges and
// consistency after decoding. The loader calls Validate on every section
// of the tree (top level, nested structs, pointer sections that are
// present, list items, map values), so a Validate checks its own fields and
// rules across them, not its children. Return errors.Join of
// units.Invalid(...) values to report several keys at once; any error with
// a `ConfigField() string` method is placed at that key, other errors at
// the section.
type Validator interface {
	Validate() error
}

// PartResolver is implemented by config sections where choosing a part by
// name (a host CPU, a NIC, a SmartNIC) sets other keys: the part's cores,
// clock, bandwidths, price and power. The loader calls ResolveParts after
// decoding and before validation, on every section that implements it,
// with set reporting whether a key (relative to the section, e.g.
// "host.cores") was written by the scenario file, the environment, a
// calibration profile or --set. A key not set takes its part's value; a
// key set to another value is an override the section records. Errors are
// reported like Validate's.
type PartResolver interface {
	ResolveParts(set func(key string) bool) error
}

// resolveParts calls ResolveParts on the sections of v that implement it
// (top level and present pointer sections; parts are chosen per section).
func (d *decoder) resolveParts(v reflect.Value, path string, depth int) {
	if depth > maxDepth {
		return
	}
	if v.Kind() == reflect.Pointer {
		if !v.IsNil() {
			d.resolveParts(v.Elem(), path, depth+1)
		}
		return
	}
	if v.Kind() != reflect.Struct || reflect.PointerTo(v.Type()).Implements(textUnmarshalerType) {
		return
	}
	if v.CanAddr() {
		if r, ok := v.Addr().Interface().(PartResolver); ok {
			d.report(path, r.ResolveParts(func(key string) bool {
				l, ok := d.lines[joinDotted(path, key)]
				return ok && !strings.HasPrefix(l.file, "default of ")
			}))
			return
		}
	}
	for _, f := range fieldsOf(v.Type()) {
		d.resolveParts(v.FieldByIndex(f.index), joinPath(path, f.key), depth+1)
	}
}

// messager is a fielder that can also give its message without the key
// path (which the loader prints itself).
type messager interface {
	ConfigMessage() string
}

// fielder is an error that names the key it is about, relative to the
// section that returned it.
type fielder interface {
	ConfigField() string
}

func (d *decoder) validate(v reflect.Value, path string, depth int) {
	if depth > maxDepth {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			d.validate(v.Elem(), path, depth+1)
		}
		return
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			d.validate(v.Index(i), path+"["+strconv.Itoa(i)+"]", depth+1)
		}
		return
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
		for _, k := range keys {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			d.validate(e, joinPath(path, k.String()), depth+1)
		}
		return
	case reflect.Struct:
	default:
		return
	}
	if reflect.PointerTo(v.Type()).Implements(textUnmarshalerType) {
		return // a quantity checked its own range when it parsed
	}
	for _, f := range fieldsOf(v.Type()) {
		d.validate(v.FieldByIndex(f.index), joinPath(path, f.key), depth+1)
	}
	var val Validator
	if v.CanAddr() {
		val, _ = v.Addr().Interface().(Validator)
	}
	if val == nil {
		val, _ = v.Interface().(Validator)
	}
	if val == nil {
		return
	}
	d.report(path, val.Validate())
}

// report adds every error of err (an errors.Join tree) as a problem of the
// section at path, at the key an error names (fielder) or else at the
// section.
func (d *decoder) report(path string, err error) {
	for _, err := range flatten(err) {
		p, msg := path, err.Error()
		var fe fielder
		if errors.As(err, &fe) {
			p = joinDotted(path, fe.ConfigField())
			var ue *units.FieldError
			var mf messager
			if errors.As(err, &ue) {
				msg = ue.Msg
			} else if errors.As(err, &mf) {
				msg = mf.ConfigMessage()
			}
		}
		at := d.locate(p)
		d.probs.add(at.file, at.line, p, "%s", msg)
	}
}

// locate finds where the key at path, or else its nearest written
// ancestor, came from; a key set by nothing but a default is blamed on the
// file as a whole.
func (d *decoder) locate(path string) loc {
	for p := path; p != ""; {
		if l, ok := d.lines[p]; ok {
			return l
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return loc{file: d.file}
}

// joinDotted appends a relative key path that may itself hold dots.
func joinDotted(path, rel string) string {
	if rel == "" {
		return path
	}
	if path == "" {
		return rel
	}
	if strings.HasPrefix(rel, "[") {
		return path + rel
	}
	return path + "." + rel
}

// flatten unpacks errors.Join trees into their leaves.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}
