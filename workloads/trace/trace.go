package trace

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/conspirator-sim/conspirator/internal/inputfile"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/workloads"
)

// Format names accepted in Options.Format (aliases in parentheses).
const (
	FormatOpenB         = "alibaba-v2023"          // openb pod list ("openb")
	FormatOpenBNodes    = "alibaba-v2023-nodes"    // openb node list ("openb-nodes")
	FormatPAI           = "alibaba-v2020"          // PAI job/task/instance tables ("pai")
	FormatPAIMachines   = "alibaba-v2020-machines" // pai_machine_spec ("pai-machines")
	FormatDLRM          = "alibaba-v2025"          // disaggregated DLRM trace ("dlrm")
	FormatPhilly        = "philly"                 // Microsoft Philly cluster_job_log (JSON)
	FormatHelios        = "helios"                 // SenseTime Helios cluster_log.csv
	FormatGeneric       = "generic"                // this project's CSV (FORMATS.md)
	defaultMaxGPUs      = 8
	defaultMaxRejection = 1000
)

var aliases = map[string]string{
	"openb": FormatOpenB, "openb-nodes": FormatOpenBNodes, "pai": FormatPAI,
	"pai-machines": FormatPAIMachines, "dlrm": FormatDLRM,
}

// Formats returns the accepted format names, sorted.
func Formats() []string {
	f := []string{FormatOpenB, FormatOpenBNodes, FormatPAI, FormatPAIMachines,
		FormatDLRM, FormatPhilly, FormatHelios, FormatGeneric}
	slices.Sort(f)
	return f
}

// Options control an import. The zero value is a lenient, auto-detecting
// import that keeps at most 8 GPUs per job.
type Options struct {
	// Format is one of Formats() or an alias; "" detects it from the file
	// name and header (Result.Format says which was chosen).
	Format string
	// Strict turns the first bad row into an error naming file:row:column.
	// Otherwise bad rows are skipped and counted. Rows skipped by policy
	// (CPU-only, never scheduled, unfinished) are never errors.
	Strict bool
	// ArrivalOnly imports without run times: Duration is 0 and jobs that
	// never ran are kept. Required for the openb multigpu files, which have
	// no times (every job then arrives at 0, in file order).
	ArrivalOnly bool
	// MaxGPUsPerJob rejects jobs wider than one server; 0 means 8, the
	// largest server in every bundled trace. Raise it for Philly/Helios
	// multi-node jobs.
	MaxGPUsPerJob int
	// KnownGPUTypes replaces the format's own list of GPU type codes (openb:
	// G1 G2 G3 T4 P100 V100M16 V100M32 A10; PAI v2020: MISC P100 T4 V100
	// V100M32). nil keeps that list; formats without a list accept any
	// well-formed name.
	KnownGPUTypes []string
	// KeepOrigin keeps the trace's own time origin instead of shifting the
	// earliest arrival to 0.
	KeepOrigin bool
	// KnownQoS, when not nil, lists the service classes a job's QoS may
	// take; a job with another non-empty QoS is a bad row (column qos),
	// an error under Strict. The cluster's job_kind by-qos reads the kind
	// of a job from its QoS and sets it; nil accepts any.
	KnownQoS []string
	// KeepCPUOnly keeps jobs that request no GPU (NumGPU 0) instead of
	// skipping them: experiments where CPU and memory bind (the FGD
	// allocation experiment) need them.
	KeepCPUOnly bool
	// MaxRejections bounds Result.Rejected (RejectCounts stays complete);
	// 0 means 1000.
	MaxRejections int
	// PAI names the sibling tables for FormatPAI; empty fields are looked
	// for next to the imported file (pai_job_table.csv, ...).
	PAI PAIFiles
}

// PAIFiles names the headerless tables of the Alibaba v2020 trace. Tasks is
// required; Jobs (tenant, submission time) and Instances (per-instance
// times) refine the import when present.
type PAIFiles struct{ Jobs, Tasks, Instances string }

// Node is one server of a trace's cluster.
type Node struct {
	Name      string
	CPUMilli  int
	MemoryMiB int64
	NumGPU    int
	GPUType   string // trace code; "" for a CPU-only node
	Row       int
}

// Rejection is one row that was not imported.
type Rejection struct {
	Row    int    `json:"row"`              // 1-based line (CSV, header = 1) or list element (JSON)
	Column string `json:"column,omitempty"` // column or JSON field at fault; "" for the whole row
	Kind   string `json:"kind"`             // short category, the key of Result.RejectCounts
	Reason string `json:"reason"`           // what was wrong and what would be right
}

