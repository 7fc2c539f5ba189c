package main

// The docs cannot drift from the code: these tests hold the README and
// every chapter of docs/ to what the code gives.
//
//   - TestDocsResultBlocks: every generated block (<!-- reproduce:table
//     ROWS --> and <!-- reproduce:figures ROW -->, closed by <!-- /reproduce
//     -->) holds what reports renders from docs/results.json, the full
//     `conspirator reproduce` run; docs/results.md is that run's table.
//   - TestDocsFiguresMatchCode: `conspirator reproduce --quick`, run here,
//     gives every figure of docs/results.json (rows it does not reduce)
//     or of docs/results-quick.json (rows it does) within one unit of the
//     figure's last stated decimal, and the same verdicts.
//   - TestDocsFullResults (-tags heavy): the full run against
//     docs/results.json.
//   - TestDocsLinks: every relative link and anchor resolves.
//   - TestDocsCodeBlocks: every code block is marked with what it needs,
//     and the quick ones run.
//
// After an intended change of a result:
//
//	go test -tags heavy -run TestDocsFullResults ./cmd/conspirator -update   # docs/results.json, results.md
//	go test -run TestDocs ./cmd/conspirator -update                      # results-quick.json, the blocks

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/conspirator-sim/conspirator/internal/golden"
	"github.com/conspirator-sim/conspirator/internal/shareddata"
	"github.com/conspirator-sim/conspirator/reports"
	"github.com/conspirator-sim/conspirator/sim/reproduce"
)

// docFiles are the README and every Markdown file under docs/, relative
// to the repository root.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files[1:])
	return files
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := shareddata.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func readReport(t *testing.T, path string) *reproduce.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (generate it: go test -tags heavy -run TestDocsFullResults ./cmd/conspirator -update)", err)
	}
	var rep reproduce.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &rep
}

var blockRE = regexp.MustCompile(`(?s)<!-- reproduce:(table|figures) ([a-z0-9,-]+) -->\n(.*?)<!-- /reproduce -->`)

// renderBlocks returns text with every generated block filled from rep.
// The README's tables link each row to its chapter instead of giving the
// command.
func renderBlocks(file, text string, rep *reproduce.Report) (string, error) {
	var firstErr error
	out := blockRE.ReplaceAllStringFunc(text, func(m string) string {
		sub := blockRE.FindStringSubmatch(m)
		kind, names := sub[1], strings.Split(sub[2], ",")
		var body string
		switch kind {
		case "table":
			readme := file == "README.md"
			prefix := ""
			if readme {
				prefix = "docs/"
			}
			tab, err := reports.ReproduceTable(rep, names, readme, prefix)
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("%s: %v", file, err)
			}
			body = tab
		case "figures":
			found := false
			for _, r := range rep.Rows {
				if len(names) == 1 && r.Name == names[0] {
					body, found = reports.ReproduceFigures(r), true
				}
			}
			if !found && firstErr == nil {
				firstErr = fmt.Errorf("%s: reproduce:figures %s: no such row (or more than one named)", file, sub[2])
			}
		}
		return fmt.Sprintf("<!-- reproduce:%s %s -->\n\n%s\n<!-- /reproduce -->", kind, sub[2], body)
	})
	return out, firstErr
}

