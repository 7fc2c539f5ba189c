package main

import (
	"bytes"
	"strings"
	"testing"
)

// printTable drops a column only when every row below the header leaves
// it empty, and aligns the rest under their headers.
func TestPrintTable(t *testing.T) {
	var b bytes.Buffer
	printTable(&b, [][]string{
		{"policy", "GPU-hours", "gap to optimal", "queued"},
		{"conspirator", "75.1", "", "50.0%"},
		{"first-fit", "80.2", "", "12.5%"},
	})
	want := "       policy  GPU-hours  queued\n" +
		"  conspirator       75.1   50.0%\n" +
		"    first-fit       80.2   12.5%\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	printTable(&b, [][]string{{"policy", "gap to optimal"}, {"optimal", "+0.00%"}, {"conspirator", ""}})
	if !strings.Contains(b.String(), "gap to optimal") || !strings.Contains(b.String(), "+0.00%") {
		t.Errorf("a column with one value was dropped:\n%s", b.String())
	}
}

// The single-run progress bar draws on a terminal only, counting replays.
func TestRunProgress(t *testing.T) {
	if runProgress(&bytes.Buffer{}, false) != nil {
		t.Errorf("a progress function for a non-terminal")
	}
	var b bytes.Buffer
	p := runProgress(&b, true)
	for i := 1; i <= 4; i++ {
		p(i, 4)
	}
	if s := b.String(); !strings.Contains(s, "run") || !strings.Contains(s, "4/4") || !strings.Contains(s, "replays") {
		t.Errorf("bar output %q", s)
	}
}
