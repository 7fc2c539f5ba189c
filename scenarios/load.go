package scenarios

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// EnvPrefix starts every environment variable that sets a scenario key.
// The rest of the name is the key path upper-cased, with "__" between
// levels (a single "_" stays part of a key such as background_load):
//
//	CONSPIRATOR_DATAPATH__HOST__BACKGROUND_LOAD=80%   sets datapath.host.background_load
//	CONSPIRATOR_CLUSTER__GPUS__0__COUNT=4             sets cluster.gpus[0].count
//
// A double underscore rather than "." or "_" because keys contain "_" and
// map keys such as MIG profile names contain "." ("1g.10gb"), which shells
// do not allow in variable names. Struct keys match case-insensitively; a
// segment below a map is the map key, matched case-insensitively against
// the keys the file already has, else taken in lower case. A variable with
// this prefix that names no key is an error, like a misspelt key in a file.
const EnvPrefix = "CONSPIRATOR_"

// EnvName returns the environment variable that sets key path p
// ("datapath.host.cores" -> "CONSPIRATOR_DATAPATH__HOST__CORES").
func EnvName(p string) string {
	segs, err := parsePath(p)
	if err != nil {
		return ""
	}
	names := make([]string, len(segs))
	for i, s := range segs {
		names[i] = strings.ToUpper(s.name)
	}
	return EnvPrefix + strings.Join(names, "__")
}

// Input is everything one load reads, lowest precedence first: the
// defaults in the config struct's tags, then the file, then the
// environment, then --set overrides, each later layer winning.
type Input struct {
	File string   // the name to blame in messages (a path or "builtin:name")
	Data []byte   // the scenario YAML; empty means defaults only
	Env  []string // "NAME=value" entries as os.Environ returns them; only EnvPrefix ones are read
	// Sourced are settings from a named source other than the user's
	// --set (a calibration profile), applied after Env and before
	// Overrides; a problem with one names its source, not --set.
	Sourced   []Override
	Overrides []string // "key.path=value" as given to --set; the value is YAML ("[a, b]", "80%")
	// Late are settings applied after Overrides, each naming its source
	// in messages: a sweep point's --param values, which win over --set.
	Late []Override
	// Check, if set, runs after validation on the decoded value (as far
	// as it decoded), and its problems are reported with the others, each
	// at its key's line when it names one (ConfigField): the assembly
	// checks the data files here, so that one pass reports them too.
	Check func(into any) error
}

// Override is one key=value setting and where it came from, e.g.
// {"calibration profile prof.yaml", "datapath.host.decision_time=2us"}.
type Override struct {
	Source string
	KV     string
}

// Decode fills into, a pointer to a config struct, from in. Every problem
// is collected into one *ConfigError; into is filled as far as possible
// even then, but must not be used. After decoding, Validate is called on
// every struct in the tree that has one (see Validator).
func Decode(in Input, into any) error {
	rv := reflect.ValueOf(into)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("scenarios.Decode: into must be a non-nil pointer to a struct, got %T", into)
	}
	file := in.File
	if file == "" {
		file = "<scenario>"
	}
	probs := &problems{}
	d := &decoder{file: file, probs: probs, origins: map[*yaml.Node]origin{}, lines: map[string]loc{}, root: rv.Elem().Type()}

	root := parseFile(file, in.Data, probs)
	if root == nil {
		return probs.err() // a syntax error: the rest would only add noise
	}
	l := &layerer{d: d, probs: probs}
	l.env(root, rv.Elem().Type(), in.Env)
	for _, o := range in.Sourced {
		l.setFrom(root, rv.Elem().Type(), o.Source, o.KV)
	}
	for _, o := range in.Overrides {
		l.set(root, rv.Elem().Type(), o)
	}
	for _, o := range in.Late {
		l.setFrom(root, rv.Elem().Type(), o.Source, o.KV)
	}

	rv.Elem().SetZero()
	d.defaults(rv.Elem(), "")
	d.value(root, rv.Elem(), "", 0)
	// Part resolution, validation and the caller's check run even after
	// problems of decoding, so that one pass reports every problem (a user
	// fixed six in three rounds). A key that failed to decode keeps its
	// default; a later problem at that key, inside it or around it is a
	// consequence of the first, and is left out.
	decoded := len(probs.list)
	d.resolveParts(rv.Elem(), "", 0)
	d.validate(rv.Elem(), "", 0)
	if in.Check != nil {
		d.report("", in.Check(into))
	}
	probs.dropConsequences(decoded)
	return probs.err()
}

