package sim

import (
	"errors"
	"github.com/conspirator-sim/conspirator/internal/inputfile"
	"io/fs"

	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim/cluster"
)

// InputFile is one data file a run reads (a trace, a node list), named by
// its scenario key, with the digest of its bytes: summary.json lists them
// so that a result says which data it was computed from, and they are
// part of the run's identity (InputsSHA256).
type InputFile struct {
	Key    string `json:"key"`
	Path   string `json:"path"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// InputFiles digests every data file sc reads, in key order. A file that
// cannot be read is an error naming its key (CheckFiles says more).
func InputFiles(sc *scenarios.Scenario) ([]InputFile, error) {
	keys, paths := dataFiles(sc)
	if err := checkFiles(keys, paths); err != nil {
		return nil, err
	}
	out := make([]InputFile, 0, len(keys))
	for i, k := range keys {
		sum, n, err := fileDigest(paths[i])
		if errors.Is(err, fs.ErrNotExist) {
			return nil, missingInput(k, paths[i])
		}
		if err != nil {
			return nil, &cluster.InputError{Err: fmt.Errorf("%s: %w", k, err)}
		}
		out = append(out, InputFile{Key: k, Path: paths[i], Bytes: n, SHA256: sum})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// DataFiles lists the data files sc reads (traces, node lists, job
// lists), each with the key that names it, as the scenario gives them
// (relative to the working directory).
func DataFiles(sc *scenarios.Scenario) (keys, paths []string) { return dataFiles(sc) }

func dataFiles(sc *scenarios.Scenario) (keys, paths []string) {
	if sc.Cluster != nil {
		keys, paths = sc.Cluster.Files()
	}
	if sc.Allocation != nil {
		k, p := sc.Allocation.Files()
		keys, paths = append(keys, k...), append(paths, p...)
	}
	if sc.Training != nil {
		k, p := sc.Training.Files()
		keys, paths = append(keys, k...), append(paths, p...)
	}
	if sc.LLM != nil {
		k, p := sc.LLM.Files()
		keys, paths = append(keys, k...), append(paths, p...)
	}
	return keys, paths
}

// InputsSHA256 is the identity of a run: the SHA-256 of its resolved
// inputs (summary.json's inputs: every layer of the scenario, file,
// environment, calibration profile, --set and seed, already applied) and
// of the bytes of every data file it reads. Two runs with the same digest
// compute the same thing; a sweep records each point's digest and refuses
// to resume, or to aggregate, a point whose digest differs.
func InputsSHA256(sc *scenarios.Scenario) (string, error) {
	inputs, err := scenarioKeys(sc)
	if err != nil {
		return "", err
	}
	files, err := InputFiles(sc)
	if err != nil {
		return "", err
	}
	return inputsSHA256(inputs, files)
}

func inputsSHA256(inputs map[string]any, files []InputFile) (string, error) {
	fileSums := map[string]string{}
	for _, f := range files {
		fileSums[f.Key] = f.SHA256
	}
	// A data file counts by its bytes, not by where it lies: the same
	// trace under another path computes the same thing.
	inputs = withoutPaths(inputs, files)
	b, err := json.Marshal(struct {
		Inputs map[string]any    `json:"inputs"`
		Files  map[string]string `json:"files"`
	}{inputs, fileSums})
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// withoutPaths is inputs with the value of every data file's key (a
// path) left out, copying only the maps on the way to each key.
func withoutPaths(inputs map[string]any, files []InputFile) map[string]any {
	out := inputs
	for _, f := range files {
		segs := strings.Split(f.Key, ".")
		out = dropKey(out, segs)
	}
	return out
}

func dropKey(m map[string]any, segs []string) map[string]any {
	if len(segs) == 0 {
		return m
	}
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	if len(segs) == 1 {
		delete(c, segs[0])
		return c
	}
	if sub, ok := c[segs[0]].(map[string]any); ok {
		c[segs[0]] = dropKey(sub, segs[1:])
	}
	return c
}

// FlatInputs is sc's resolved inputs as one "key.path[0].leaf" -> value
// (JSON) map: what a sweep stores to name the keys that differ when a
// resume meets other inputs.
func FlatInputs(sc *scenarios.Scenario) (map[string]string, error) {
	inputs, err := scenarioKeys(sc)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	flatten("", inputs, out)
	return out, nil
}

func flatten(prefix string, v any, out map[string]string) {
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			out[prefix] = "{}"
		}
		for k, c := range t {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			if strings.ContainsAny(k, ".[]") {
				p = prefix + "[" + k + "]"
			}
			flatten(p, c, out)
		}
	case []any:
		if len(t) == 0 {
			out[prefix] = "[]"
		}
		for i, c := range t {
			flatten(fmt.Sprintf("%s[%d]", prefix, i), c, out)
		}
	default:
		b, err := json.Marshal(t)
		if err != nil {
			b = []byte(fmt.Sprint(t))
		}
		out[prefix] = string(b)
	}
}

// digests caches file digests within the process, keyed by path, size and
// modification time: a sweep digests its trace once, not once per point.
var digests = struct {
	sync.Mutex
	m map[digestKey]string
}{m: map[digestKey]string{}}

type digestKey struct {
	path  string
	size  int64
	mtime time.Time
}

// MaxDataFileBytes bounds a data file (trace, node list) read whole: the
// largest public trace this project reads (Alibaba v2020's job table) is
// about 150 MB.
const MaxDataFileBytes = 1 << 30

func fileDigest(path string) (string, int64, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	if st.IsDir() {
		return "", 0, fmt.Errorf("%s is a directory; give the file", path)
	}
	key := digestKey{path, st.Size(), st.ModTime()}
	regular := st.Mode().IsRegular()
	if regular {
		digests.Lock()
		s, ok := digests.m[key]
		digests.Unlock()
		if ok {
			return s, st.Size(), nil
		}
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, MaxDataFileBytes+1))
	if err != nil {
		return "", 0, fmt.Errorf("read %s: %w", path, err)
	}
	if n > MaxDataFileBytes {
		return "", 0, fmt.Errorf("%s is larger than %d MiB, the most a data file may hold", path, MaxDataFileBytes>>20)
	}
	s := hex.EncodeToString(h.Sum(nil))
	if regular {
		digests.Lock()
		digests.m[key] = s
		digests.Unlock()
	}
	return s, n, nil
}

// FileProblems checks sc's data files for the scenario loader
// (scenarios.Input.Check): every file that is not there, each an error at
// its key, so that validate reports them with the scenario's other
// problems in one pass, at the line that names them. An empty path is the
// config's own check to report.
func FileProblems(into any) error {
	sc, ok := into.(*scenarios.Scenario)
	if !ok {
		return nil
	}
	keys, paths := dataFiles(sc)
	var errs []error
	for i, p := range paths {
		if strings.TrimSpace(p) == "" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			e := missingInput(keys[i], p)
			if !errors.Is(err, fs.ErrNotExist) {
				e = fmt.Errorf("%s: %w", keys[i], err)
			}
			errs = append(errs, &fileProblem{key: keys[i], msg: strings.TrimPrefix(e.Error(), keys[i]+": ")})
		}
	}
	return errors.Join(errs...)
}

// fileProblem is a data file's problem placed at its key.
type fileProblem struct{ key, msg string }

func (e *fileProblem) Error() string         { return e.key + ": " + e.msg }
func (e *fileProblem) ConfigField() string   { return e.key }
func (e *fileProblem) ConfigMessage() string { return e.msg }
