package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/conspirator-sim/conspirator/hw/mig"
	"github.com/conspirator-sim/conspirator/internal/inputfile"
	"github.com/conspirator-sim/conspirator/internal/progress"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/conspirator-sim/conspirator/scenarios"
	"github.com/conspirator-sim/conspirator/sim/alloc"
	"github.com/conspirator-sim/conspirator/sim/cluster"
	"github.com/conspirator-sim/conspirator/sim/datapath"
	"github.com/conspirator-sim/conspirator/sim/training"
	"github.com/conspirator-sim/conspirator/workloads/trace"
	"github.com/conspirator-sim/conspirator/workloads/train"
	"go.yaml.in/yaml/v3"
)

// Summary is summary.json: the public, documented result of one run (see
// docs/sweeps.md, "Result files"). Everything in it is a function of
// the resolved scenario and the seed, so the same inputs give the same
// bytes; wall-clock measurements go to timing.json instead.
type Summary struct {
	Version string `json:"version"`
	// Commit is the code's revision (see Commit); absent when the binary
	// was built without VCS stamping.
	Commit   string `json:"commit,omitempty"`
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	// Inputs is the resolved scenario with the keys and unit syntax of a
	// scenario file (what `conspirator scenarios schema` documents).
	Inputs map[string]any `json:"inputs"`
	// InputsSHA256 is the run's identity (InputsSHA256): the digest of
	// Inputs and of the bytes of every data file the run read.
	InputsSHA256 string `json:"inputs_sha256"`
	// InputFiles are the data files the run read, with their digests.
	InputFiles []InputFile `json:"input_files,omitempty"`
	// Calibration says what a calibration profile set, measured when and
	// where (absent without a profile).
	Calibration *scenarios.CalibrationTrace `json:"calibration,omitempty"`
	// Overrides lists the data-path keys set to other values than the
	// part named for them gives (a xeon-8380-2s with cores: 64); a key left
	// out of the scenario takes its part's value and is not listed.
	Overrides []datapath.PartOverride `json:"overrides,omitempty"`
	// Paths is the data-path result, one entry per simulated path.
	Paths []datapath.PathResult `json:"paths,omitempty"`
	// Gap is the end-to-end gain of the conspirator path over host-rdma in
	// percent, 100 * (host-rdma - conspirator) / host-rdma mean latency (the
	// paper's 15%); absent unless both paths ran.
	Gap *float64 `json:"conspirator_vs_host_rdma_gap_pct,omitempty"`
	// GapUndefined says why Gap is absent although both paths ran: one of
	// them is unstable (offered load above its capacity), so its mean
	// grows with the run's length and a gap between means says nothing.
	GapUndefined string `json:"gap_undefined,omitempty"`
	// Cost is the cost and power table of the control-plane processors.
	Cost []datapath.CostLine `json:"cost,omitempty"`
	// CostSource says where the cost rows' inputs came from: "scenario"
	// (the cost section, e.g. the paper's own figures) or "same-work" (the
	// simulated host CPU and SmartNIC doing the same control work, each at
	// its cores times its per-core speed).
	CostSource string `json:"cost_source,omitempty"`
	// Policies is the cluster-scheduling result, one entry per policy.
	// decision_us is zero here: wall-clock decision times are not
	// deterministic and go to timing.json.
	Policies []cluster.PolicyResult `json:"policies,omitempty"`
	// Clusters lists the cluster each seed of the cluster section ran on
	// (its GPUs by model).
	Clusters []cluster.SeedCluster `json:"clusters,omitempty"`
	// LLMServices is how each of cluster.llm_services was resolved: the
	// configuration chosen and why, or why none meets its SLO (left out);
	// each policy's placement of them is in Policies[i].llm_services.
	LLMServices []cluster.LLMServiceReport `json:"llm_services,omitempty"`
	// Allocation is the allocation experiment's result, one entry per
	// policy: mean and 95% CI over the seeds at 100..130% of the GPU
	// capacity arrived (allocation.csv has the whole curve).
	Allocation []alloc.PolicySummary `json:"allocation,omitempty"`
	// InputRows says what became of the rows of the trace and the node
	// list: read, used, and left out with the first reasons.
	InputRows []cluster.InputReport `json:"input_rows,omitempty"`
	// Training is the training section's result: mean JCT per aggregator
	// policy with its 95% CI, the speedup over the baseline, the time of
	// an iteration split into compute, communication and waiting for
	// aggregators, and what the replay cost.
	Training *TrainingSummary `json:"training,omitempty"`
	// LLM is the llm section's result: the resolved model, placement and
	// KV capacity, and the serving metrics over the seeds.
	LLM *LLMSummary `json:"llm,omitempty"`
}

