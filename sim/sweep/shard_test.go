package sweep

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestShardFromEnv(t *testing.T) {
	cases := []struct {
		name    string
		env     []string
		i, n    int
		ok      bool
		wantErr string
	}{
		{"none", []string{"HOME=/root"}, 0, 0, false, ""},
		{"slurm 0-based", []string{"SLURM_ARRAY_TASK_ID=2", "SLURM_ARRAY_TASK_COUNT=4"}, 2, 4, true, ""},
		// --array=1-8: task 1 is shard 0, task 8 is shard 7.
		{"slurm 1-based", []string{"SLURM_ARRAY_TASK_ID=8", "SLURM_ARRAY_TASK_COUNT=8", "SLURM_ARRAY_TASK_MIN=1"}, 7, 8, true, ""},
		// --array=0-14:2 has 8 tasks 0,2,...,14; task 6 is shard 3.
		{"slurm step", []string{"SLURM_ARRAY_TASK_ID=6", "SLURM_ARRAY_TASK_COUNT=8", "SLURM_ARRAY_TASK_MIN=0", "SLURM_ARRAY_TASK_STEP=2"}, 3, 8, true, ""},
		{"slurm off-step", []string{"SLURM_ARRAY_TASK_ID=5", "SLURM_ARRAY_TASK_COUNT=8", "SLURM_ARRAY_TASK_STEP=2"}, 0, 0, false, "SLURM_ARRAY_TASK_ID=5 is not in the array"},
		{"slurm no count", []string{"SLURM_ARRAY_TASK_ID=1"}, 0, 0, false, "SLURM_ARRAY_TASK_COUNT is not set"},
		{"slurm not a number", []string{"SLURM_ARRAY_TASK_ID=one", "SLURM_ARRAY_TASK_COUNT=2"}, 0, 0, false, `SLURM_ARRAY_TASK_ID="one" is not an integer`},
		{"slurm beyond count", []string{"SLURM_ARRAY_TASK_ID=4", "SLURM_ARRAY_TASK_COUNT=4"}, 0, 0, false, "task 4 of SLURM_ARRAY_TASK_COUNT=4"},
		{"k8s", []string{"JOB_COMPLETION_INDEX=0", "CONSPIRATOR_SHARDS=3"}, 0, 3, true, ""},
		{"k8s no count", []string{"JOB_COMPLETION_INDEX=2"}, 0, 0, false, "set CONSPIRATOR_SHARDS to the Job's .spec.completions"},
		{"k8s out of range", []string{"JOB_COMPLETION_INDEX=3", "CONSPIRATOR_SHARDS=3"}, 0, 0, false, "outside 0..2"},
		{"k8s zero count", []string{"JOB_COMPLETION_INDEX=0", "CONSPIRATOR_SHARDS=0"}, 0, 0, false, "at least 1"},
		{"both", []string{"JOB_COMPLETION_INDEX=0", "SLURM_ARRAY_TASK_ID=0"}, 0, 0, false, "both"},
	}
	for _, c := range cases {
		i, n, ok, err := ShardFromEnv(c.env)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: err = %v, want %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil || i != c.i || n != c.n || ok != c.ok {
			t.Errorf("%s: (%d, %d, %v, %v), want (%d, %d, %v)", c.name, i, n, ok, err, c.i, c.n, c.ok)
		}
	}
}

// Three shards in three directories hold disjoint points whose union is
// every point (index % 3), and Merge makes a tree byte-identical to the
// unsharded run.
func TestShardsMergeEqualsUnsharded(t *testing.T) {
	pts := testPoints()
	ref := filepath.Join(t.TempDir(), "ref")
	if _, err := Run(context.Background(), pts, Options{Dir: ref, Jobs: 2}, fakeRun); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	seen := map[string]int{}
	for i := 0; i < 3; i++ {
		d := filepath.Join(t.TempDir(), "shard")
		sum, err := Run(context.Background(), pts, Options{Dir: d, Jobs: 2, Shard: i, Shards: 3}, fakeRun)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Total != 6 {
			t.Errorf("shard %d has %d points, want 18/3 = 6", i, sum.Total)
		}
		for _, id := range completeIDs(t, d) {
			seen[id]++
		}
		dirs = append(dirs, d)
	}
	for _, p := range pts {
		if seen[p.ID] != 1 {
			t.Errorf("point %s is in %d shards, want 1", p.ID, seen[p.ID])
		}
	}
	merged := filepath.Join(t.TempDir(), "merged")
	if err := Merge(merged, dirs...); err != nil {
		t.Fatal(err)
	}
	sameTree(t, ref, merged)
	// Merging again (idempotent) and merging an overlapping full copy agree.
	if err := Merge(merged, append(dirs, ref)...); err != nil {
		t.Fatal(err)
	}
	sameTree(t, ref, merged)

	// Missing shard: the error lists what is missing and how to fill it in;
	// resume into the merged dir then completes it.
	partial := filepath.Join(t.TempDir(), "partial")
	err := Merge(partial, dirs[0], dirs[2])
	if err == nil || !strings.Contains(err.Error(), "6 of 18 points are in no shard") || !strings.Contains(err.Error(), "--resume") {
		t.Fatalf("merge with a shard missing: %v", err)
	}
	if _, err := Run(context.Background(), pts, Options{Dir: partial, Jobs: 2, Resume: true}, fakeRun); err != nil {
		t.Fatal(err)
	}
	sameTree(t, ref, partial)

	// A point whose bytes differ between shards is refused.
	os.WriteFile(filepath.Join(ref, "points", pts[0].ID, "result.json"), []byte("{}"), 0o644)
	if err := Merge(filepath.Join(t.TempDir(), "m"), dirs[0], ref); err == nil || !strings.Contains(err.Error(), "manifest") {
		t.Errorf("tampered point: %v", err)
	}
	// Shards of different sweeps are refused, naming the difference.
	other := filepath.Join(t.TempDir(), "other")
	Run(context.Background(), Expand([]Param{{Key: "path", Values: []string{"tcp"}}}, []uint64{1}), Options{Dir: other}, fakeRun)
	if err := Merge(filepath.Join(t.TempDir(), "m"), dirs[0], other); err == nil || !strings.Contains(err.Error(), "swept parameters differ") {
		t.Errorf("different sweeps: %v", err)
	}
	if err := Merge(filepath.Join(t.TempDir(), "m"), t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a sweep directory") {
		t.Errorf("not a sweep: %v", err)
	}
}

// Shards sharing one directory (a shared file system, no merge step) run
// concurrently and leave the same tree as one unsharded run.
func TestShardsShareDirectory(t *testing.T) {
	pts := testPoints()
	ref, shared := t.TempDir(), filepath.Join(t.TempDir(), "shared")
	Run(context.Background(), pts, Options{Dir: ref, Jobs: 1}, fakeRun)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = Run(context.Background(), pts, Options{Dir: shared, Jobs: 1, Shard: i, Shards: 4}, fakeRun)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("shard %d: %v", i, err)
		}
	}
	sameTree(t, ref, shared)
}
