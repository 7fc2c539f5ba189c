package batch

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// PodMemory is the memory each pod requests: a point of the built-in
// scenarios peaks at 20-80 MB (paper/gpu-hours, the largest, at 76 MB), a
// data-path run at its validated limit (8 GiB) is the exception to size
// for by editing the manifest.
const PodMemory = "512Mi"

// ExitConfig is the exit code of a configuration error (a bad scenario,
// a missing file): the same on every retry.
const ExitConfig = 2

// TTLAfterFinished is how long a finished Job stays (a week): long enough
// to read its pods' logs, not forever.
const TTLAfterFinished = 7 * 24 * 3600

// ClaimName is the PersistentVolumeClaim the Kubernetes manifest mounts at
// K8sMount: a ReadWriteMany volume holding the sweep directory.
const ClaimName = "conspirator-sweep"

// The manifest's objects, in the field order kubectl prints them; only the
// fields the Job needs.
type (
	k8sJob struct {
		APIVersion string  `yaml:"apiVersion"`
		Kind       string  `yaml:"kind"`
		Metadata   k8sMeta `yaml:"metadata"`
		Spec       k8sSpec `yaml:"spec"`
	}
	k8sMeta struct {
		Name   string            `yaml:"name,omitempty"`
		Labels map[string]string `yaml:"labels,omitempty"`
	}
	k8sSpec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    int    `yaml:"completions"`
		Parallelism    int    `yaml:"parallelism"`
		// BackoffLimitPerIndex retries each index on its own (Kubernetes
		// 1.29+), so one bad shard cannot use up the others' retries.
		BackoffLimitPerIndex int `yaml:"backoffLimitPerIndex"`
		// MaxFailedIndexes fails the whole Job once that many indices have
		// failed: a sweep whose every task fails stops early.
		MaxFailedIndexes int `yaml:"maxFailedIndexes"`
		// PodFailurePolicy fails an index at once when its pod exits 2 (a
		// configuration error, the same on every retry) instead of
		// retrying it.
		PodFailurePolicy k8sFailurePolicy `yaml:"podFailurePolicy"`
		// TTLSecondsAfterFinished removes the finished Job (its results are
		// on the volume).
		TTLSecondsAfterFinished int         `yaml:"ttlSecondsAfterFinished"`
		Template                k8sTemplate `yaml:"template"`
	}
	k8sFailurePolicy struct {
		Rules []k8sFailureRule `yaml:"rules"`
	}
	k8sFailureRule struct {
		Action      string       `yaml:"action"`
		OnExitCodes k8sExitCodes `yaml:"onExitCodes"`
	}
	k8sExitCodes struct {
		ContainerName string `yaml:"containerName"`
		Operator      string `yaml:"operator"`
		Values        []int  `yaml:"values"`
	}
	k8sTemplate struct {
		Metadata k8sMeta    `yaml:"metadata"`
		Spec     k8sPodSpec `yaml:"spec"`
	}
	k8sPodSpec struct {
		RestartPolicy string         `yaml:"restartPolicy"`
		Containers    []k8sContainer `yaml:"containers"`
		Volumes       []k8sVolume    `yaml:"volumes"`
	}
	k8sContainer struct {
		Name         string        `yaml:"name"`
		Image        string        `yaml:"image"`
		WorkingDir   string        `yaml:"workingDir"`
		Command      []string      `yaml:"command"`
		Args         []string      `yaml:"args"`
		Env          []k8sEnv      `yaml:"env"`
		Resources    k8sResources  `yaml:"resources"`
		VolumeMounts []k8sVolMount `yaml:"volumeMounts"`
	}
	k8sEnv struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	}
	k8sResources struct {
		Requests map[string]string `yaml:"requests"`
	}
	k8sVolMount struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	}
	k8sVolume struct {
		Name string   `yaml:"name"`
		PVC  k8sClaim `yaml:"persistentVolumeClaim"`
	}
	k8sClaim struct {
		ClaimName string `yaml:"claimName"`
	}
)

