package main

import (
	"runtime"
	"strings"

	"github.com/spf13/viper"
)

// cliEnv names the environment variables that set command-line defaults
// rather than scenario keys. They are layered by viper (flag > environment >
// built-in default) and removed from what the scenario loader sees, which
// rejects any other unknown CONSPIRATOR_ variable as a misspelt key.
// CONSPIRATOR_SHARDS is the shard count of a Kubernetes Indexed Job (read
// by sweep.ShardFromEnv).
var cliEnv = map[string]bool{"CONSPIRATOR_JOBS": true, "CONSPIRATOR_OUT": true, "CONSPIRATOR_SHARDS": true}

// settings layers the command line's own defaults: the number of sweep
// workers and the root of result directories.
func (a *app) settings() *viper.Viper {
	v := viper.New()
	v.SetDefault("jobs", runtime.NumCPU())
	v.SetDefault("out", "results")
	// viper reads os.Getenv; feed it the injected environment instead so a
	// command line stays a pure function of its inputs (and testable).
	for _, kv := range a.env {
		name, val, ok := strings.Cut(kv, "=")
		if ok && cliEnv[name] {
			v.Set(strings.ToLower(strings.TrimPrefix(name, "CONSPIRATOR_")), val)
		}
	}
	return v
}

func (a *app) outRoot() string { return a.settings().GetString("out") }

// jobs is the default number of sweep workers: CONSPIRATOR_JOBS or all
// cores; a value that is not a positive integer is a usage error.
func (a *app) jobs() (int, error) {
	v := a.settings()
	n := v.GetInt("jobs")
	if n < 1 {
		return 0, usagef("CONSPIRATOR_JOBS=%q: must be a positive integer", v.GetString("jobs"))
	}
	return n, nil
}
