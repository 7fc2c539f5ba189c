package datapath

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/hw"
	"github.com/conspirator-sim/conspirator/hw/units"
)

// CatalogSource prefixes a source tag that names a key of hw.Provenance:
// `source:"hw:host.memcpy_issue"`. Any other source tag is a literal
// citation that starts with its grade, `source:"estimate: ..."`.
const CatalogSource = "hw:"

// ChoiceGrade is the grade of a default that is a modelling or workload
// choice (how many clients, which batch) rather than a property of
// hardware: no measurement could confirm or refute it, only the scenario's
// purpose.
const ChoiceGrade = "choice"

// SourceText turns the source tag of a Config field into the text the key
// reference shows: for a catalog key, its grade and citation from
// hw.Provenance followed by the key, so a reader can find the number in
// hw's catalog; a literal citation unchanged. An unknown catalog key is an
// error, so that a renamed catalog key fails the schema test instead of
// leaving a dangling reference in the documentation.
func SourceText(tag string) (string, error) {
	p, ok, err := catalogTag("source", tag)
	if err != nil {
		return "", err
	}
	if !ok {
		return tag, nil
	}
	return fmt.Sprintf("%s: %s (hw %s)", p.Grade, p.Source, p.Key), nil
}

// catalogTag returns the catalog entry a tag of the given kind ("source",
// "default") names with the hw: prefix; ok is false for any other tag, and
// an unknown key is an error.
func catalogTag(kind, tag string) (p hw.Param, ok bool, err error) {
	key, ok := strings.CutPrefix(tag, CatalogSource)
	if !ok {
		return hw.Param{}, false, nil
	}
	if p, ok = catalogParam(key); !ok {
		return hw.Param{}, true, fmt.Errorf("%s tag %q: no key %q in hw.Provenance", kind, tag, key)
	}
	return p, true, nil
}

func catalogParam(key string) (hw.Param, bool) {
	for _, p := range hw.Provenance() {
		if p.Key == key {
			return p, true
		}
	}
	return hw.Param{}, false
}

// DefaultText turns a default tag that names a catalog key,
// `default:"hw:host.memcpy_issue"`, into the scenario text of the
// catalog's value for a field of type t ("10us"), so that the number is
// written once, in hw's catalog, and its source tag is the same key. Any
// other tag is returned unchanged.
func DefaultText(tag string, t reflect.Type) (string, error) {
	p, ok, err := catalogTag("default", tag)
	if err != nil {
		return "", err
	}
	if !ok {
		return tag, nil
	}
	switch t {
	case reflect.TypeOf(units.Duration(0)):
		if p.Unit != "s" {
			break
		}
		return units.Duration(engine.Time(p.Value*1e9 + 0.5)).String(), nil
	case reflect.TypeOf(units.Bandwidth(0)):
		if p.Unit != "B/s" {
			break
		}
		return units.Bandwidth(p.Value).String(), nil
	case reflect.TypeOf(units.Ratio(0)):
		return units.Ratio(p.Value).String(), nil
	case reflect.TypeOf(units.Fraction(0)):
		return units.Fraction(p.Value).String(), nil
	case reflect.TypeOf(float64(0)):
		return strconv.FormatFloat(p.Value, 'g', -1, 64), nil
	}
	return "", fmt.Errorf("default tag %q: catalog value in %q cannot fill a %s field", tag, p.Unit, t)
}