// parseFile returns the top-level mapping of a YAML document, an empty
// mapping for an empty file, or nil after reporting a problem.
func parseFile(file string, data []byte, probs *problems) *yaml.Node {
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err.Error() == "EOF" {
			return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		}
		line, msg := yamlErrorLine(err)
		probs.add(file, line, "", "invalid YAML: %s", msg)
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		probs.add(file, extra.Line, "", "a scenario file holds one YAML document; found another after ---")
		return nil
	} else if err.Error() != "EOF" {
		line, msg := yamlErrorLine(err)
		probs.add(file, line, "", "invalid YAML: %s", msg)
		return nil
	}
	if len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	}
	if root.Kind != yaml.MappingNode {
		probs.add(file, root.Line, "", "a scenario is a mapping of keys (name: ..., seed: ...), got %s", describe(root))
		return nil
	}
	return root
}

// segment is one step of a key path: a key, or a list index.
type segment struct {
	name    string
	index   int
	isIndex bool
}

// parsePath splits "cluster.gpus[0].mig[1g.10gb]" into segments. Brackets
// hold a list index or a map key that contains dots.
func parsePath(p string) ([]segment, error) {
	var segs []segment
	rest := p
	if rest == "" {
		return nil, errors.New("empty key path")
	}
	for rest != "" {
		switch rest[0] {
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("unclosed [ in key path %q", p)
			}
			inner := rest[1:end]
			if i, err := strconv.Atoi(inner); err == nil && i >= 0 {
				segs = append(segs, segment{name: inner, index: i, isIndex: true})
			} else {
				segs = append(segs, segment{name: inner})
			}
			rest = rest[end+1:]
			rest = strings.TrimPrefix(rest, ".")
		default:
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			name := rest[:end]
			if name == "" {
				return nil, fmt.Errorf("empty key in key path %q", p)
			}
			segs = append(segs, segment{name: name})
			rest = rest[end:]
			if strings.HasPrefix(rest, ".") {
				rest = rest[1:]
				if rest == "" {
					return nil, fmt.Errorf("key path %q ends with a dot", p)
				}
			}
		}
	}
	return segs, nil
}

// layerer writes environment and --set values into the file's node tree,
// so that one strict decode sees every layer and blames each value's own
// origin.
type layerer struct {
	d     *decoder
	probs *problems
}

func (l *layerer) env(root *yaml.Node, t reflect.Type, env []string) {
	for _, kv := range env {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		label := "env " + name
		rest := name[len(EnvPrefix):]
		parts := strings.Split(rest, "__")
		segs := make([]segment, 0, len(parts))
		for _, p := range parts {
			if p == "" {
				l.probs.add(label, 0, "", "empty key in the variable name (use \"__\" between keys, e.g. %sDATAPATH__HOST__CORES)", EnvPrefix)
				segs = nil
				break
			}
			s := segment{name: p}
			if i, err := strconv.Atoi(p); err == nil && i >= 0 {
				s.index, s.isIndex = i, true
			}
			segs = append(segs, s)
		}
		if segs == nil {
			continue
		}
		l.apply(root, t, segs, val, label, true)
	}
}

func (l *layerer) set(root *yaml.Node, t reflect.Type, kv string) {
	l.setFrom(root, t, "--set", kv)
}

func (l *layerer) setFrom(root *yaml.Node, t reflect.Type, source, kv string) {
	label := source + " " + kv
	key, val, ok := strings.Cut(kv, "=")
	if !ok {
		l.probs.add(label, 0, "", "expected key=value, e.g. --set datapath.host.background_load=80%%")
		return
	}
	segs, err := parsePath(strings.TrimSpace(key))
	if err != nil {
		l.probs.add(label, 0, key, "%v", err)
		return
	}
	l.apply(root, t, segs, val, label, false)
}

