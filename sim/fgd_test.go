package sim_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/conspirator-sim/conspirator/internal/shareddata"
	"github.com/conspirator-sim/conspirator/sim"
	"github.com/conspirator-sim/conspirator/sim/reproduce"
)

// The allocation experiment against its authors' simulator on the same
// trace: every policy within 1 percentage point of their mean at 100% and
// at 130% arrived, and the policies in the same order. It reads the
// pinned summary.json of paper/fgd-allocation, which
// TestBuiltinScenariosGolden proves is what `conspirator run
// paper/fgd-allocation` writes (so this check costs no second run and
// holds under -short too).
func TestFGDAllocationMatchesAuthors(t *testing.T) {
	root, err := shareddata.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "sim", "testdata", "golden", "paper-fgd-allocation", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum sim.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Allocation) < len(reproduce.AuthorsFGD) {
		t.Fatalf("%d policies in the summary, want the authors' %d first", len(sum.Allocation), len(reproduce.AuthorsFGD))
	}
	prev100, prev130 := 0.0, 0.0
	for i, a := range reproduce.AuthorsFGD {
		got := sum.Allocation[i]
		if got.Name != a.Policy {
			t.Fatalf("policy %d is %s, want %s", i, got.Name, a.Policy)
		}
		at := map[int]float64{}
		for _, m := range got.At {
			at[m.ArrivedPct] = m.Mean
			if m.Seeds != 10 {
				t.Errorf("%s at %d%%: %d seeds, want the authors' 10", a.Policy, m.ArrivedPct, m.Seeds)
			}
		}
		t.Logf("%-15s 100%%: %.2f (authors %.2f)  130%%: %.2f (authors %.2f)", a.Policy, at[100], a.At100, at[130], a.At130)
		if math.Abs(at[100]-a.At100) > 1 || math.Abs(at[130]-a.At130) > 1 {
			t.Errorf("%s: %.2f / %.2f at 100%% / 130%%; the authors' %.2f / %.2f are more than 1 point away", a.Policy, at[100], at[130], a.At100, a.At130)
		}
		// The authors' order is strictly increasing at both points.
		if at[100] <= prev100 || at[130] <= prev130 {
			t.Errorf("%s does not rank above the previous policy as in the authors' results", a.Policy)
		}
		prev100, prev130 = at[100], at[130]
	}
}
