package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/conspirator-sim/conspirator/sim/reproduce"
)

// Files written by `conspirator reproduce`.
const (
	ReproduceJSON = "reproduce.json"
	ReproduceMD   = "reproduce.md"
)

// ReproduceJSONBytes is reproduce.json: the report, indented, with a
// final newline.
func ReproduceJSONBytes(rep *reproduce.Report) ([]byte, error) {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// cell makes text safe inside a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(s)
}

// oursCell is a row's figures as a table prints them, or why it has none.
func oursCell(r reproduce.Result) string {
	switch r.Status {
	case reproduce.StatusRan:
		return r.Ours
	case reproduce.StatusSkipped:
		return "skipped: data missing"
	default:
		return "failed"
	}
}

func verdictCell(r reproduce.Result) string {
	if r.Status != reproduce.StatusRan {
		return r.Status
	}
	return "**" + r.Verdict + "**"
}

// seedsOf is the seeds behind a row's first figure that has a CI.
func seedsOf(r reproduce.Result) int {
	n := 0
	for _, f := range r.Figures {
		if f.Seeds > n {
			n = f.Seeds
		}
	}
	return n
}

// ReproduceMarkdown is reproduce.md: every row with its claim, source,
// published figure, ours, verdict, command and wall time, then the notes
// (what each verdict rests on, what a quick run reduced, why a row was
// skipped or failed).
func ReproduceMarkdown(rep *reproduce.Report) []byte {
	var b bytes.Buffer
	kind := "full"
	if rep.Quick {
		kind = "quick (--quick: some rows with fewer seeds, said per row)"
	}
	fmt.Fprintf(&b, "# Published results, reproduced\n\n")
	fmt.Fprintf(&b, "Written by `conspirator reproduce`%s, conspirator %s%s. Run: %s.\n", map[bool]string{true: " --quick", false: ""}[rep.Quick], rep.Version, commitText(rep.Commit), kind)
	fmt.Fprintf(&b, "Ours: mean over the seeds named, ± the half-width of its 95%% confidence interval (Student t over seeds); one seed: no interval.\n")
	fmt.Fprintf(&b, "Every figure but the wall times and r7-solve-time's decision times is deterministic: the same binary gives the same table.\n\n")
	b.WriteString("| row | claim | source | published | ours | seeds | verdict | wall |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rep.Rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %d | %s | %s |\n", r.Name, cell(r.Claim), cell(r.Source), cell(r.Paper), cell(oursCell(r)), seedsOf(r), verdictCell(r), wallText(r))
	}
	b.WriteString("\n## Rows\n")
	for _, r := range rep.Rows {
		fmt.Fprintf(&b, "\n### %s\n\n", r.Name)
		for _, c := range r.Commands {
			fmt.Fprintf(&b, "- Command: `%s`\n", c)
		}
		if r.Note != "" {
			fmt.Fprintf(&b, "- Verdict rests on: %s\n", r.Note)
		}
		if r.Reduced != "" && r.Status == reproduce.StatusRan {
			fmt.Fprintf(&b, "- Reduced in this quick run: %s\n", r.Reduced)
		}
		if r.Message != "" {
			fmt.Fprintf(&b, "- %s: %s\n", r.Status, r.Message)
		}
		fmt.Fprintf(&b, "- Discussed in: docs/%s\n", r.Chapter)
		if len(r.Figures) > 0 {
			b.WriteString("\n")
			b.WriteString(ReproduceFigures(r))
		}
	}
	return b.Bytes()
}

// wallText is a row's wall time, or the row whose runs it reused.
func wallText(r reproduce.Result) string {
	if r.SharedWith != "" {
		return "runs of " + r.SharedWith
	}
	return fmt.Sprintf("%.1f s", r.WallS)
}

func commitText(c string) string {
	if c == "" {
		return " (commit unknown: built without VCS info)"
	}
	return " (commit " + c + ")"
}

// ReproduceFigures is every figure of a row as a table: what the docs'
// `reproduce:figures ROW` blocks hold. Where figures carry a published
// value (a published table reproduced row by row), the table sets it and
// the difference beside ours.
func ReproduceFigures(r reproduce.Result) string {
	published := false
	for _, f := range r.Figures {
		published = published || f.Published != nil
	}
	var b strings.Builder
	if published {
		b.WriteString("| figure | ours | published | difference | seeds |\n|---|---|---|---|---|\n")
	} else {
		b.WriteString("| figure | ours | seeds |\n|---|---|---|\n")
	}
	for _, f := range r.Figures {
		t := f.Text()
		if f.WallClock {
			t += " (wall clock)"
		}
		if !published {
			fmt.Fprintf(&b, "| %s | %s | %d |\n", cell(f.Label), cell(t), f.Seeds)
			continue
		}
		pub, diff := "-", "-"
		if f.Published != nil {
			p := reproduce.Figure{Value: *f.Published, Unit: f.Unit, Decimals: f.Decimals}
			d := reproduce.Figure{Value: f.Value - *f.Published, Decimals: f.Decimals}
			pub, diff = p.Text(), d.Text()
			if d.Value > 0 {
				diff = "+" + diff
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d |\n", cell(f.Label), cell(t), pub, diff, f.Seeds)
	}
	return b.String()
}

// ReproduceTable is the table of the named rows that the docs'
// `reproduce:table ROWS` blocks hold: claim, published, ours and the
// verdict. With chapters set (the README's table) a last column links each
// row to its chapter, its path prefixed by linkPrefix; without (a
// chapter's table) the command of each row follows the table as a list,
// where a long command does not squeeze the columns.
func ReproduceTable(rep *reproduce.Report, names []string, chapters bool, linkPrefix string) (string, error) {
	byName := map[string]reproduce.Result{}
	for _, r := range rep.Rows {
		byName[r.Name] = r
	}
	var b, cmds strings.Builder
	if chapters {
		b.WriteString("| result | published | ours (mean ± 95% CI) | verdict | more |\n|---|---|---|---|---|\n")
	} else {
		b.WriteString("| result | published | ours (mean ± 95% CI) | verdict |\n|---|---|---|---|\n")
	}
	for _, n := range names {
		r, ok := byName[n]
		if !ok {
			return "", fmt.Errorf("no row %q in the results", n)
		}
		if chapters {
			title := strings.TrimSuffix(r.Chapter, ".md")
			fmt.Fprintf(&b, "| %s | %s | %s | %s | [%s](%s%s) |\n", cell(r.Claim), cell(r.Paper), cell(oursCell(r)), verdictCell(r), title, linkPrefix, r.Chapter)
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", cell(r.Claim), cell(r.Paper), cell(oursCell(r)), verdictCell(r))
		for _, c := range r.Commands {
			fmt.Fprintf(&cmds, "- %s: `%s`\n", r.Name, c)
		}
	}
	if cmds.Len() > 0 {
		b.WriteString("\nThe runs behind each row (`conspirator reproduce --only NAME` runs them as the table did):\n\n")
		b.WriteString(cmds.String())
	}
	return b.String(), nil
}