// Result is an imported trace. Read == Used + the sum of RejectCounts.
type Result struct {
	Format   string // the format used
	Detected bool   // true when Format was detected, not given
	Source   string // file name
	Jobs     []workloads.Job
	Nodes    []Node
	Read     int // data rows (or JSON elements) read
	Used     int // rows that became a Job or Node
	// Rejected holds the first Options.MaxRejections rejections in file
	// order; RejectCounts counts all of them by Kind.
	Rejected     []Rejection
	RejectCounts map[string]int
	// Origin is the trace time that became 0 (the earliest arrival), unless
	// Options.KeepOrigin.
	Origin engine.Time
	// Notes are remarks on the whole import (defaults applied, columns
	// ignored), in order.
	Notes []string
}

// RejectedTotal returns the number of rejected rows.
func (r Result) RejectedTotal() int {
	n := 0
	for _, c := range r.RejectCounts {
		n += c
	}
	return n
}

// RowError is a bad row in strict mode, or a bad header.
type RowError struct {
	File   string
	Row    int    // 1-based line (CSV) or list element (JSON); 0 = whole file
	Col    int    // 1-based column index; 0 if not a CSV column
	Column string // column or field name
	Reason string
}

func (e *RowError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Row > 0 {
		fmt.Fprintf(&b, ":%d", e.Row)
		if e.Col > 0 {
			fmt.Fprintf(&b, ":%d", e.Col)
		}
	}
	if e.Column != "" {
		fmt.Fprintf(&b, ": %s", e.Column)
	}
	fmt.Fprintf(&b, ": %s", e.Reason)
	return b.String()
}

// ImportFile imports the trace at path.
func ImportFile(path string, opt Options) (Result, error) {
	format, detected, err := resolveFormat(path, nil, opt.Format)
	if err != nil {
		return Result{}, err
	}
	if format == FormatPAI {
		files := opt.PAI
		tasks := fillPAIFiles(&files, path)
		if files.Tasks == "" {
			// A missing file, named: the caller says where the trace comes from.
			return Result{}, &fs.PathError{Op: "open", Path: tasks, Err: fmt.Errorf("%w (alibaba-v2020 reads its task table, with the job and instance tables beside it)", fs.ErrNotExist)}
		}
		res, err := importPAI(files, opt)
		res.Detected = detected
		return res, err
	}
	f, err := inputfile.Open(path)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	opt.Format = format
	res, err := Import(f, path, opt)
	res.Detected = detected
	return res, err
}

// Import reads a trace from r; name is used in messages and, with the first
// line, to detect the format. For FormatPAI, r is the task table and the
// other tables come from opt.PAI.
func Import(r io.Reader, name string, opt Options) (Result, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(4096)
	format, detected, err := resolveFormat(name, head, opt.Format)
	if err != nil {
		return Result{}, err
	}
	b, err := newBuilder(name, format, opt)
	if err != nil {
		return Result{}, err
	}
	switch format {
	case FormatOpenB:
		err = readOpenB(br, b)
	case FormatOpenBNodes:
		err = readOpenBNodes(br, b)
	case FormatPAI:
		files := opt.PAI
		files.Tasks = name
		err = readPAI(br, files, b)
	case FormatPAIMachines:
		err = readPAIMachines(br, b)
	case FormatDLRM:
		err = readDLRM(br, b)
	case FormatPhilly:
		err = readPhilly(br, b)
	case FormatHelios:
		err = readHelios(br, b)
	case FormatGeneric:
		err = readGeneric(br, b)
	}
	res := b.finish()
	res.Detected = detected
	return res, err
}

