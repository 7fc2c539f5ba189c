package batch

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// decodeStrict reads a manifest into the upstream Kubernetes Job type the
// way the API server's strict field validation does: every field must
// exist in batch/v1 (a misspelt or invented field fails).
func decodeStrict(t *testing.T, manifest []byte) (*batchv1.Job, error) {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(manifest, &doc); err != nil {
		t.Fatalf("the manifest is not YAML: %v", err)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var job batchv1.Job
	if err := dec.Decode(&job); err != nil {
		return nil, err
	}
	return &job, nil
}

// The emitted Indexed Job decodes strictly into k8s.io/api batch/v1 and
// says, in the API's own types, what the sweep needs: one index per shard,
// the throttle as parallelism, per-index retries, the shard count in the
// environment, CPU and memory requests, and the shared results volume
// mounted where the sweep writes.
func TestK8sManifestDecodesIntoUpstreamTypes(t *testing.T) {
	j := job()
	manifest, err := K8sManifest(j)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeStrict(t, manifest)
	if err != nil {
		t.Fatalf("strict decoding into batch/v1 Job: %v", err)
	}
	s := got.Spec
	if got.APIVersion != "batch/v1" || got.Kind != "Job" || s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("not an Indexed batch/v1 Job: %s %s %v", got.APIVersion, got.Kind, s.CompletionMode)
	}
	if s.Completions == nil || *s.Completions != int32(j.Shards) || s.Parallelism == nil || *s.Parallelism != int32(j.Throttle) {
		t.Errorf("completions %v, parallelism %v; want %d and %d", s.Completions, s.Parallelism, j.Shards, j.Throttle)
	}
	if s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex != 2 {
		t.Errorf("backoffLimitPerIndex %v, want 2", s.BackoffLimitPerIndex)
	}
	// Exit 2 (a configuration error) fails its index at once; the Job
	// stops after a quarter of its indices failed and is removed a week
	// after it finished.
	pfp := s.PodFailurePolicy
	if pfp == nil || len(pfp.Rules) != 1 || pfp.Rules[0].Action != batchv1.PodFailurePolicyActionFailIndex ||
		pfp.Rules[0].OnExitCodes == nil || pfp.Rules[0].OnExitCodes.Operator != batchv1.PodFailurePolicyOnExitCodesOpIn ||
		len(pfp.Rules[0].OnExitCodes.Values) != 1 || pfp.Rules[0].OnExitCodes.Values[0] != ExitConfig ||
		pfp.Rules[0].OnExitCodes.ContainerName == nil || *pfp.Rules[0].OnExitCodes.ContainerName != "sweep" {
		t.Errorf("podFailurePolicy %+v, want FailIndex on exit code 2 of container sweep", pfp)
	}
	if s.MaxFailedIndexes == nil || *s.MaxFailedIndexes != 1 {
		t.Errorf("maxFailedIndexes %v, want 1 (a quarter of 4 indices)", s.MaxFailedIndexes)
	}
	if s.TTLSecondsAfterFinished == nil || *s.TTLSecondsAfterFinished != TTLAfterFinished {
		t.Errorf("ttlSecondsAfterFinished %v, want %d", s.TTLSecondsAfterFinished, TTLAfterFinished)
	}
	pod := s.Template.Spec
	if pod.RestartPolicy != corev1.RestartPolicyNever || len(pod.Containers) != 1 {
		t.Fatalf("pod spec %+v", pod)
	}
	c := pod.Containers[0]
	if len(c.Env) != 1 || c.Env[0].Name != "CONSPIRATOR_SHARDS" || c.Env[0].Value != "4" {
		t.Errorf("env %+v, want CONSPIRATOR_SHARDS=4", c.Env)
	}
	if cpu := c.Resources.Requests[corev1.ResourceCPU]; cpu.String() != "1" {
		t.Errorf("cpu request %s, want 1 (one core per pod, -j 1)", cpu.String())
	}
	if mem := c.Resources.Requests[corev1.ResourceMemory]; mem.String() != PodMemory {
		t.Errorf("memory request %s, want %s", mem.String(), PodMemory)
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != K8sMount || len(pod.Volumes) != 1 ||
		pod.Volumes[0].Name != c.VolumeMounts[0].Name || pod.Volumes[0].PersistentVolumeClaim == nil ||
		pod.Volumes[0].PersistentVolumeClaim.ClaimName != ClaimName {
		t.Errorf("volume %+v mounted as %+v; want claim %s at %s", pod.Volumes, c.VolumeMounts, ClaimName, K8sMount)
	}
	if c.WorkingDir != K8sMount || c.Args[len(c.Args)-1] != K8sMount {
		t.Errorf("the sweep does not write into the shared volume: workingDir %s, args %v", c.WorkingDir, c.Args)
	}

	// The check can fail: a field batch/v1 does not have is refused.
	bad := strings.Replace(string(manifest), "backoffLimitPerIndex:", "backofLimitPerIndex:", 1)
	if _, err := decodeStrict(t, []byte(bad)); err == nil || !strings.Contains(err.Error(), "backofLimitPerIndex") {
		t.Errorf("a misspelt field decoded without error: %v", err)
	}
}
