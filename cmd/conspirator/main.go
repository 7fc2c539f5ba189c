// Command conspirator runs conspirator-sim: scenarios of the four data paths
// of the Conspirator paper and of GPU scheduling over cluster traces,
// parameter sweeps, reports, trace inspection, MIG layouts and calibration.
//
// Exit codes: 0 success, 1 a run failed, 2 usage or configuration error.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/internal/suggest"
	"github.com/conspirator-sim/conspirator/policies/optimal"
	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim/cluster"
	"github.com/conspirator-sim/conspirator/sim/sweep"
	"github.com/conspirator-sim/conspirator/workloads/trace"
	"github.com/spf13/cobra"
)

// Exit codes, part of the command-line contract (scripts and Slurm arrays
// test them).
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

// usageError marks a mistake in how the command was called or configured
// (exit code 2), as opposed to a run that failed (exit code 1).
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// exitCode maps an error to the documented exit code.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var u usageError
	var ce *scenarios.ConfigError
	var ie *cluster.InputError
	var re *sweep.RefusedError
	var he *engine.HorizonError // inputs whose run would pass the clock's horizon
	var row *trace.RowError     // a data file's row, wherever it was found
	if errors.As(err, &u) || errors.As(err, &ce) || errors.As(err, &ie) || errors.As(err, &re) || errors.As(err, &he) || errors.As(err, &row) {
		return exitUsage
	}
	// cobra's own "unknown command" error has no type of its own.
	if strings.HasPrefix(err.Error(), "unknown command") {
		return exitUsage
	}
	return exitFailed
}

func main() { os.Exit(process(os.Args[1:])) }

// process is the whole process: a solver worker when asked to be one,
// else the command line, with exact solves in worker processes of this
// binary, killed when their time limit cuts them. (run alone, which tests
// call in their own process, leaves solves in that process.)
func process(args []string) int {
	if len(args) == 1 && args[0] == workerArg {
		return serveWorker()
	}
	optimal.StartWorker = startWorker
	return run(args, os.Stdout, os.Stderr, os.Environ())
}

// run executes one command line; it is main without the process, so tests
// call it directly and check the output and exit code.
func run(args []string, stdout, stderr io.Writer, env []string) int {
	root := newRoot(stdout, stderr, env)
	root.SetArgs(args)
	err := root.Execute()
	if err != nil {
		fmt.Fprintf(stderr, "conspirator: %v\n", err)
	}
	return exitCode(err)
}

// app carries what every command needs: the output streams and the
// environment (injected, so that a load is a pure function of its inputs).
type app struct {
	stdout, stderr io.Writer
	env            []string
	// checkFilesOnLoad: load reports missing data files with the
	// scenario's other problems (validate); the other commands check them
	// after their own flags.
	checkFilesOnLoad bool
}

func newRoot(stdout, stderr io.Writer, env []string) *cobra.Command {
	a := &app{stdout: stdout, stderr: stderr, env: env}
	root := &cobra.Command{
		Use:   "conspirator",
		Short: "Simulate SmartNIC-aided control planes and MIG GPU scheduling (USENIX ATC'24 Conspirator)",
		Long: `conspirator simulates, deterministically, the system of the USENIX ATC'24
paper "Conspirator: SmartNIC-Aided Control Plane for Distributed ML
Workloads": requests travelling from clients to GPUs through four data paths
(TCP via the host CPU, GPUDirect RDMA, RDMA to host memory, and RDMA to a
SmartNIC that schedules and DMAs to the GPU) under background CPU load, and
GPU scheduling policies on MIG-partitioned, heterogeneous GPUs over real
cluster traces.

Start with:  conspirator run            (the default built-in scenario)
             conspirator scenarios list (the built-in library)

Exit codes: 0 success, 1 a run failed, 2 usage or configuration error.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionString(),
	}
	// -o '' would otherwise mean the default directory (or the working
	// directory, for a command that joins names onto it): a script whose
	// variable came out empty must not write where it did not mean to.
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		if f := c.Flags().Lookup("output"); f != nil && f.Changed && strings.TrimSpace(f.Value.String()) == "" {
			return usagef("-o %q: an empty output directory; give a directory, or leave -o out for the default", f.Value.String())
		}
		return nil
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	// Cobra reports unknown flags and wrong argument counts as plain errors;
	// they are usage errors (exit 2).
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%v (see '%s --help')", err, c.CommandPath())}
	})
	root.AddCommand(
		a.runCmd(),
		a.validateCmd(),
		a.sweepCmd(),
		a.reportCmd(),
		a.calibrateCmd(),
		a.versionCmd(),
		a.scenariosCmd(),
		a.explainCmd(),
		a.migCmd(),
		a.traceCmd(),
		a.compareCmd(),
		a.sensitivityCmd(),
		a.reproduceCmd(),
		a.llmCmd(),
	)
	// cobra adds its completion command when the root executes; added
	// here, its sub-commands get the same rules as ours.
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		wrapArgs(c)
		refuseUnknownSubcommands(c)
	}
	return root
}

// refuseUnknownSubcommands makes a command that only groups others
// (mig, trace, scenarios) refuse an unknown sub-command with exit 2:
// cobra would print the help and exit 0, which a script reads as success.
// With no argument the command still prints its help.
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, s := range c.Commands() {
		refuseUnknownSubcommands(s)
	}
	if !c.HasSubCommands() || c.Runnable() {
		return
	}
	c.Args = cobra.ArbitraryArgs
	c.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		var names []string
		for _, s := range cmd.Commands() {
			if s.IsAvailableCommand() {
				names = append(names, s.Name())
			}
		}
		hint := ""
		if s := suggest.Nearest(args[0], names); s != "" {
			hint = fmt.Sprintf("; did you mean %q?", s)
		}
		return usagef("unknown command %q for %q%s (its commands: %s; see '%s --help')", args[0], cmd.CommandPath(), hint, strings.Join(names, ", "), cmd.CommandPath())
	}
}

// wrapArgs turns cobra's argument-count errors into usage errors, for c
// and its sub-commands.
func wrapArgs(c *cobra.Command) {
	if c.Args != nil {
		check := c.Args
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return usageError{fmt.Errorf("%v (see '%s --help')", err, cmd.CommandPath())}
			}
			return nil
		}
	}
	for _, s := range c.Commands() {
		wrapArgs(s)
	}
}