// resolveFormat returns the canonical format for name (a path) and the
// start of its content, detecting it when given is "".
func resolveFormat(name string, head []byte, given string) (string, bool, error) {
	if given != "" {
		g := strings.ToLower(given)
		if a, ok := aliases[g]; ok {
			g = a
		}
		if !slices.Contains(Formats(), g) {
			return "", false, fmt.Errorf("%s: unknown trace format %q; want one of %s",
				name, given, strings.Join(Formats(), ", "))
		}
		return g, false, nil
	}
	base := strings.ToLower(filepath.Base(name))
	switch {
	case strings.HasPrefix(base, "pai_job_table"), strings.HasPrefix(base, "pai_task_table"),
		strings.HasPrefix(base, "pai_instance_table"):
		return FormatPAI, true, nil
	case strings.HasPrefix(base, "pai_machine_spec"):
		return FormatPAIMachines, true, nil
	}
	if head == nil {
		// ImportFile: read the first bytes to look at the header.
		f, err := inputfile.Open(name)
		if err != nil {
			return "", false, err
		}
		defer f.Close()
		buf := make([]byte, 4096)
		n, _ := io.ReadFull(f, buf)
		head = buf[:n]
	}
	trimmed := bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return FormatPhilly, true, nil
	}
	// The header is the first line that is neither blank nor a '#'
	// comment (generic CSV).
	var line []byte
	first, _, _ := bytes.Cut(head, []byte("\n"))
	for rest := head; len(rest) > 0; {
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		t := bytes.TrimSpace(bytes.TrimLeft(line, "\ufeff"))
		if len(t) > 0 && t[0] != '#' {
			break
		}
		line = nil
	}
	cols := map[string]bool{}
	for _, c := range strings.Split(strings.TrimSpace(strings.TrimPrefix(string(line), "\ufeff")), ",") {
		cols[strings.TrimSpace(c)] = true
	}
	has := func(names ...string) bool {
		for _, n := range names {
			if !cols[n] {
				return false
			}
		}
		return true
	}
	switch {
	// openb's files are told apart by two columns each, so that one that
	// lacks a third gets the format's own "header lacks column" message.
	case has("name", "num_gpu"):
		return FormatOpenB, true, nil
	case has("sn", "cpu_milli"):
		return FormatOpenBNodes, true, nil
	case has("instance_sn", "gpu_request", "rdma_request"):
		return FormatDLRM, true, nil
	case has("job_id", "gpu_num", "submit_time"):
		return FormatHelios, true, nil
	case has("id", "arrival_s", "num_gpu"):
		return FormatGeneric, true, nil
	}
	return "", false, &FormatError{File: name, First: truncate(strings.TrimRight(string(first), "\r"), 120), Header: truncate(strings.TrimRight(string(line), "\r"), 120)}
}

// FormatError is a file whose trace format can be told neither from its
// name nor from its header. Callers add how to give the format (a
// scenario key, a flag).
type FormatError struct {
	File   string
	First  string // the file's first line
	Header string // the first line that is neither blank nor a '#' comment
}

