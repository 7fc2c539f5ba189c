package main

// Registers -update in this test binary, so that `go test ./... -update`
// (rewrite every golden file) runs here too; see internal/golden.
import _ "github.com/conspirator-sim/conspirator/internal/golden"