// ClusterEnv is what the assembly gives the cluster model: the trace
// importer (the model reads no file itself) and the wall clock that times
// the policies' decisions (timing.json).
var ClusterEnv = cluster.Env{Import: trace.ImportFile, Now: time.Now, Geometry: readGeometry}

// readGeometry reads a MIG geometry file of cluster.mig_geometry (a few
// KiB as 'conspirator mig import' writes it).
func readGeometry(path string) (*mig.Geometry, error) {
	data, err := scenarios.ReadLimited(path, 1<<20, "MIG geometry")
	if err != nil {
		return nil, err
	}
	return mig.ReadYAML(path, data)
}

// CheckFiles reports, as a *cluster.InputError naming the key and where
// to download the data, an input file of sc that does not exist or cannot
// be read: `validate` calls it, so that a missing file is found before a
// run.
func CheckFiles(sc *scenarios.Scenario) error {
	keys, paths := dataFiles(sc)
	return checkFiles(keys, paths)
}

// checkFiles reports every data file that is not there, all at once (a
// user fixes two paths in one round, not two), each naming its key and
// where its path led.
func checkFiles(keys, paths []string) error {
	var errs []error
	for i, p := range paths {
		if _, err := inputfile.Stat(p); errors.Is(err, fs.ErrNotExist) { // a FIFO or device is refused here, before any open
			errs = append(errs, missingInput(keys[i], p))
		} else if err != nil {
			errs = append(errs, &cluster.InputError{Err: fmt.Errorf("%s: %w", keys[i], err)})
		}
	}
	return errors.Join(errs...)
}

// Check finds, without simulating, every problem of sc that a run would
// meet before its simulation starts: missing or unreadable data files,
// files of the wrong kind or format, bad rows, windows beyond the trace,
// jobs no GPU of the cluster can run. `validate` calls it, so that it
// says "ok" only where `run` would start. Problems of the inputs are
// *cluster.InputError (exit 2).
func Check(sc *scenarios.Scenario) error {
	if err := CheckFiles(sc); err != nil {
		return err
	}
	if _, err := InputFiles(sc); err != nil {
		return err
	}
	if sc.Cluster != nil {
		if err := cluster.Check(*sc.Cluster, sc.Seed, ClusterEnv); err != nil {
			var ie *cluster.InputError
			if !errors.As(err, &ie) {
				err = &cluster.InputError{Err: err}
			}
			return err
		}
	}
	if sc.Allocation != nil {
		if _, _, err := allocationInput(*sc.Allocation); err != nil {
			return err
		}
	}
	if sc.Training != nil {
		env := trainingEnv(*sc.Training)
		var listed []train.Job
		var err error
		switch sc.Training.Jobs.Source {
		case training.SourceList:
			listed, err = env.ReadList(sc.Training.Jobs.List)
		case training.SourceTrace:
			listed, err = env.ReadTrace(sc.Training.Jobs.Trace)
		}
		if err != nil {
			return err
		}
		if sc.Training.Jobs.Source != training.SourceSynthetic {
			// The run's preparation of the jobs (skip, limit, the
			// horizon), so that validate refuses what the run would.
			if _, err := training.Jobs(*sc.Training, listed, sc.Seed); err != nil {
				return &cluster.InputError{Err: fmt.Errorf("training.jobs: %w", err)}
			}
		}
	}
	if sc.LLM != nil {
		if err := checkLLM(*sc.LLM, sc.Seed); err != nil {
			return err
		}
	}
	return nil
}

// Timing is timing.json: wall-clock measurements of a run, kept out of
// summary.json so that it stays byte-identical across runs and machines.
type Timing struct {
	Note     string           `json:"note"`
	Policies []cluster.Timing `json:"policies,omitempty"`
}

// Output is everything one run produces, as file name -> content, ready to
// be written atomically into a result directory.
type Output struct {
	Summary Summary
	Timing  Timing
	Files   map[string][]byte
}

// Options are what a caller may add to a run without changing its
// results.
type Options struct {
	// Progress is told how far the run's replays have come: the
	// cluster section's (seeds x policies; see cluster.Env.Progress),
	// then the training section's (training.Env.Progress), each as its
	// own count from 0.
	Progress progress.Func
}