// K8sManifest is a Kubernetes Indexed Job for j: Shards completions, at
// most Throttle pods at once, each pod running shard JOB_COMPLETION_INDEX of
// CONSPIRATOR_SHARDS into the sweep directory mounted at K8sMount from the
// claim ClaimName. It is generated, not tested against a live cluster.
func K8sManifest(j Job) ([]byte, error) {
	if err := j.Validate(K8s); err != nil {
		return nil, err
	}
	image := j.Image
	if image == "" {
		image = DefaultImage
	}
	par := j.throttle()
	if par == 0 {
		par = j.Shards
	}
	// No --shard: the pod's shard is JOB_COMPLETION_INDEX, which the Job
	// controller sets; the count is fixed by the manifest's env.
	before, after := j.taskArgs(K8sMount)
	args := append(append([]string{}, before[:len(before)-1]...), after...)
	cpu := fmt.Sprint(j.Jobs)
	job := k8sJob{
		APIVersion: "batch/v1",
		Kind:       "Job",
		Metadata:   k8sMeta{Name: j.jobName()},
		Spec: k8sSpec{
			CompletionMode: "Indexed",
			Completions:    j.Shards,
			Parallelism:    par,
			// A failed pod is retried, twice per index; it resumes, keeping
			// its finished points. Exit 2 is a configuration error, which a
			// retry repeats: that index fails at once. A Job with more than
			// a quarter of its indices failed stops.
			BackoffLimitPerIndex: 2,
			MaxFailedIndexes:     max(1, j.Shards/4),
			PodFailurePolicy: k8sFailurePolicy{Rules: []k8sFailureRule{{Action: "FailIndex",
				OnExitCodes: k8sExitCodes{ContainerName: "sweep", Operator: "In", Values: []int{ExitConfig}}}}},
			TTLSecondsAfterFinished: TTLAfterFinished,
			Template: k8sTemplate{
				Metadata: k8sMeta{Labels: map[string]string{"app.kubernetes.io/name": "conspirator"}},
				Spec: k8sPodSpec{
					RestartPolicy: "Never",
					Containers: []k8sContainer{{
						Name:         "sweep",
						Image:        image,
						WorkingDir:   K8sMount,
						Command:      []string{j.Binary},
						Args:         args,
						Env:          []k8sEnv{{Name: "CONSPIRATOR_SHARDS", Value: fmt.Sprint(j.Shards)}},
						Resources:    k8sResources{Requests: map[string]string{"cpu": cpu, "memory": PodMemory}},
						VolumeMounts: []k8sVolMount{{Name: "sweep", MountPath: K8sMount}},
					}},
					Volumes: []k8sVolume{{Name: "sweep", PVC: k8sClaim{ClaimName: ClaimName}}},
				},
			},
		},
	}
	var b bytes.Buffer
	head := []string{
		"A conspirator sweep as a Kubernetes Indexed Job, written by",
		fmt.Sprintf("`conspirator sweep --emit k8s` (conspirator %s): %d points in %d pods;", j.Version, j.Points, j.Shards),
		fmt.Sprintf("pod I (JOB_COMPLETION_INDEX) runs the points with index %% %d == I.", j.Shards),
		"",
		"GENERATED, NOT TESTED against a live cluster (the Slurm script is tested",
		"on a real Slurm in conspirator-sim's CI). Before `kubectl apply -f`:",
		fmt.Sprintf("  1. replace the image %s with one that holds", DefaultImage),
		fmt.Sprintf("     this conspirator version at %s;", j.Binary),
		fmt.Sprintf("  2. create a ReadWriteMany PersistentVolumeClaim %q and copy", ClaimName),
		fmt.Sprintf("     %s onto it (sweep.json and scenario.yaml at its root).", j.Dir),
		"Every pod writes its finished points into that volume; a retried pod",
		"resumes. Afterwards copy the volume back and run `conspirator report DIR`.",
	}
	for _, h := range head {
		b.WriteString(strings.TrimRight("# "+h, " ") + "\n")
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(job); err != nil {
		return nil, fmt.Errorf("k8s manifest: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("k8s manifest: %w", err)
	}
	return b.Bytes(), nil
}
