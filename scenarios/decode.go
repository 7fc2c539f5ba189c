package scenarios

import (
	"encoding"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/conspirator-sim/conspirator/hw/units"
	"github.com/conspirator-sim/conspirator/internal/suggest"
)

// Limits that keep a hostile file from exhausting memory or the stack:
// YAML aliases can expand a small file exponentially ("billion laughs"),
// and every alias expansion counts against maxNodes.
const (
	maxNodes = 1 << 20
	maxDepth = 64
)

var textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()

// origin says where a node of the merged tree came from when it is not the
// scenario file: the layer's label is used as the problem's File.
type origin struct {
	label string
}

// loc is a place to blame: a file (or layer label) and a line (0: none).
type loc struct {
	file string
	line int
}

// decoder turns a yaml.Node tree into a Go value, strictly, collecting
// problems instead of stopping at the first.
type decoder struct {
	file    string
	probs   *problems
	origins map[*yaml.Node]origin // nodes inserted by env and --set
	lines   map[string]loc        // key path -> where its key was written
	nodes   int
	root    reflect.Type // for "belongs under" suggestions
}

// where returns the file label and line to blame for node n.
func (d *decoder) where(n *yaml.Node) (string, int) {
	if n != nil {
		if o, ok := d.origins[n]; ok {
			return o.label, 0
		}
		return d.file, n.Line
	}
	return d.file, 0
}

// record notes where the setting at path came from: the key's line in
// the file, unless an override (environment, profile, --set) replaced its
// value, which is then what a later problem with the value is blamed on.
func (d *decoder) record(key, val *yaml.Node, path string) {
	if val != nil {
		if o, ok := d.origins[val]; ok {
			d.lines[path] = loc{o.label, 0}
			return
		}
	}
	file, line := d.where(key)
	d.lines[path] = loc{file, line}
}

func (d *decoder) fail(n *yaml.Node, path, format string, args ...any) {
	file, line := d.where(n)
	d.probs.add(file, line, path, format, args...)
}

// deref follows an alias and counts the node against the budget; it
// returns nil when the budget is spent (and reports that once).
func (d *decoder) deref(n *yaml.Node, path string) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	d.nodes++
	if d.nodes == maxNodes+1 {
		d.fail(n, path, "the document expands to more than %d nodes (aliases nested too deeply?)", maxNodes)
	}
	if d.nodes > maxNodes {
		return nil
	}
	return n
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	if strings.ContainsAny(key, ".[]") || key == "" {
		return path + "[" + key + "]"
	}
	return path + "." + key
}

// describe says what a node is, for "expected X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "no value"
		case "!!int", "!!float":
			return "the number " + n.Value
		case "!!bool":
			return "the boolean " + n.Value
		}
		return strconv.Quote(n.Value)
	}
	return "a YAML node of kind " + strconv.Itoa(int(n.Kind))
}

// expected names what a Go type wants in YAML.
func expected(t reflect.Type) string {
	if reflect.PointerTo(t).Implements(textUnmarshalerType) {
		if q := units.QuantityName(reflect.Zero(t).Interface()); q != "" {
			return "a " + q + " such as " + units.Example(reflect.Zero(t).Interface())
		}
		return "text"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return expected(t.Elem())
	case reflect.Struct:
		return "a mapping of keys"
	case reflect.Map:
		return "a mapping"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.String:
		return "text"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return t.String()
}

// value decodes n into v (addressable) at key path path.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string, depth int) {
	if n = d.deref(n, path); n == nil {
		return
	}
	if depth > maxDepth {
		d.fail(n, path, "nested more than %d levels deep", maxDepth)
		return
	}
	t := v.Type()
	isNull := n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"

	if t.Kind() == reflect.Pointer {
		if isNull {
			v.SetZero() // "datapath: ~" switches a section off
			return
		}
		if v.IsNil() {
			p := reflect.New(t.Elem())
			d.defaults(p.Elem(), path)
			v.Set(p)
		}
		d.value(n, v.Elem(), path, depth+1)
		return
	}

	if reflect.PointerTo(t).Implements(textUnmarshalerType) {
		if n.Kind != yaml.ScalarNode || isNull {
			d.fail(n, path, "expected %s, got %s", expected(t), describe(n))
			return
		}
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(n.Value)); err != nil {
			d.fail(n, path, "%v", err)
		}
		return
	}

	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			d.fail(n, path, "expected %s, got %s", expected(t), describe(n))
			return
		}
		d.structFields(n, v, path, depth)
	case reflect.Map:
		d.mapValue(n, v, path, depth, isNull)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.fail(n, path, "expected %s, got %s (write [a, b] or one \"- item\" per line)", expected(t), describe(n))
			return
		}
		s := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		for i, item := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			d.record(item, item, p)
			d.defaults(s.Index(i), p) // struct items start from their defaults
			d.value(item, s.Index(i), p, depth+1)
		}
		v.Set(s)
	default:
		d.scalar(n, v, path, isNull)
	}
}