// Run simulates a validated scenario. It does no I/O: the caller writes
// the files.
func Run(sc *scenarios.Scenario) (*Output, error) { return RunWith(sc, Options{}) }

// RunWith is Run with options.
func RunWith(sc *scenarios.Scenario, opts Options) (*Output, error) {
	inputs, err := scenarioKeys(sc)
	if err != nil {
		return nil, fmt.Errorf("encoding the resolved inputs: %w", err)
	}
	inFiles, err := InputFiles(sc)
	if err != nil {
		return nil, err
	}
	identity, err := inputsSHA256(inputs, inFiles)
	if err != nil {
		return nil, fmt.Errorf("encoding the resolved inputs: %w", err)
	}
	sum := Summary{Version: Version, Commit: Commit(), Scenario: sc.Name, Seed: sc.Seed, Inputs: inputs, InputsSHA256: identity, InputFiles: inFiles, Calibration: sc.CalibrationTrace}
	files := map[string][]byte{}
	var timing Timing
	if sc.DataPath != nil {
		sum.Overrides = sc.DataPath.Overrides
		res, err := datapath.Run(*sc.DataPath, sc.Seed)
		if err != nil {
			return nil, fmt.Errorf("datapath: %w", err)
		}
		sum.Paths = res.Paths
		if g, err := datapath.Gap(res); err == nil {
			var unstable []string
			for _, name := range []string{datapath.PathHostRDMA, datapath.PathConspirator} {
				if p := res.Path(name); p != nil && p.Unstable {
					unstable = append(unstable, name)
				}
			}
			if len(unstable) > 0 {
				sum.GapUndefined = fmt.Sprintf("%s unstable (offered load above capacity): the mean grows with the run, so no gap is given", strings.Join(unstable, " and ")+map[bool]string{true: " is", false: " are"}[len(unstable) == 1])
			} else {
				sum.Gap = &g
			}
		}
		var csv bytes.Buffer
		if err := res.WriteCSV(&csv); err != nil {
			return nil, fmt.Errorf("datapath: writing requests.csv: %w", err)
		}
		files["requests.csv"] = csv.Bytes()
	}
	if sc.Cluster != nil {
		env := ClusterEnv
		env.Progress = opts.Progress
		res, err := cluster.Run(*sc.Cluster, sc.Seed, env)
		if err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
		sum.Policies = res.Policies
		sum.Clusters = res.Clusters
		sum.LLMServices = res.LLMServices
		sum.InputRows = res.Inputs
		files["seeds.csv"] = seedsCSV(res)
		files["jobs.csv"] = jobsCSV(res)
		files["active_gpus.csv"] = activeCSV(res)
		timing = Timing{
			Note:     "wall-clock policy decision times on the machine that ran the simulation; not deterministic",
			Policies: res.Timing,
		}
		tj, err := json.MarshalIndent(timing, "", "  ")
		if err != nil {
			return nil, err
		}
		files["timing.json"] = append(tj, '\n')
		files["decisions.csv"] = cluster.DecisionsCSV(res)
	}
	if sc.Allocation != nil {
		in, reps, err := allocationInput(*sc.Allocation)
		if err != nil {
			return nil, err
		}
		res, err := alloc.Simulate(*sc.Allocation, in, sc.Seed)
		if err != nil {
			return nil, fmt.Errorf("allocation: %w", err)
		}
		sum.Allocation = alloc.Summarize(res)
		sum.InputRows = append(sum.InputRows, reps...)
		files["allocation.csv"] = alloc.CSV(res)
	}
	if sc.Training != nil {
		ts, err := runTraining(*sc.Training, sc.Seed, files, opts.Progress)
		if err != nil {
			return nil, fmt.Errorf("training: %w", err)
		}
		sum.Training = ts
	}
	if sc.LLM != nil {
		ls, err := runLLM(*sc.LLM, sc.Seed, files)
		if err != nil {
			return nil, llmError(err)
		}
		sum.LLM = ls
	}
	if rows := costRows(sc); len(rows) > 0 {
		table, err := datapath.CostTable(rows)
		if err != nil {
			return nil, fmt.Errorf("cost: %w", err)
		}
		sum.Cost = table
		sum.CostSource = "same-work"
		if sc.Cost != nil && len(sc.Cost.Processors) > 0 {
			sum.CostSource = "scenario"
		}
	}
	js, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding summary.json: %w", err)
	}
	files["summary.json"] = append(js, '\n')
	return &Output{Summary: sum, Timing: timing, Files: files}, nil
}