func TestDocsResultBlocks(t *testing.T) {
	root := repoRoot(t)
	rep := readReport(t, filepath.Join(root, "docs", "results.json"))
	golden.Check(t, filepath.Join(root, "docs", "results.md"), reports.ReproduceMarkdown(rep))
	blocks := 0
	for _, f := range docFiles(t, root) {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		blocks += len(blockRE.FindAllIndex(b, -1))
		if strings.Count(string(b), "<!-- reproduce:") != len(blockRE.FindAllIndex(b, -1)) {
			t.Errorf("%s: a <!-- reproduce:KIND ROWS --> marker without its <!-- /reproduce --> (or with a malformed row list)", f)
		}
		got, err := renderBlocks(f, string(b), rep)
		if err != nil {
			t.Error(err)
			continue
		}
		if got == string(b) {
			continue
		}
		if *golden.Update {
			if err := os.WriteFile(filepath.Join(root, f), []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s: a generated results block differs from docs/results.json; regenerate: go test -run TestDocsResultBlocks ./cmd/conspirator -update", f)
	}
	if blocks == 0 {
		t.Error("no generated results block in the README or docs/: the README's reproduction table must be one")
	}
}

// compareReports checks every figure and verdict of got's rows against
// want's rows of the same name; it returns the rows compared.
func compareReports(t *testing.T, got *reproduce.Report, want func(name string) (*reproduce.Result, string)) int {
	t.Helper()
	n := 0
	for _, g := range got.Rows {
		switch g.Status {
		case reproduce.StatusSkipped:
			// Skipped only where ../shared is absent (a user's clone); CI
			// has it, so a skip there is a failure, not a pass.
			if os.Getenv("CI") != "" {
				t.Errorf("%s skipped in CI: %s", g.Name, g.Message)
			} else {
				t.Logf("%s SKIPPED, its documented figures unchecked: %s", g.Name, g.Message)
			}
			continue
		case reproduce.StatusFailed:
			t.Errorf("%s failed: %s", g.Name, g.Message)
			continue
		}
		w, src := want(g.Name)
		if w == nil {
			t.Errorf("%s: not in %s (regenerate it)", g.Name, src)
			continue
		}
		n++
		if g.Verdict != w.Verdict {
			t.Errorf("%s: verdict %q, %s says %q", g.Name, g.Verdict, src, w.Verdict)
		}
		for _, wf := range w.Figures {
			if g.Figure(wf.Key) == nil {
				t.Errorf("%s: %s documents figure %s, which the code no longer gives", g.Name, src, wf.Key)
			}
		}
		for _, f := range g.Figures {
			wf := w.Figure(f.Key)
			if wf == nil {
				t.Errorf("%s: figure %s is not in %s", g.Name, f.Key, src)
				continue
			}
			if f.WallClock {
				continue
			}
			if d := math.Abs(f.Value - wf.Value); d > wf.Tolerance()+1e-12 {
				t.Errorf("%s: %s is %s, %s documents %s (more than %g apart): a documented figure drifted from the code", g.Name, f.Key, f.Text(), src, wf.Text(), wf.Tolerance())
			}
			if (f.CI95 == nil) != (wf.CI95 == nil) || (f.CI95 != nil && math.Abs(*f.CI95-*wf.CI95) > wf.Tolerance()+1e-12) {
				t.Errorf("%s: %s's CI is %s, %s documents %s", g.Name, f.Key, f.Text(), src, wf.Text())
			}
		}
	}
	return n
}

func byName(rep *reproduce.Report) map[string]*reproduce.Result {
	m := map[string]*reproduce.Result{}
	for i := range rep.Rows {
		m[rep.Rows[i].Name] = &rep.Rows[i]
	}
	return m
}

// TestDocsFiguresMatchCode runs the quick reproduction (about a quarter
// of a minute on two cores) and holds every documented figure to it.
func TestDocsFiguresMatchCode(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the quick reproduction runs every published row")
	}
	root := repoRoot(t)
	t.Chdir(root) // the cluster rows read ../shared from the repository root, as a user runs them
	full := byName(readReport(t, filepath.Join(root, "docs", "results.json")))
	quickPath := filepath.Join(root, "docs", "results-quick.json")
	got, err := reproduce.Run(&reproduce.Runner{}, reproduce.Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got.Rows {
		// A quick row that reduces nothing is the full row: the figures the
		// docs quote are checked here directly.
		if r.Reduced == "" && full[r.Name] == nil {
			t.Errorf("%s: not in docs/results.json", r.Name)
		}
	}
	if *golden.Update {
		js, err := reports.ReproduceJSONBytes(got)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(quickPath, js, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	quick := byName(readReport(t, quickPath))
	n := compareReports(t, got, func(name string) (*reproduce.Result, string) {
		if row, _ := reproduce.Find(name); row.Quick == "" {
			return full[name], "docs/results.json"
		}
		return quick[name], "docs/results-quick.json"
	})
	t.Logf("%d rows compared with the documented figures", n)
}

// TestEveryRowInTheREADME: the README's table names every row once.
func TestEveryRowInTheREADME(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, m := range blockRE.FindAllStringSubmatch(string(b), -1) {
		if m[1] == "table" {
			named = append(named, strings.Split(m[2], ",")...)
		}
	}
	for _, n := range reproduce.Names() {
		if c := strings.Count(","+strings.Join(named, ",")+",", ","+n+","); c != 1 {
			t.Errorf("README.md's reproduction table names row %s %d times, want once", n, c)
		}
	}
}

// slug is GitHub's anchor for a heading: lower case, spaces to hyphens,
// every character but letters, digits, hyphens and underscores dropped.
func slug(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	var b strings.Builder
	for _, r := range h {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var (
	headingRE = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	linkRE    = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	fenceRE   = regexp.MustCompile("^\\s*(```|~~~)")
	anchorRE  = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)
)

// anchors returns the anchors a Markdown file defines: its headings'
// slugs (repeats numbered -1, -2 as GitHub does) and <a name> tags.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, line := range strings.Split(text, "\n") {
		if fenceRE.MatchString(line) {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		for _, m := range anchorRE.FindAllStringSubmatch(line, -1) {
			out[m[1]] = true
		}
		m := headingRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		// Inline code and links read as their text.
		h := regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(m[1], "$1")
		s := slug(h)
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// proseLines returns the lines of text outside fenced code blocks and
// inline code spans, with their line numbers.
func proseLines(text string) []struct {
	n    int
	line string
} {
	var out []struct {
		n    int
		line string
	}
	inFence := false
	code := regexp.MustCompile("`[^`]*`")
	for i, line := range strings.Split(text, "\n") {
		if fenceRE.MatchString(line) {
			inFence = !inFence
			continue
		}
		if !inFence {
			out = append(out, struct {
				n    int
				line string
			}{i + 1, code.ReplaceAllString(line, "")})
		}
	}
	return out
}

func TestDocsLinks(t *testing.T) {
	root := repoRoot(t)
	cache := map[string]map[string]bool{}
	anchorsOf := func(p string) (map[string]bool, error) {
		if a, ok := cache[p]; ok {
			return a, nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		cache[p] = anchors(string(b))
		return cache[p], nil
	}
	links := 0
	for _, f := range docFiles(t, root) {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, pl := range proseLines(string(b)) {
			for _, m := range linkRE.FindAllStringSubmatch(pl.line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				links++
				file, frag, _ := strings.Cut(target, "#")
				p := filepath.Join(root, f)
				if file != "" {
					p = filepath.Join(filepath.Dir(p), file)
				}
				if rel, err := filepath.Rel(root, p); err != nil || strings.HasPrefix(rel, "..") {
					t.Errorf("%s:%d: link %s leaves the repository (link ../shared files as text: they are not in a clone)", f, pl.n, target)
					continue
				}
				st, err := os.Stat(p)
				if err != nil {
					t.Errorf("%s:%d: link %s: no such file", f, pl.n, target)
					continue
				}
				if frag == "" {
					continue
				}
				if st.IsDir() || !strings.HasSuffix(p, ".md") {
					t.Errorf("%s:%d: link %s: an anchor into a file that is not Markdown", f, pl.n, target)
					continue
				}
				a, err := anchorsOf(p)
				if err != nil {
					t.Fatal(err)
				}
				if !a[frag] {
					t.Errorf("%s:%d: link %s: no heading with anchor #%s in %s", f, pl.n, target, frag, file)
				}
			}
		}
	}
	if links == 0 {
		t.Error("no links found: the README links its chapters")
	}
	t.Logf("%d relative links resolved", links)
}

// The classes a code block may be marked with (<!-- docs-test: CLASS -->
// on the line before it). Only quick blocks run here; the others are
// listed by what they need.
var blockClasses = map[string]string{
	"quick":   "runs in this test",
	"data":    "needs ../shared",
	"slow":    "takes more than a few seconds of CPU",
	"gpu":     "needs a GPU, CUDA, PyTorch or RDMA hardware",
	"cluster": "needs Slurm or Kubernetes",
	"build":   "builds or tests the code",
	"output":  "shows output, not commands",
}

type codeBlock struct {
	file, class string
	// command, for an output block, is the command whose output it shows
	// (<!-- docs-test: output COMMAND -->): the test runs it and finds
	// every line of the block in what it prints.
	command string
	line    int
	lines   []string
}

var markRE = regexp.MustCompile(`^<!-- docs-test: ([a-z]+)(?: (.+?))? -->\s*$`)

func codeBlocks(t *testing.T, root string) []codeBlock {
	t.Helper()
	var out []codeBlock
	for _, f := range docFiles(t, root) {
		fh, err := os.Open(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		prev, n := "", 0
		var cur *codeBlock
		for sc.Scan() {
			n++
			line := sc.Text()
			if fenceRE.MatchString(line) {
				if cur == nil {
					cur = &codeBlock{file: f, line: n}
					if m := markRE.FindStringSubmatch(prev); m != nil {
						cur.class, cur.command = m[1], m[2]
					}
				} else {
					out = append(out, *cur)
					cur = nil
				}
			} else if cur != nil {
				cur.lines = append(cur.lines, line)
			}
			prev = line
		}
		fh.Close()
		if cur != nil {
			t.Errorf("%s:%d: a code block is not closed", f, cur.line)
		}
	}
	return out
}

// TestDocsCodeBlocks: every code block says what it needs, and the quick
// ones run, each command exiting 0, each block in a temporary directory of
// its own with the binary on PATH.
func TestDocsCodeBlocks(t *testing.T) {
	root := repoRoot(t)
	blocks := codeBlocks(t, root)
	var quick []codeBlock
	count := map[string]int{}
	for _, b := range blocks {
		if _, ok := blockClasses[b.class]; !ok {
			t.Errorf("%s:%d: a code block without a <!-- docs-test: CLASS --> line before it (classes: quick, data, slow, gpu, cluster, build, output)", b.file, b.line)
			continue
		}
		count[b.class]++
		if b.command != "" && b.class != "output" {
			t.Errorf("%s:%d: only an output block names a command in its marker", b.file, b.line)
		}
		if b.class == "quick" || b.command != "" {
			quick = append(quick, b)
		}
	}
	t.Logf("code blocks by class: %v", count)
	for _, b := range blocks {
		if b.class != "quick" && b.class != "output" && len(b.lines) > 0 {
			t.Logf("listed, %s (%s): %s:%d: %s", b.class, blockClasses[b.class], b.file, b.line, strings.TrimSpace(b.lines[0]))
		}
	}
	if testing.Short() || len(quick) == 0 {
		return
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the quick blocks")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "conspirator"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, b := range quick {
		if b.class == "output" {
			checkOutputBlock(t, bin, b)
			continue
		}
		// A block is a sequence: its commands run in order in one
		// directory, so a later one may read what an earlier one wrote.
		dir := t.TempDir()
		for i, line := range b.lines {
			cmd := strings.TrimSpace(line)
			if cmd == "" || strings.HasPrefix(cmd, "#") {
				continue
			}
			if strings.ContainsAny(stripComment(cmd), "|><&;`$") {
				t.Errorf("%s:%d: a quick block runs plain commands only (no pipes, redirections or substitutions): %s", b.file, b.line+1+i, cmd)
				continue
			}
			if !strings.HasPrefix(cmd, "conspirator ") && cmd != "conspirator" {
				t.Errorf("%s:%d: a quick block's command starts with conspirator: %s", b.file, b.line+1+i, cmd)
				continue
			}
			c := exec.Command("bash", "-c", cmd)
			c.Dir = dir
			c.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "CONSPIRATOR_JOBS=2")
			if out, err := c.CombinedOutput(); err != nil {
				t.Errorf("%s:%d: %s: %v\n%s", b.file, b.line+1+i, cmd, err, tail(out))
			}
		}
	}
}

// checkOutputBlock runs an output block's command in a temporary
// directory and finds every line of the block, in order, in what it
// printed (stdout and stderr): an example of output that no longer
// matches the code fails. Lines of "..." stand for lines left out.
func checkOutputBlock(t *testing.T, bin string, b codeBlock) {
	t.Helper()
	args := splitShell(b.command)
	if len(args) == 0 || args[0] != "conspirator" {
		t.Errorf("%s:%d: an output block's command starts with conspirator: %s", b.file, b.line, b.command)
		return
	}
	c := exec.Command(filepath.Join(bin, "conspirator"), args[1:]...)
	c.Dir = t.TempDir()
	c.Env = append(os.Environ(), "CONSPIRATOR_JOBS=2")
	out, err := c.CombinedOutput()
	if err != nil {
		t.Errorf("%s:%d: %s: %v\n%s", b.file, b.line, b.command, err, tail(out))
		return
	}
	got := strings.Split(string(out), "\n")
	at := 0
	for i, want := range b.lines {
		w := strings.TrimRight(want, " ")
		if strings.TrimSpace(w) == "" || strings.TrimSpace(w) == "..." {
			continue
		}
		found := false
		for ; at < len(got); at++ {
			if strings.TrimRight(got[at], " ") == w {
				found, at = true, at+1
				break
			}
		}
		if !found {
			t.Errorf("%s:%d: the output of %s no longer holds this line (or not in this order):\n%s", b.file, b.line+1+i, b.command, w)
			return
		}
	}
}

// stripComment drops a trailing shell comment (" # ...").
func stripComment(s string) string {
	if i := strings.Index(s, " #"); i >= 0 {
		return s[:i]
	}
	return s
}

func tail(b []byte) string {
	s := string(b)
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	return s
}

// TestFrontDoor: the README stays a front door (issue 53): at most 250
// lines, and no table cell in it or in a chapter longer than 200
// characters. Exempt: the decision records (history, kept as written) and
// scenario-keys.md, a generated reference whose cells hold each default's
// whole source (it says so at its top).
func TestFrontDoor(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 250 {
		t.Errorf("README.md has %d lines, more than 250: move detail into a chapter of docs/", n)
	}
	for _, f := range docFiles(t, root) {
		if strings.HasPrefix(f, filepath.Join("docs", "decisions")) || f == filepath.Join("docs", "scenario-keys.md") {
			continue
		}
		text, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, pl := range proseLines(string(text)) {
			line := strings.TrimSpace(pl.line)
			if !strings.HasPrefix(line, "|") {
				continue
			}
			for _, c := range strings.Split(line, "|") {
				if n := len([]rune(strings.TrimSpace(c))); n > 200 {
					t.Errorf("%s:%d: a table cell of %d characters (at most 200): %.60s...", f, pl.n, n, strings.TrimSpace(c))
				}
			}
		}
	}
}

// `reproduce --only` runs the rows named and writes both files; the JSON
// is the same bytes on a second run but for the wall times.
func TestReproduceOnly(t *testing.T) {
	dir := t.TempDir()
	var first []byte
	for i := 0; i < 2; i++ {
		var out, errb strings.Builder
		code := run([]string{"reproduce", "--only", "r4-cost", "-o", filepath.Join(dir, "rep")}, &out, &errb, nil)
		if code != exitOK {
			t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
		}
		if !strings.Contains(out.String(), "r4-cost") || !strings.Contains(out.String(), "+16.9% / +44.0%") || !strings.Contains(errb.String(), "1/1 rows done") {
			t.Errorf("output: %s\nstderr: %s", out.String(), errb.String())
		}
		js, err := os.ReadFile(filepath.Join(dir, "rep", reports.ReproduceJSON))
		if err != nil {
			t.Fatal(err)
		}
		md, err := os.ReadFile(filepath.Join(dir, "rep", reports.ReproduceMD))
		if err != nil || !strings.Contains(string(md), "| `r4-cost` |") {
			t.Fatalf("reproduce.md: %v\n%s", err, md)
		}
		js = regexp.MustCompile(`"wall_s": [0-9.]+`).ReplaceAll(js, []byte(`"wall_s": 0`))
		if i == 0 {
			first = js
		} else if string(js) != string(first) {
			t.Errorf("two runs differ beyond their wall times:\n%s\n%s", first, js)
		}
	}
}

// splitShell splits a command line as a POSIX shell would for the forms
// the rows use: words separated by spaces, single quotes kept together.
func splitShell(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, inWord := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

// Every command a row shows runs: a run's settings load and validate
// (its data found where ../shared is), a sweep runs to its end.
func TestRowCommandsRun(t *testing.T) {
	root := repoRoot(t)
	t.Chdir(root)
	dir := t.TempDir()
	for _, row := range reproduce.Rows {
		for i, c := range row.Commands {
			args := splitShell(c)
			if len(args) < 3 || args[0] != "conspirator" {
				t.Errorf("%s: %q is not a conspirator command", row.Name, c)
				continue
			}
			args = args[1:]
			switch args[0] {
			case "run":
				args[0] = "validate"
			case "sweep":
				if testing.Short() {
					continue
				}
				args = append(args, "-o", filepath.Join(dir, fmt.Sprintf("%s-%d", row.Name, i)))
			case "llm":
				// llm capacity: the row itself runs the same search
				// (sim/llmcap) and TestLLMCapacitySection the command's
				// flags; here its scenario must load and validate.
				if len(args) != 3 || args[1] != "capacity" {
					t.Errorf("%s: %q is not `llm capacity SCENARIO`", row.Name, c)
					continue
				}
				args = []string{"validate", args[2]}
			default:
				t.Errorf("%s: %q runs neither run, sweep nor llm capacity", row.Name, c)
				continue
			}
			var out, errb strings.Builder
			if code := run(args, &out, &errb, nil); code != exitOK {
				if strings.Contains(errb.String(), "not found") && strings.Contains(errb.String(), "shared") {
					t.Logf("%s: %s: its data is absent here", row.Name, c)
					continue
				}
				t.Errorf("%s: %s: exit %d\n%s", row.Name, c, code, tail([]byte(errb.String())))
			}
		}
	}
}
