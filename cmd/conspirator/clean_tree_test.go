package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMain fails the package when its tests leave anything new in the
// package directory (a results/ folder from a run without -o was the
// case): tests write only under t.TempDir().
//
// With SIM_TEST_AS_CLI=1 the test binary is the command itself
// (the re-exec pattern), so a test can run it as a process and kill it.
func TestMain(m *testing.M) {
	if os.Getenv("SIM_TEST_AS_CLI") == "1" {
		os.Exit(process(os.Args[1:]))
	}
	before := listing(".")
	code := m.Run()
	for name := range listing(".") {
		if !before[name] {
			fmt.Fprintf(os.Stderr, "FAIL: the tests left %s in the package directory; write under t.TempDir()\n", filepath.Join("cmd/conspirator", name))
			os.RemoveAll(name)
			code = 1
		}
	}
	os.Exit(code)
}

func listing(dir string) map[string]bool {
	entries, _ := os.ReadDir(dir)
	m := map[string]bool{}
	for _, e := range entries {
		m[e.Name()] = true
	}
	return m
}
