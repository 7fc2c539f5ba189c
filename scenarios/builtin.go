package scenarios

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
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
	in := Input{Env: env, Sourced: sourced, Overrides: overrides}
	if data, err := Show(nameOrPath); err == nil {
		in.File, in.Data = "builtin:"+nameOrPath, data
		return Decode(in, into)
	}
	data, err := os.ReadFile(nameOrPath)
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