// apply resolves segs against the config type t, creating mapping nodes
// along the way where the file has none, and replaces the value there.
// fold makes struct keys match case-insensitively (environment names are
// upper case).
func (l *layerer) apply(root *yaml.Node, t reflect.Type, segs []segment, raw, label string, fold bool) {
	val, err := parseValue(raw)
	if err != nil {
		l.probs.add(label, 0, "", "value %q is not valid YAML: %v", raw, err)
		return
	}
	markOrigin(l.d.origins, val, origin{label: label})
	node, path := root, ""
	for i, s := range segs {
		last := i == len(segs)-1
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if reflect.PointerTo(t).Implements(textUnmarshalerType) {
			l.probs.add(label, 0, path, "%s is %s and has no key %q", path, expected(t), s.name)
			return
		}
		var key string
		var next reflect.Type
		switch t.Kind() {
		case reflect.Struct:
			fs := fieldsOf(t)
			var f *field
			for j := range fs {
				if fs[j].key == s.name || (fold && strings.EqualFold(fs[j].key, s.name)) {
					f = &fs[j]
					break
				}
			}
			if f == nil {
				name := s.name
				if fold {
					name = strings.ToLower(name)
				}
				l.probs.add(label, 0, joinPath(path, name), "%s", l.d.unknownKey(name, path, fs))
				return
			}
			key, next = f.key, t.FieldByIndex(f.index).Type
		case reflect.Map:
			key, next = s.name, t.Elem()
			if fold {
				key = l.foldMapKey(node, s.name)
			}
		case reflect.Slice:
			if !s.isIndex {
				l.probs.add(label, 0, path, "%s is a list; address an item by index, e.g. %s[0]", path, path)
				return
			}
			seq := node
			if seq == nil || seq.Kind != yaml.SequenceNode || s.index >= len(seq.Content) {
				have := 0
				if seq != nil && seq.Kind == yaml.SequenceNode {
					have = len(seq.Content)
				}
				l.probs.add(label, 0, fmt.Sprintf("%s[%d]", path, s.index), "index %d out of range: the file gives %s %d items (set the whole list instead: %s=[...])", s.index, path, have, path)
				return
			}
			path = fmt.Sprintf("%s[%d]", path, s.index)
			if !last && isLeaf(t.Elem()) {
				l.probs.add(label, 0, path, "%s is %s and has no key %q", path, expected(t.Elem()), segs[i+1].name)
				return
			}
			if last {
				seq.Content[s.index] = val
				return
			}
			seq.Content[s.index] = l.cow(seq.Content[s.index])
			node, t = seq.Content[s.index], t.Elem()
			continue
		default:
			l.probs.add(label, 0, path, "%s is %s and has no key %q", path, expected(t), s.name)
			return
		}
		path = joinPath(path, key)
		if !last && isLeaf(next) {
			// Checked before editing the tree, so that a bad path adds no
			// node that would raise a second, confusing problem.
			l.probs.add(label, 0, path, "%s is %s and has no key %q", path, expected(next), segs[i+1].name)
			return
		}
		m := node
		if m.Kind != yaml.MappingNode {
			// The file has no value or a scalar here: the override
			// replaces it with a mapping holding just this key.
			*m = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: m.Line, Column: m.Column}
		}
		idx := -1
		for j := 0; j+1 < len(m.Content); j += 2 {
			if k := m.Content[j]; k.Kind == yaml.ScalarNode && k.Value == key && k.ShortTag() != "!!merge" {
				idx = j + 1 // the last one wins, as duplicates are reported anyway
			}
		}
		if idx < 0 {
			k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}
			var child *yaml.Node
			if last {
				child = val
			} else {
				child = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
				if next.Kind() == reflect.Slice {
					child = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
				}
			}
			markOrigin(l.d.origins, k, origin{label: label})
			markOrigin(l.d.origins, child, origin{label: label})
			m.Content = append(m.Content, k, child)
			idx = len(m.Content) - 1
		} else if last {
			m.Content[idx] = val
		} else {
			m.Content[idx] = l.cow(m.Content[idx])
		}
		if last {
			return
		}
		node, t = m.Content[idx], next
	}
}

// isLeaf reports whether a value of type t has no keys or items below it.
func isLeaf(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return true
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map, reflect.Slice:
		return false
	}
	return true
}

// cow returns a private copy of the node n (following an alias) with its
// own Content slice, to edit on the way down a key path: an override must
// never edit an anchor that other keys share, and copying just the path
// keeps even an alias-heavy file cheap.
func (l *layerer) cow(n *yaml.Node) *yaml.Node {
	src := n
	for src.Kind == yaml.AliasNode && src.Alias != nil {
		src = src.Alias
	}
	c := *src
	c.Anchor = ""
	c.Content = append([]*yaml.Node(nil), src.Content...)
	if o, ok := l.d.origins[src]; ok {
		l.d.origins[&c] = o
	}
	return &c
}

// foldMapKey finds an existing key of mapping n equal to k ignoring case,
// else returns k in lower case.
func (l *layerer) foldMapKey(n *yaml.Node, k string) string {
	if n != nil && n.Kind == yaml.MappingNode {
		for j := 0; j+1 < len(n.Content); j += 2 {
			if strings.EqualFold(n.Content[j].Value, k) {
				return n.Content[j].Value
			}
		}
	}
	return strings.ToLower(k)
}
