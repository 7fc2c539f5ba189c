package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// SpecFile is the name of the spec inside a sweep directory.
const SpecFile = "sweep.json"

// specFormat 2 adds each point's inputs digest and the base inputs;
// a format-1 directory (written before) is refused with a message.
const specFormat = "conspirator-sweep/2"

// Spec is what sweep.json records: enough to tell whether a directory holds
// this sweep, and to find every point's parameters without the scenario.
type Spec struct {
	Format string `json:"format"`
	// Meta is free-form identity given by the caller (scenario name, a hash
	// of the base config); two sweeps with different Meta are different.
	Meta map[string]string `json:"meta,omitempty"`
	// Inputs are the resolved inputs common to every point (the scenario
	// before its swept keys and seed are applied, flattened to key path
	// -> value), given by the caller: on a resume that meets other
	// inputs, the keys that differ are named from here.
	Inputs map[string]string `json:"inputs,omitempty"`
	// Params and Seeds are derived from Points (values in first-seen order),
	// for readers and for messages that say which parameter differs.
	Params []Param  `json:"params"`
	Seeds  []uint64 `json:"seeds"`
	Points []Point  `json:"points"`
}

// newSpec builds the spec of a point list, sorted by Index so the file does
// not depend on the order the caller listed the points in.
func newSpec(points []Point, meta, inputs map[string]string) Spec {
	ps := append([]Point(nil), points...)
	sort.Slice(ps, func(i, j int) bool { return ps[i].Index < ps[j].Index })
	s := Spec{Format: specFormat, Meta: meta, Inputs: inputs, Points: ps, Params: []Param{}, Seeds: []uint64{}}
	if len(meta) == 0 {
		s.Meta = nil
	}
	if len(inputs) == 0 {
		s.Inputs = nil
	}
	keyAt := map[string]int{}
	seenVal := map[string]map[string]bool{}
	seenSeed := map[uint64]bool{}
	for _, p := range ps {
		for _, kv := range p.Params {
			i, ok := keyAt[kv.Key]
			if !ok {
				i = len(s.Params)
				keyAt[kv.Key] = i
				s.Params = append(s.Params, Param{Key: kv.Key})
				seenVal[kv.Key] = map[string]bool{}
			}
			if !seenVal[kv.Key][kv.Value] {
				seenVal[kv.Key][kv.Value] = true
				s.Params[i].Values = append(s.Params[i].Values, kv.Value)
			}
		}
		if !seenSeed[p.Seed] {
			seenSeed[p.Seed] = true
			s.Seeds = append(s.Seeds, p.Seed)
		}
	}
	return s
}

// encode is the canonical bytes of the spec: indented, trailing newline.
func (s Spec) encode() []byte {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		panic(fmt.Sprintf("sweep: marshal spec: %v", err)) // only strings and integers: cannot fail
	}
	return append(b, '\n')
}

// ReadSpec reads DIR/sweep.json.
func ReadSpec(dir string) (Spec, error) {
	p := filepath.Join(dir, SpecFile)
	data, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Spec{}, fmt.Errorf("%s is not a sweep directory: %s is missing", dir, p)
		}
		return Spec{}, fmt.Errorf("read sweep spec: %w", err)
	}
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("%s: %w", p, err)
	}
	if s.Format != specFormat {
		return Spec{}, fmt.Errorf("%s: format %q, want %q (a sweep written by another version of conspirator: run it again into a new directory)", p, s.Format, specFormat)
	}
	if err := checkPoints(s.Points); err != nil {
		return Spec{}, fmt.Errorf("%s: %w", p, err)
	}
	return s, nil
}

// diff says how stored differs from now, in terms a user can act on: which
// meta key, which parameter, which seeds, or which point. Empty when equal.
func (stored Spec) diff(now Spec) string {
	for _, k := range unionKeys(stored.Meta, now.Meta) {
		if stored.Meta[k] != now.Meta[k] {
			return fmt.Sprintf("%s differs: stored %q, now %q", k, stored.Meta[k], now.Meta[k])
		}
	}
	sk, nk := paramKeys(stored.Params), paramKeys(now.Params)
	if strings.Join(sk, "\x00") != strings.Join(nk, "\x00") {
		return fmt.Sprintf("swept parameters differ: stored [%s], now [%s]", strings.Join(sk, ", "), strings.Join(nk, ", "))
	}
	for i := range stored.Params {
		sv, nv := stored.Params[i].Values, now.Params[i].Values
		if strings.Join(sv, "\x00") != strings.Join(nv, "\x00") {
			return fmt.Sprintf("parameter %q differs: stored values [%s], now [%s]", stored.Params[i].Key, strings.Join(sv, ", "), strings.Join(nv, ", "))
		}
	}
	if fmt.Sprint(stored.Seeds) != fmt.Sprint(now.Seeds) {
		return fmt.Sprintf("seeds differ: stored %v, now %v", stored.Seeds, now.Seeds)
	}
	if len(stored.Points) != len(now.Points) {
		return fmt.Sprintf("point lists differ: stored %d points, now %d", len(stored.Points), len(now.Points))
	}
	for i := range stored.Points {
		if a, b := stored.Points[i], now.Points[i]; a.String() != b.String() || a.Index != b.Index {
			return fmt.Sprintf("point %d differs: stored %s, now %s", a.Index, a, b)
		}
	}
	if stored.Format != now.Format {
		return fmt.Sprintf("format differs: stored %q, now %q", stored.Format, now.Format)
	}
	if d := diffInputs(stored.Inputs, now.Inputs); d != "" {
		return "the resolved inputs differ (an edited scenario file, environment variable, calibration profile or data file): " + d
	}
	for i := range stored.Points {
		if a, b := stored.Points[i], now.Points[i]; a.Inputs != b.Inputs {
			return fmt.Sprintf("point %s computes something else now: its inputs digest was %s, now %s", a, short(a.Inputs), short(b.Inputs))
		}
	}
	return ""
}

// diffInputs names the keys whose values differ between two flattened
// input maps, at most five of them with their values. A data file's path
// is not compared where its digest is ("data file KEY sha256"): a file
// counts by its bytes, not by where it lies (an emitted task reads it by
// another path; sweep.json of earlier versions still holds the path).
func diffInputs(stored, now map[string]string) string {
	var keys []string
	for _, k := range unionKeys(stored, now) {
		if _, ok := now["data file "+k+" sha256"]; ok {
			continue
		}
		sv, sok := stored[k]
		nv, nok := now[k]
		if sok != nok || sv != nv {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	show := func(v string, ok bool) string {
		if !ok {
			return "(not set)"
		}
		return v
	}
	parts := make([]string, 0, 5)
	for _, k := range keys[:min(5, len(keys))] {
		sv, sok := stored[k]
		nv, nok := now[k]
		parts = append(parts, fmt.Sprintf("%s (stored %s, now %s)", k, show(sv, sok), show(nv, nok)))
	}
	out := strings.Join(parts, "; ")
	if len(keys) > 5 {
		out += fmt.Sprintf("; and %d more keys", len(keys)-5)
	}
	return out
}

func short(digest string) string {
	if digest == "" {
		return "(none)"
	}
	if len(digest) > 12 {
		return digest[:12] + "…"
	}
	return digest
}

func unionKeys(a, b map[string]string) []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range []map[string]string{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

func paramKeys(ps []Param) []string {
	keys := make([]string, len(ps))
	for i, p := range ps {
		keys[i] = p.Key
	}
	return keys
}
