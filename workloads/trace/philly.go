package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/workloads"
)

// phillyJob is one element of Philly's cluster_job_log. Times are strings
// ("2017-10-07 01:12:09") or null/"None".
type phillyJob struct {
	Status    string  `json:"status"`
	VC        string  `json:"vc"`
	JobID     string  `json:"jobid"`
	Submitted *string `json:"submitted_time"`
	User      string  `json:"user"`
	Attempts  []struct {
		Start  *string `json:"start_time"`
		End    *string `json:"end_time"`
		Detail []struct {
			IP   string   `json:"ip"`
			GPUs []string `json:"gpus"`
		} `json:"detail"`
	} `json:"attempts"`
}

// readPhilly imports Microsoft Philly's cluster_job_log (a JSON list),
// streaming one job at a time:
//
//   - ID = jobid, Tenant = user, Status = status (Pass, Killed, Failed).
//   - Arrival = submitted_time; NumGPU = the GPUs listed in the first
//     attempt's detail (whole GPUs: GPUMilli 1000).
//   - Duration = last attempt's end_time - first attempt's start_time, the
//     run time of the philly-traces analysis notebook (retries and the gaps
//     between them count).
//   - Jobs without attempts or start_time are skipped as "never scheduled",
//     without a final end_time as "not finished".
//
// Row numbers in messages are 1-based positions in the list.
func readPhilly(r io.Reader, b *builder) error {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return &RowError{File: b.file, Reason: "not JSON: " + err.Error() + "; want a list of jobs [{...}, ...]"}
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return &RowError{File: b.file, Reason: fmt.Sprintf("JSON starts with %v; want a list of jobs [{...}, ...]", tok)}
	}
	for row := 1; dec.More(); row++ {
		var pj phillyJob
		b.res.Read++
		if err := dec.Decode(&pj); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				// The decoder consumed the element: the next one is readable.
				if e := b.reject(row, te.Field, "bad "+te.Field, fmt.Sprintf("JSON %s where a %v is wanted", te.Value, te.Type), false); e != nil {
					return e
				}
				continue
			}
			return &RowError{File: b.file, Row: row, Reason: "broken JSON: " + err.Error()}
		}
		j, fe := phillyToJob(pj, row, b.opt.ArrivalOnly)
		if fe != nil {
			if e := b.fail(row, fe); e != nil {
				return e
			}
			continue
		}
		if err := b.addJob(j, ""); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil {
		return &RowError{File: b.file, Reason: "broken JSON at the end of the list: " + err.Error()}
	}
	return nil
}

func phillyToJob(pj phillyJob, row int, arrivalOnly bool) (workloads.Job, *fieldErr) {
	j := workloads.Job{Row: row, ID: pj.JobID, Tenant: pj.User, Status: pj.Status, GPUMilli: workloads.MaxGPUMilli}
	bad := func(col, format string, a ...any) *fieldErr {
		return &fieldErr{col: col, kind: "bad " + col, reason: fmt.Sprintf(format, a...)}
	}
	if j.ID == "" {
		return j, bad("jobid", "job id is empty")
	}
	parse := func(s *string) (engine.Time, bool, error) {
		if s == nil || *s == "" || *s == "None" {
			return 0, false, nil
		}
		t, err := parseSeconds(*s)
		return t, err == nil, err
	}
	sub, ok, err := parse(pj.Submitted)
	if err != nil {
		return j, bad("submitted_time", "%v", err)
	}
	if !ok {
		return j, bad("submitted_time", "submitted_time is missing")
	}
	j.Arrival = sub
	if len(pj.Attempts) == 0 {
		return j, skipRow("never scheduled", "job has no attempts")
	}
	for _, d := range pj.Attempts[0].Detail {
		j.NumGPU += len(d.GPUs)
	}
	if j.NumGPU == 0 {
		j.GPUMilli = 0
	}
	start, started, err := parse(pj.Attempts[0].Start)
	if err != nil {
		return j, bad("attempts[0].start_time", "%v", err)
	}
	last := len(pj.Attempts) - 1
	end, ended, err := parse(pj.Attempts[last].End)
	if err != nil {
		return j, bad(fmt.Sprintf("attempts[%d].end_time", last), "%v", err)
	}
	switch {
	case started && start < sub:
		return j, bad("attempts[0].start_time", "job started at %v, before its submission at %v", start, sub)
	case started && ended && end < start:
		return j, bad(fmt.Sprintf("attempts[%d].end_time", last), "job ended at %v, before its start at %v", end, start)
	case arrivalOnly:
	case !started:
		return j, skipRow("never scheduled", "first attempt has no start_time")
	case !ended:
		return j, skipRow("not finished", "last attempt has no end_time")
	case end == start:
		return j, skipRow("zero run time", "job ended the second it started")
	default:
		j.Duration = end - start
	}
	return j, nil
}