func (d *decoder) mapValue(n *yaml.Node, v reflect.Value, path string, depth int, isNull bool) {
	t := v.Type()
	if t.Key().Kind() != reflect.String {
		d.fail(n, path, "unsupported map key type %s in the config struct (use string keys)", t.Key())
		return
	}
	if isNull {
		v.SetZero()
		return
	}
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "expected %s, got %s", expected(t), describe(n))
		return
	}
	m := reflect.MakeMapWithSize(t, len(n.Content)/2)
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := d.deref(n.Content[i], path), n.Content[i+1]
		if k == nil {
			return
		}
		if k.Kind != yaml.ScalarNode {
			d.fail(k, path, "a key must be text, got %s", describe(k))
			continue
		}
		p := joinPath(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			d.fail(k, p, "duplicate key (first at line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		d.record(k, val, p)
		e := reflect.New(t.Elem()).Elem()
		d.defaults(e, p)
		d.value(val, e, p, depth+1)
		m.SetMapIndex(reflect.ValueOf(k.Value).Convert(t.Key()), e)
	}
	v.Set(m)
}

func (d *decoder) scalar(n *yaml.Node, v reflect.Value, path string, isNull bool) {
	t := v.Type()
	bad := func() { d.fail(n, path, "expected %s, got %s", expected(t), describe(n)) }
	if t.Kind() == reflect.String && isNull {
		// "key:" with no value, or --set key=, clears a text value (e.g.
		// cluster.nodes= drops the node list for cluster.gpus).
		v.SetString("")
		return
	}
	if n.Kind != yaml.ScalarNode || isNull {
		bad()
		return
	}
	tag := n.ShortTag()
	switch t.Kind() {
	case reflect.String:
		// Numbers and booleans are accepted as text ("version: 2"): the
		// user's characters are kept verbatim, so nothing is lost.
		v.SetString(n.Value)
	case reflect.Bool:
		if tag != "!!bool" {
			bad()
			return
		}
		var b bool
		if err := n.Decode(&b); err != nil {
			bad()
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var i int64
		if tag != "!!int" || n.Decode(&i) != nil {
			bad()
			return
		}
		if v.OverflowInt(i) {
			d.fail(n, path, "%s does not fit in %s", n.Value, t.Kind())
			return
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		var u uint64
		if tag != "!!int" || n.Decode(&u) != nil {
			bad()
			return
		}
		if v.OverflowUint(u) {
			d.fail(n, path, "%s does not fit in %s", n.Value, t.Kind())
			return
		}
		v.SetUint(u)
	case reflect.Float32, reflect.Float64:
		var f float64
		if (tag != "!!int" && tag != "!!float") || n.Decode(&f) != nil {
			bad()
			return
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			d.fail(n, path, "expected a finite number, got %s", n.Value)
			return
		}
		v.SetFloat(f)
	default:
		d.fail(n, path, "field type %s is not supported by the scenario loader", t)
	}
}

// field is one key of a config struct.
type field struct {
	key   string
	index []int
	tag   reflect.StructTag
}

// fieldsOf lists the keys of a config struct in declaration order. A field
// without a yaml tag uses its lower-cased name; `yaml:"-"` hides it.
func fieldsOf(t reflect.Type) []field {
	var fs []field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = strings.ToLower(sf.Name)
		}
		fs = append(fs, field{key: name, index: sf.Index, tag: sf.Tag})
	}
	return fs
}

func keysOf(fs []field) []string {
	ks := make([]string, len(fs))
	for i, f := range fs {
		ks[i] = f.key
	}
	return ks
}

func (d *decoder) structFields(n *yaml.Node, v reflect.Value, path string, depth int) {
	fs := fieldsOf(v.Type())
	byKey := make(map[string]field, len(fs))
	for _, f := range fs {
		byKey[f.key] = f
	}
	// YAML merge keys ("<<: *base") first, so that explicit keys win.
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			src := d.deref(n.Content[i+1], path)
			if src == nil {
				return
			}
			srcs := []*yaml.Node{src}
			if src.Kind == yaml.SequenceNode {
				srcs = src.Content
			}
			for _, s := range srcs {
				if s = d.deref(s, path); s == nil {
					return
				}
				if s.Kind != yaml.MappingNode {
					d.fail(s, path, "a merge (<<) needs a mapping, got %s", describe(s))
					continue
				}
				d.structFields(s, v, path, depth+1)
			}
		}
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			continue
		}
		if k = d.deref(k, path); k == nil {
			return
		}
		if k.Kind != yaml.ScalarNode {
			d.fail(k, path, "a key must be text, got %s", describe(k))
			continue
		}
		p := joinPath(path, k.Value)
		if first, dup := seen[k.Value]; dup {
			d.fail(k, p, "duplicate key (first at line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		f, ok := byKey[k.Value]
		if !ok {
			d.fail(k, p, "%s", d.unknownKey(k.Value, path, fs))
			continue
		}
		d.record(k, val, p)
		d.value(val, v.FieldByIndex(f.index), p, depth+1)
	}
}

