package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"github.com/conspirator-sim/conspirator/internal/inputfile"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/conspirator-sim/conspirator/internal/suggest"
)

// builtinFS holds the scenario library shipped inside the binary, so that
// `conspirator run example/minimal` works from any directory.
//
//go:embed builtin
var builtinFS embed.FS

// List returns the names of the built-in scenarios ("example/minimal"),
// sorted.
func List() []string {
	var names []string
	_ = fs.WalkDir(builtinFS, "builtin", func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(p, ".yaml") {
			names = append(names, strings.TrimSuffix(strings.TrimPrefix(p, "builtin/"), ".yaml"))
		}
		return nil
	})
	sort.Strings(names)
	return names
}

// Show returns the YAML text of a built-in scenario. An unknown name is an
// error listing the names and the nearest one.
func Show(name string) ([]byte, error) {
	for _, n := range List() {
		if n == name {
			return builtinFS.ReadFile(path.Join("builtin", name+".yaml"))
		}
	}
	msg := fmt.Sprintf("no built-in scenario %q", name)
	if near := suggest.Nearest(name, List()); near != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	return nil, fmt.Errorf("%s; built-in scenarios: %s", msg, strings.Join(List(), ", "))
}

// Summary is a built-in scenario's description in one line: the first
// line of its file's leading comment, a title that a line of "#" alone
// sets off from the comment's prose ("" where the file has none). The
// YAML file is the one place it is written; `scenarios list` prints it.
func Summary(name string) string {
	data, err := Show(name)
	if err != nil {
		return ""
	}
	first, rest, _ := strings.Cut(string(data), "\n")
	next, _, _ := strings.Cut(rest, "\n")
	if !strings.HasPrefix(first, "# ") || strings.TrimSpace(next) != "#" {
		return ""
	}
	return strings.TrimSpace(strings.TrimPrefix(first, "# "))
}

// Load reads a scenario into into (a pointer to a config struct such as
// *Scenario): a built-in name if nameOrPath is one, else a file path.
// overrides are --set "key=value" strings, env is os.Environ()-style; see
// Input for the layering. Problems come back as one *ConfigError.
func Load(nameOrPath string, overrides []string, env []string, into any) error {
	return LoadSourced(nameOrPath, nil, overrides, env, into)
}

// LoadSourced is Load with settings from named sources (Input.Sourced)
// between the environment and the --set overrides.
func LoadSourced(nameOrPath string, sourced []Override, overrides []string, env []string, into any) error {
	return LoadInput(nameOrPath, Input{Env: env, Sourced: sourced, Overrides: overrides}, into)
}

// LoadInput is Load with every layer of in (File and Data are read from
// nameOrPath).
func LoadInput(nameOrPath string, in Input, into any) error {
	if data, err := Show(nameOrPath); err == nil {
		in.File, in.Data = "builtin:"+nameOrPath, data
		return Decode(in, into)
	}
	data, err := ReadFile(nameOrPath)
	var tooBig *TooLargeError
	if errors.As(err, &tooBig) {
		return err
	}
	if err != nil {
		msg := fmt.Sprintf("scenario %q is neither a built-in name nor a readable file (%v)", nameOrPath, err)
		if near := suggest.Nearest(nameOrPath, List()); near != "" {
			msg += fmt.Sprintf("; did you mean the built-in %q?", near)
		}
		return fmt.Errorf("%s; built-in scenarios: %s", msg, strings.Join(List(), ", "))
	}
	in.File, in.Data = nameOrPath, data
	return Decode(in, into)
}

// MaxFileBytes bounds a scenario file (and a calibration profile) read
// whole: the largest built-in scenario is a few KiB, and a file of many
// MiB is a mistake (a trace given as the scenario, /dev/zero) that would
// otherwise be read into memory to its end.
const MaxFileBytes = 4 << 20

// TooLargeError is a file over the size its kind may have.
type TooLargeError struct {
	Path  string
	Limit int64
	What  string
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than %s, the most a %s may hold; is it the right file?", e.Path, sizeText(e.Limit), e.What)
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadFile reads a scenario file, refusing one over MaxFileBytes with a
// *TooLargeError (it reads at most one byte more, so a device or a pipe
// without end is refused too).
func ReadFile(path string) ([]byte, error) {
	return ReadLimited(path, MaxFileBytes, "scenario file")
}

// ReadLimited reads path whole unless it holds more than limit bytes,
// which is a *TooLargeError naming what the file was meant to be.
func ReadLimited(path string, limit int64, what string) ([]byte, error) {
	f, err := inputfile.Open(path) // a FIFO or device is refused at once
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: errors.New("is a directory")}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit, What: what}
	}
	return data, nil
}
