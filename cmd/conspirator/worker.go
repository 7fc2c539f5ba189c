package main

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/conspirator-sim/conspirator/policies/optimal"
)

// workerArg is the hidden first argument that makes this binary a solver
// worker of the exact policy (optimal.Serve on stdin and stdout). It is
// not a cobra command: a worker must start fast and print nothing else.
const workerArg = "__optimal-worker"

// startWorker starts this binary as a solver worker, so that an exact
// solve cut by its time limit is stopped by killing its process (see
// optimal.StartWorker).
func startWorker() (*optimal.Worker, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, workerArg)
	cmd.Stderr = os.Stderr // a worker's own failure is worth seeing
	return optimal.CommandWorker(cmd)
}

// serveWorker is the worker's main.
func serveWorker() int {
	if err := optimal.Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "conspirator:", err)
		return exitFailed
	}
	return exitOK
}
