package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/conspirator-sim/conspirator/internal/atomicfs"
)

// Merge copies the complete points of shard directories into dst, so that
// dst becomes what one unsharded run would have written. Every shard must
// hold the same sweep (same sweep.json); dst may be new, empty, or hold the
// same sweep already. A point present in two shards must have identical
// files (the run is deterministic; a difference means the shards ran
// different code). Points missing from every shard are reported as an error
// after the others are merged; `sweep --resume` into dst runs them.
func Merge(dst string, shardDirs ...string) error {
	if len(shardDirs) == 0 {
		return errors.New("sweep merge: no shard directories given")
	}
	var spec Spec
	var first string
	for i, d := range shardDirs {
		s, err := ReadSpec(d)
		if err != nil {
			return fmt.Errorf("sweep merge: %w", err)
		}
		if i == 0 {
			spec, first = s, d
			continue
		}
		if diff := spec.diff(s); diff != "" {
			return fmt.Errorf("sweep merge: %s and %s hold different sweeps: %s", first, d, diff)
		}
	}
	fsys := atomicfs.OS
	if err := prepareDir(fsys, dst, spec, true); err != nil {
		return fmt.Errorf("sweep merge: %w", err)
	}
	pointsDir := filepath.Join(dst, "points")
	var missing []string
	for _, p := range spec.Points {
		var files map[string][]byte
		var from string
		for _, d := range shardDirs {
			ok, err := IsComplete(d, p)
			if err != nil {
				return fmt.Errorf("sweep merge: %w", err)
			}
			if !ok {
				continue
			}
			f, err := ReadPointFiles(PointDir(d, p))
			if err != nil {
				return fmt.Errorf("sweep merge: %w", err)
			}
			if files != nil && !bytes.Equal(manifest(files), manifest(f)) {
				return fmt.Errorf("sweep merge: point %s differs between %s and %s: the shards did not run the same code or inputs", p.ID, from, d)
			}
			files, from = f, d
		}
		if files == nil {
			if ok, _ := IsComplete(dst, p); !ok {
				missing = append(missing, p.ID)
			}
			continue
		}
		if ok, err := IsComplete(dst, p); err != nil {
			return fmt.Errorf("sweep merge: %w", err)
		} else if ok {
			have, err := ReadPointFiles(PointDir(dst, p))
			if err != nil {
				return fmt.Errorf("sweep merge: %w", err)
			}
			if !bytes.Equal(manifest(have), manifest(files)) {
				return fmt.Errorf("sweep merge: point %s in %s differs from the one in %s", p.ID, dst, from)
			}
			continue
		}
		if err := os.RemoveAll(filepath.Join(pointsDir, p.ID)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("sweep merge: %w", err)
		}
		if err := writePointDir(fsys, pointsDir, p.ID, files); err != nil {
			return fmt.Errorf("sweep merge: %w", err)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("sweep merge: %d of %d points are in no shard (%s): rerun `sweep --resume` into %s to run them",
			len(missing), len(spec.Points), firstFew(missing), dst)
	}
	return nil
}
