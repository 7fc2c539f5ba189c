package main

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/conspirator-sim/conspirator/sim"
	"github.com/spf13/cobra"
)

// versionString names the release, the commit the binary was built from
// (when the go command stamped it: go build/install in a git checkout) and
// the toolchain and platform.
func versionString() string {
	commit := "commit unknown: built without VCS stamping"
	if c := sim.Commit(); c != "" {
		commit = "commit " + strings.Replace(c, "+modified", ", modified", 1)
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