func (e *FormatError) Error() string {
	seen := fmt.Sprintf("its first line is %q", e.First)
	if e.Header != e.First {
		seen += fmt.Sprintf(" and its first line that is not a comment %q", e.Header)
	}
	return fmt.Sprintf("%s: cannot detect the trace format from the file name or the header: %s; is it a trace? Give its format, one of %s (workloads/trace/FORMATS.md has each format's columns)",
		e.File, seen, strings.Join(Formats(), ", "))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// Default GPU type codes of the traces that constrain GPU types.
var (
	openbGPUTypes = []string{"A10", "G1", "G2", "G3", "P100", "T4", "V100M16", "V100M32"}
	paiGPUTypes   = []string{"MISC", "P100", "T4", "V100", "V100M32"}
	typeNameRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// builder accumulates one import's result and applies the common checks.
type builder struct {
	opt     Options
	file    string
	res     Result
	ids     map[string]struct{}
	known   map[string]bool // nil: any well-formed name
	maxGPUs int
	header  map[string]int // column name -> 0-based index, for messages
}

func newBuilder(file, format string, opt Options) (*builder, error) {
	b := &builder{opt: opt, file: file, ids: map[string]struct{}{}, maxGPUs: opt.MaxGPUsPerJob}
	b.res = Result{Format: format, Source: file, RejectCounts: map[string]int{}}
	if b.maxGPUs == 0 {
		b.maxGPUs = defaultMaxGPUs
	}
	if b.maxGPUs < 0 {
		return nil, fmt.Errorf("%s: MaxGPUsPerJob %d is negative; want 0 (= %d) or more", file, b.maxGPUs, defaultMaxGPUs)
	}
	if b.opt.MaxRejections <= 0 {
		b.opt.MaxRejections = defaultMaxRejection
	}
	list := opt.KnownGPUTypes
	if list == nil {
		switch format {
		case FormatOpenB, FormatOpenBNodes:
			list = openbGPUTypes
		case FormatPAI, FormatPAIMachines:
			list = paiGPUTypes
		}
	}
	if list != nil {
		b.known = map[string]bool{}
		for _, t := range list {
			b.known[t] = true
		}
	}
	return b, nil
}

// col returns the 1-based index of a column for messages; 0 if unknown.
func (b *builder) col(name string) int {
	if i, ok := b.header[name]; ok {
		return i + 1
	}
	return 0
}

// reject records a row that is not imported. A bad row (skip false) is an
// error in strict mode; a policy skip never is.
func (b *builder) reject(row int, column, kind, reason string, skip bool) error {
	if b.opt.Strict && !skip {
		return &RowError{File: b.file, Row: row, Col: b.col(column), Column: column, Reason: reason}
	}
	b.res.RejectCounts[kind]++
	if len(b.res.Rejected) < b.opt.MaxRejections {
		b.res.Rejected = append(b.res.Rejected, Rejection{Row: row, Column: column, Kind: kind, Reason: reason})
	}
	return nil
}

// rejectAt is reject for a problem at a column the header does not name
// (a field past the header's last column), given by its 1-based number.
func (b *builder) rejectAt(row, col int, kind, reason string) error {
	if b.opt.Strict {
		return &RowError{File: b.file, Row: row, Col: col, Reason: reason}
	}
	b.res.RejectCounts[kind]++
	if len(b.res.Rejected) < b.opt.MaxRejections {
		b.res.Rejected = append(b.res.Rejected, Rejection{Row: row, Column: fmt.Sprintf("column %d", col), Kind: kind, Reason: reason})
	}
	return nil
}

// fail rejects a row for the first field error found while parsing it.
func (b *builder) fail(row int, fe *fieldErr) error {
	return b.reject(row, fe.col, fe.kind, fe.reason, fe.skip)
}

// checkTypes validates and de-duplicates GPU type names.
func (b *builder) checkTypes(types []string) ([]string, *fieldErr) {
	var out []string
	for _, t := range types {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		if b.known != nil && !b.known[t] {
			known := make([]string, 0, len(b.known))
			for k := range b.known {
				known = append(known, k)
			}
			slices.Sort(known)
			return nil, &fieldErr{kind: "unknown GPU type",
				reason: fmt.Sprintf("GPU type %q is not one of %s (set KnownGPUTypes to extend the list)", t, strings.Join(known, " "))}
		}
		if b.known == nil && !typeNameRE.MatchString(t) {
			return nil, &fieldErr{kind: "unknown GPU type",
				reason: fmt.Sprintf("GPU type %q is not a name (letters, digits, '.', '_', '-')", t)}
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// addJob applies the common checks and keeps the job. typeCol names the
// column holding the GPU types, for messages.
func (b *builder) addJob(j workloads.Job, typeCol string) error {
	if j.NumGPU == 0 && !b.opt.KeepCPUOnly {
		return b.reject(j.Row, "", "cpu-only", "CPU-only job (no GPU requested)", true)
	}
	if j.NumGPU > b.maxGPUs {
		return b.reject(j.Row, "", "too many GPUs", fmt.Sprintf(
			"job asks for %d GPUs; no server holds more than %d (raise MaxGPUsPerJob for multi-server jobs)", j.NumGPU, b.maxGPUs), false)
	}
	if b.opt.KnownQoS != nil && j.QoS != "" && !slices.Contains(b.opt.KnownQoS, j.QoS) {
		return b.reject(j.Row, "qos", "unknown qos", fmt.Sprintf("qos %q is none of %s, which cluster.job_kind by-qos reads as a job's kind; set cluster.job_kind to all-batch or all-service to replay a trace with other classes",
			j.QoS, strings.Join(b.opt.KnownQoS, ", ")), false)
	}
	types, fe := b.checkTypes(j.GPUTypes)
	if fe != nil {
		return b.reject(j.Row, typeCol, fe.kind, fe.reason, false)
	}
	j.GPUTypes = types
	if end := j.Arrival.Seconds() + j.Duration.Seconds(); end > maxSeconds {
		col := "duration_s"
		if _, ok := b.header[col]; !ok {
			col = ""
		}
		return b.reject(j.Row, col, "past the horizon", fmt.Sprintf(
			"arrival %.0f s plus duration %.0f s ends at %.0f s, past the simulator's horizon of %s (%.0f s); shorten the job or shift the trace's times",
			j.Arrival.Seconds(), j.Duration.Seconds(), end, engine.HorizonText, maxSeconds), false)
	}
	if err := j.Validate(); err != nil {
		return b.reject(j.Row, "", "invalid job", err.Error(), false)
	}
	if _, dup := b.ids[j.ID]; dup {
		return b.reject(j.Row, "", "duplicate id", fmt.Sprintf("job id %q appears more than once; ids must be unique", j.ID), false)
	}
	b.ids[j.ID] = struct{}{}
	b.res.Jobs = append(b.res.Jobs, j)
	b.res.Used++
	return nil
}

// finish shifts arrivals to start at 0 and orders jobs by (arrival, row).
func (b *builder) finish() Result {
	jobs := b.res.Jobs
	if len(jobs) > 0 && !b.opt.KeepOrigin {
		origin := jobs[0].Arrival
		for _, j := range jobs {
			origin = min(origin, j.Arrival)
		}
		for i := range jobs {
			jobs[i].Arrival -= origin
		}
		b.res.Origin = origin
	}
	slices.SortStableFunc(jobs, func(x, y workloads.Job) int {
		if x.Arrival != y.Arrival {
			if x.Arrival < y.Arrival {
				return -1
			}
			return 1
		}
		return x.Row - y.Row
	})
	return b.res
}