// costRows picks the processors of the cost table: the scenario's own rows
// where it lists them (paper/cost gives the paper's inputs), else the
// same-work comparison of the simulated host CPU and SmartNIC.
func costRows(sc *scenarios.Scenario) []datapath.CostRow {
	if sc.Cost != nil && len(sc.Cost.Processors) > 0 {
		rows := make([]datapath.CostRow, len(sc.Cost.Processors))
		for i, p := range sc.Cost.Processors {
			rows[i] = datapath.CostRow{Name: p.Name, PriceUSD: float64(p.Price), PowerW: float64(p.Power), Throughput: p.Throughput}
		}
		return rows
	}
	if sc.DataPath != nil {
		return datapath.SameWorkCostRows(*sc.DataPath)
	}
	return nil
}

// seedsCSV writes one row per policy and seed: the numbers the means and
// CIs of summary.json are taken over.
func seedsCSV(r *cluster.Result) []byte {
	var b bytes.Buffer
	b.WriteString("policy,seed,cluster_gpus,gpu_hours,vs_baseline_pct,jct_mean_s,queue_mean_s,jobs_queued_pct,capacity_used,peak_active_gpus,migrations,unscheduled\n")
	bi := slices.IndexFunc(r.Policies, func(q cluster.PolicyResult) bool { return q.Name == r.Baseline })
	for s, ps := range r.PerSeed {
		for _, p := range ps {
			vs := ""
			if bi >= 0 && p.Name != r.Baseline && ps[bi].GPUHours > 0 {
				vs = num(100 * (p.GPUHours - ps[bi].GPUHours) / ps[bi].GPUHours)
			}
			fmt.Fprintf(&b, "%s,%d,%d,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", csvField(p.Name), r.Clusters[s].Seed, r.Clusters[s].GPUs, num(p.GPUHours), vs,
				num(p.JCT.Mean), num(p.Queue.Mean), num(p.QueuedPct), num(p.CapacityUsed), num(p.PeakActive), num(p.Migrations), num(p.Unscheduled))
		}
	}
	return b.Bytes()
}

// jobsCSV writes one row per job and policy (the first seed's).
func jobsCSV(r *cluster.Result) []byte {
	var b bytes.Buffer
	b.WriteString("policy,id,kind,censored,arrival_s,queue_s,jct_s,gpu_type,profile,speed,migrations\n")
	for _, p := range r.Policies {
		for _, j := range p.Jobs {
			fmt.Fprintf(&b, "%s,%s,%s,%t,%s,%s,%s,%s,%s,%s,%d\n", p.Name, csvField(j.ID), j.Kind, j.Censored, num(j.ArrivalS), num(j.QueueS), num(j.JCTS),
				csvField(j.GPUType), csvField(j.Profile), num(j.Speed), j.Migrations)
		}
	}
	return b.Bytes()
}

// activeCSV writes the active-GPU step series of every policy.
func activeCSV(r *cluster.Result) []byte {
	var b bytes.Buffer
	b.WriteString("policy,time_s,active_gpus\n")
	for _, p := range r.Policies {
		for _, s := range p.Series {
			fmt.Fprintf(&b, "%s,%s,%d\n", p.Name, num(s.T), s.Active)
		}
	}
	return b.Bytes()
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }

// csvField quotes a field that holds a comma or a quote.
func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// scenarioKeys turns a scenario into nested maps keyed by its YAML keys,
// with quantities in their unit syntax ("25GB/s"): the same names a user
// writes in a file. encoding/json sorts map keys, so the bytes are stable.
// InputsDigest is a short fingerprint (8 hex digits of a SHA-256) of the
// resolved scenario, the same map that summary.json stores as inputs: two
// runs with equal digests simulate the same thing.
func InputsDigest(sc *scenarios.Scenario) (string, error) {
	m, err := scenarioKeys(sc)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:4]), nil
}

// InputsMap is sc resolved as summary.json's inputs hold it.
func InputsMap(sc *scenarios.Scenario) (map[string]any, error) { return scenarioKeys(sc) }

func scenarioKeys(sc *scenarios.Scenario) (map[string]any, error) {
	y, err := yaml.Marshal(sc)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(y, &m); err != nil {
		return nil, err
	}
	return m, nil
}
