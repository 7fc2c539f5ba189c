package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
	"github.com/conspirator-sim/conspirator/sim/sweep"
)

// State is what batch.json records: how the points were split into tasks,
// so MissingShards can name the tasks to rerun.
type State struct {
	Format    string    `json:"format"`
	Scheduler Scheduler `json:"scheduler"`
	Shards    int       `json:"shards"`
	Throttle  int       `json:"throttle"`
	Jobs      int       `json:"jobs"`
}

const stateFormat = "conspirator-batch/1"

// ReadState reads and checks DIR/batch.json.
func ReadState(dir string) (State, error) {
	p := filepath.Join(dir, StateFile)
	data, err := os.ReadFile(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return State{}, fmt.Errorf("%s holds no %s: it was not written by `conspirator sweep --emit`", dir, StateFile)
		}
		return State{}, err
	}
	return parseState(p, data)
}

func parseState(name string, data []byte) (State, error) {
	var s State
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return State{}, fmt.Errorf("%s: %w", name, err)
	}
	switch {
	case s.Format != stateFormat:
		return State{}, fmt.Errorf("%s: format %q, want %q", name, s.Format, stateFormat)
	case s.Scheduler != Slurm && s.Scheduler != K8s:
		return State{}, fmt.Errorf("%s: scheduler %q, want %q or %q", name, s.Scheduler, Slurm, K8s)
	case s.Shards < 1:
		return State{}, fmt.Errorf("%s: shards %d, want at least 1", name, s.Shards)
	case s.Throttle < 0 || s.Jobs < 1:
		return State{}, fmt.Errorf("%s: throttle %d and jobs %d, want throttle >= 0 and jobs >= 1", name, s.Throttle, s.Jobs)
	}
	return s, nil
}

func (s State) encode() []byte {
	b, _ := json.MarshalIndent(s, "", "  ") // strings and integers: cannot fail
	return append(b, '\n')
}

// Prepare makes dir the sweep directory of points without running any:
// it writes sweep.json (or checks that an existing one holds this very
// sweep) and points/. Every task then resumes into dir, and the emitted
// files can sit beside sweep.json.
func Prepare(dir string, points []sweep.Point, meta, inputs map[string]string) error {
	// sweep.Run writes or checks sweep.json before it runs its shard; shard
	// len(points) of len(points)+1 holds no point of an Expand-ed list
	// (indices 0..len-1), so it runs nothing. The run function is a guard.
	opts := sweep.Options{Dir: dir, Jobs: 1, Resume: true, Shard: len(points), Shards: len(points) + 1, Meta: meta, Inputs: inputs}
	_, err := sweep.Run(context.Background(), points, opts, func(_ context.Context, p sweep.Point) (map[string][]byte, error) {
		return nil, fmt.Errorf("batch.Prepare runs no point, but was given point %s with index %d", p.ID, p.Index)
	})
	return err
}

// Emit writes the files that run j on scheduler s into j.Dir (see the
// package doc): sweep.json for points and meta, the scenario text, the
// script or manifest, batch.json, README.md and logs/. It refuses a
// directory that holds another sweep or another scenario.yaml, so points of
// two sweeps never mix; emitting again with the same inputs rewrites the
// same files and keeps finished points. It returns the paths it wrote.
func Emit(s Scheduler, j Job, scenario []byte, points []sweep.Point, meta, inputs map[string]string) ([]string, error) {
	if j.Points == 0 {
		j.Points = len(points)
	}
	var name string
	var body []byte
	var err error
	switch s {
	case Slurm:
		name = SlurmFile
		body, err = SlurmScript(j)
	case K8s:
		name = K8sFile
		body, err = K8sManifest(j)
	default:
		_, err = ParseScheduler(string(s))
	}
	if err != nil {
		return nil, err
	}
	scPath := filepath.Join(j.Dir, ScenarioFile)
	if old, err := os.ReadFile(scPath); err == nil && !bytes.Equal(old, scenario) {
		return nil, fmt.Errorf("%s holds a different %s (a sweep of another scenario): choose a new directory", j.Dir, ScenarioFile)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err := Prepare(j.Dir, points, meta, inputs); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(j.Dir, LogDir), 0o755); err != nil {
		return nil, fmt.Errorf("create the log directory: %w", err)
	}
	st := State{Format: stateFormat, Scheduler: s, Shards: j.Shards, Throttle: j.Throttle, Jobs: j.Jobs}
	files := []struct {
		name string
		data []byte
	}{
		{ScenarioFile, scenario},
		{StateFile, st.encode()},
		{name, body},
		{ReadmeFile, Readme(s, j)},
	}
	var written []string
	for _, f := range files {
		p := filepath.Join(j.Dir, f.name)
		if err := atomicfs.WriteFile(atomicfs.OS, p, f.data); err != nil {
			return written, err
		}
		written = append(written, p)
	}
	return written, nil
}

// MissingShards returns the tasks of the sweep in dir (emitted by Emit)
// that have at least one unfinished point, in increasing order: the
// indices to rerun (`sbatch --array=` ArrayList(ids)). Finished points are
// never rerun: every task resumes.
func MissingShards(dir string) ([]int, error) {
	st, err := ReadState(dir)
	if err != nil {
		return nil, err
	}
	spec, err := sweep.ReadSpec(dir)
	if err != nil {
		return nil, err
	}
	missing := map[int]bool{}
	for _, p := range spec.Points {
		ok, err := sweep.IsComplete(dir, p)
		if err != nil {
			return nil, err
		}
		if !ok {
			missing[p.Index%st.Shards] = true
		}
	}
	ids := make([]int, 0, len(missing))
	for i := range missing {
		ids = append(ids, i)
	}
	sort.Ints(ids)
	return ids, nil
}

// ArrayList writes sorted, distinct task indices the way sbatch --array
// reads them, runs collapsed: [0 1 2 5 7 8] is "0-2,5,7-8".
func ArrayList(ids []int) string {
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(ids[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", ids[i], ids[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