// unknownKey explains an unknown key: the nearest valid key at this level,
// or the full path where a key of that name exists elsewhere, and the list
// of valid keys here.
func (d *decoder) unknownKey(key, path string, fs []field) string {
	valid := keysOf(fs)
	msg := fmt.Sprintf("unknown key %q", key)
	// A key that exists verbatim in another section (host under datapath)
	// is a better hint than a near spelling here (host ~ cost).
	if elsewhere := d.findElsewhere(key); elsewhere != "" {
		msg += fmt.Sprintf(" (a key %q exists at %s)", key, elsewhere)
	} else if near := suggest.Nearest(key, valid); near != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	sorted := append([]string(nil), valid...)
	sort.Strings(sorted)
	if len(sorted) == 0 {
		return msg + "; this section has no keys"
	}
	return msg + "; valid keys here: " + strings.Join(sorted, ", ")
}

func (d *decoder) findElsewhere(key string) string {
	if d.root == nil {
		return ""
	}
	var hits []string
	for _, k := range schemaOf(d.root) {
		segs := strings.Split(k.Path, ".")
		if segs[len(segs)-1] == key {
			hits = append(hits, k.Path)
		}
	}
	return strings.Join(hits, " and ")
}

// defaults sets every field of a struct value that has a `default` tag,
// recursing into nested structs (not into pointer sections, which stay nil
// until the scenario mentions them). A default is YAML text decoded by the
// same strict rules as the file, so `default:"80%"` and `default:"[a, b]"`
// mean what they would mean in a scenario.
func (d *decoder) defaults(v reflect.Value, path string) {
	if v.Kind() != reflect.Struct || reflect.PointerTo(v.Type()).Implements(textUnmarshalerType) {
		return
	}
	for _, f := range fieldsOf(v.Type()) {
		fv := v.FieldByIndex(f.index)
		p := joinPath(path, f.key)
		if def, ok := f.tag.Lookup("default"); ok {
			def, err := resolveDefault(def, fv.Type())
			if err != nil {
				d.probs.add("default of "+p, 0, p, "%v", err)
				continue
			}
			n, err := parseValue(def)
			if err != nil {
				d.probs.add("default of "+p, 0, p, "malformed default %q in the config struct: %v", def, err)
				continue
			}
			markOrigin(d.origins, n, origin{label: "default of " + p})
			d.value(n, fv, p, 0)
			continue
		}
		if fv.Kind() == reflect.Struct {
			d.defaults(fv, p)
		}
	}
}

// parseValue reads one YAML value (as written after `--set key=`, in an
// environment variable or in a default tag) into a node.
func parseValue(s string) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
		return nil, fmt.Errorf("%s", cleanYAMLError(err))
	}
	if doc.Kind == 0 || len(doc.Content) == 0 { // empty text: null
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}, nil
	}
	return doc.Content[0], nil
}

func markOrigin(m map[*yaml.Node]origin, n *yaml.Node, o origin) {
	if n == nil {
		return
	}
	if _, done := m[n]; done {
		return
	}
	m[n] = o
	for _, c := range n.Content {
		markOrigin(m, c, o)
	}
	markOrigin(m, n.Alias, o)
}

var yamlLineRE = regexp.MustCompile(`^yaml: (?:line (\d+): )?`)

// parserProblems are go-yaml's parser (not scanner) errors. go-yaml
// reports their line from a 0-based mark without adding one (scanner errors
// get the +1), and omits the line when that mark is 0, so for these the
// line it prints is one too low. The list is read from parserc.go of
// go.yaml.in/yaml/v3 v3.0.4; TestYAMLErrorLines pins the correction.
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// yamlErrorLine splits a go-yaml error into its 1-based line (0 if none)
// and a message without the "yaml: line N:" prefix.
func yamlErrorLine(err error) (int, string) {
	msg := err.Error()
	m := yamlLineRE.FindStringSubmatch(msg)
	if m == nil {
		return 0, msg
	}
	line, _ := strconv.Atoi(m[1])
	rest := msg[len(m[0]):]
	if parserProblems[rest] {
		line++
	}
	return line, rest
}

// cleanYAMLError drops the "yaml: line N:" prefix of a go-yaml error.
func cleanYAMLError(err error) string {
	_, msg := yamlErrorLine(err)
	return msg
}
