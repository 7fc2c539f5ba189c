package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/conspirator-sim/conspirator/sim"
	"github.com/spf13/cobra"
)

// versionString names the release, the commit the binary was built from
// (when the go command stamped it: go build/install in a git checkout) and
// the toolchain and platform.
func versionString() string {
	commit := "commit unknown: built without VCS stamping"
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = ", modified"
				}
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" {
			commit = "commit " + rev + dirty
		}
	}
	return fmt.Sprintf("conspirator %s (%s, %s, %s/%s)", sim.Version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version (also: conspirator --version)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(a.stdout, versionString())
			return nil
		},
	}
}
