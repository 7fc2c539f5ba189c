package batch

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// Names of the files an emitter writes into the sweep directory.
const (
	ScenarioFile = "scenario.yaml"
	StateFile    = "batch.json"
	SlurmFile    = "sweep.sbatch"
	K8sFile      = "k8s-job.yaml"
	ReadmeFile   = "README.md"
	LogDir       = "logs"
)

// MaxDefaultShards caps the default shard count (one task per point):
// Slurm's default MaxArraySize is 1001, so array indices 0..1000 are
// accepted everywhere without asking an administrator.
const MaxDefaultShards = 1000

// Scheduler names a batch system an emitter writes files for.
type Scheduler string

// The schedulers --emit accepts.
const (
	Slurm Scheduler = "slurm"
	K8s   Scheduler = "k8s"
)

// ParseScheduler reads an --emit value.
func ParseScheduler(s string) (Scheduler, error) {
	switch Scheduler(s) {
	case Slurm, K8s:
		return Scheduler(s), nil
	}
	return "", fmt.Errorf("--emit %q: unknown scheduler; use slurm (a Slurm job array) or k8s (a Kubernetes Indexed Job)", s)
}

// DefaultK8sBinary is where the Kubernetes manifest expects the binary
// inside the container image.
const DefaultK8sBinary = "/usr/local/bin/conspirator"

// DefaultImage is the placeholder image of the Kubernetes manifest: there is
// no published image, so the user builds one holding the binary.
const DefaultImage = "REPLACE-ME/conspirator:latest"

// K8sMount is where the Kubernetes manifest mounts the shared sweep
// directory in every pod.
const K8sMount = "/sweep"

// Job is one sweep to run as a batch array. Each task runs
//
//	Binary sweep scenario.yaml SweepArgs... -j Jobs --resume --no-report --shard I/Shards -o Dir
//
// with scenario.yaml read relative to Dir (its working directory), so the
// sweep's identity (sweep.json) does not depend on where Dir is mounted.
type Job struct {
	// Name is the scenario's name, used for the job name.
	Name string
	// Binary is the absolute path of the conspirator binary on the nodes
	// (inside the image for Kubernetes).
	Binary string
	// Dir is the absolute sweep directory on the shared file system (for
	// Kubernetes, the directory the user copies onto the shared volume).
	Dir string
	// SweepArgs are the sweep flags that define the points: --param,
	// --seeds, --set, --seed, in the order given by the user.
	SweepArgs []string
	// Shards is the number of array tasks; task I runs the points with
	// index % Shards == I.
	Shards int
	// Throttle is the most tasks running at once; 0 means no limit.
	Throttle int
	// Jobs is the number of points each task runs at once (-j), and the
	// CPUs it asks for.
	Jobs int
	// Points is the number of points of the sweep (for the README).
	Points int
	// Version is the conspirator version that wrote the files.
	Version string
	// Image is the container image of the Kubernetes manifest.
	Image string
	// Command is the command line that emitted the files, shown in the
	// README as the way to list unfinished tasks.
	Command []string
	// Inputs are the data files the points read (traces, node lists, job
	// lists), resolved where the tasks run (for the README).
	Inputs []Input
}

// Input is a data file of the sweep: the key that names it, its absolute
// path where the emit ran, and where the tasks read it (an absolute path on the
// shared file system for Slurm; a copy under InputsDir, read at
// K8sMount/InputsDir/..., for Kubernetes).
type Input struct {
	Key, Given, Task string
}

// InputsDir is where Kubernetes sweeps keep copies of their data files,
// inside the sweep directory (on the shared volume with it).
const InputsDir = "inputs"

// unsafeSlurmPath matches what an #SBATCH line cannot carry: it is not
// parsed by a shell (no quoting), and '%' starts a file-name pattern.
var unsafeSlurmPath = regexp.MustCompile(`[\s%"'\\$` + "`" + `]`)

// Validate says what is wrong with j for scheduler s, naming the flag.
func (j Job) Validate(s Scheduler) error {
	switch {
	case j.Shards < 1:
		return fmt.Errorf("--shards %d: the number of array tasks must be at least 1", j.Shards)
	case j.Points > 0 && j.Shards > j.Points:
		return fmt.Errorf("--shards %d: the sweep has only %d points, so %d tasks would have nothing to do; use --shards %d or fewer", j.Shards, j.Points, j.Shards-j.Points, j.Points)
	case j.Throttle < 0:
		return fmt.Errorf("--throttle %d: must be 0 (no limit) or the most tasks running at once", j.Throttle)
	case j.Jobs < 1:
		return fmt.Errorf("-j %d: each task needs at least 1 worker", j.Jobs)
	case !filepath.IsAbs(j.Dir):
		return fmt.Errorf("sweep directory %q must be an absolute path", j.Dir)
	case !filepath.IsAbs(j.Binary):
		return fmt.Errorf("--binary %q must be an absolute path (the nodes run it from any directory)", j.Binary)
	}
	if s == Slurm {
		for _, p := range []struct{ what, path string }{{"-o", j.Dir}, {"--binary", j.Binary}} {
			if unsafeSlurmPath.MatchString(p.path) {
				return fmt.Errorf("%s %q: a path in an #SBATCH line cannot hold spaces, quotes, '$', '\\' or '%%'; choose another path", p.what, p.path)
			}
		}
	}
	return nil
}

// throttle is the limit to write: 0 (none) where Throttle is 0 or would
// not hold back any of the Shards tasks.
func (j Job) throttle() int {
	if j.Throttle == 0 || j.Throttle >= j.Shards {
		return 0
	}
	return j.Throttle
}

// jobName is a Slurm job name and a Kubernetes object name: lower-case
// letters, digits and '-', at most 63 characters (RFC 1123 label).
func (j Job) jobName() string {
	var b strings.Builder
	b.WriteString("conspirator-")
	dash := true
	for _, r := range strings.ToLower(j.Name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimRight(b.String(), "-")
	// Kubernetes appends "-<index>-<random>" to pod names; leave room.
	if len(s) > 52 {
		s = strings.TrimRight(s[:52], "-")
	}
	return s
}

// taskArgs is the command a task runs, after the binary: the arguments
// before the --shard value and those after it.
func (j Job) taskArgs(dir string) (before, after []string) {
	before = append([]string{"sweep", ScenarioFile}, j.SweepArgs...)
	before = append(before, "-j", fmt.Sprint(j.Jobs), "--resume", "--no-report", "--shard")
	return before, []string{"-o", dir}
}

// shellQuote quotes s for bash: bare when it holds only characters the
// shell passes through, else in single quotes.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=./,:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}
