package llm

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/conspirator-sim/conspirator/engine"
)

var azureColumns = []string{"TIMESTAMP", "ContextTokens", "GeneratedTokens"}

// ReadAzure reads an Azure LLM inference trace (2023 or the 2024 week):
// CSV with the columns TIMESTAMP (a UTC date-time "2023-11-16
// 18:15:46.6805900", 0 to 7 fractional digits, "T" or a space between date
// and time, an optional "Z" or "+00:00"), ContextTokens (the prompt) and
// GeneratedTokens (the output). Arrivals count from the earliest row,
// which a note names. name is used in messages.
func ReadAzure(r io.Reader, name string) (Trace, error) {
	t, err := openCSV(r, name, azureColumns)
	if err != nil {
		return Trace{}, err
	}
	type stamp struct {
		sec  int64 // Unix seconds
		nsec int64
		line int
	}
	var (
		rs     []Request
		stamps []stamp
		vals   []string
		line   int
	)
	for {
		vals, line, err = t.next(vals)
		if err == io.EOF {
			break
		}
		if err != nil {
			return Trace{}, err
		}
		sec, nsec, why := parseAzureTime(vals[0])
		if why != "" {
			return Trace{}, t.errAt(0, why)
		}
		prompt, err := t.length(vals, 1, "prompt")
		if err != nil {
			return Trace{}, err
		}
		output, err := t.length(vals, 2, "output")
		if err != nil {
			return Trace{}, err
		}
		stamps = append(stamps, stamp{sec, nsec, line})
		rs = append(rs, Request{PromptTokens: prompt, OutputTokens: output})
	}
	if len(rs) == 0 {
		return Trace{}, noRequests(name, "rows of "+strings.Join(azureColumns, ","))
	}
	first := 0
	for i, s := range stamps {
		if s.sec < stamps[first].sec || s.sec == stamps[first].sec && s.nsec < stamps[first].nsec {
			first = i
		}
	}
	o := stamps[first]
	for i, s := range stamps {
		// Seconds first: the difference of two Unix times cannot wrap, but
		// its nanoseconds could (year 1 to 9999 spans 3e20 ns).
		d := s.sec - o.sec
		var at engine.Time
		if float64(d) <= engine.HorizonSeconds {
			at = engine.Time(d)*engine.Second + engine.Time(s.nsec-o.nsec)
		}
		if float64(d) > engine.HorizonSeconds || at > engine.Horizon {
			return Trace{}, &ParseError{File: name, Row: s.line, Column: "TIMESTAMP",
				Reason: fmt.Sprintf("the row arrives %d s after the first request (line %d), past the simulator's horizon (%s, engine.Horizon); correct the date or split the trace",
					d, o.line, engine.HorizonText)}
		}
		rs[i].Arrival = at
	}
	tr := Trace{Name: name, Format: FormatAzure, Requests: rs}
	if note := sortByArrival(rs); note != "" {
		tr.Notes = append(tr.Notes, note)
	}
	origin := time.Unix(o.sec, o.nsec).UTC().Format("2006-01-02 15:04:05.0000000")
	tr.Notes = append(tr.Notes, fmt.Sprintf("arrivals count from the first request, %s UTC (line %d)", origin, o.line))
	return tr, nil
}

// parseAzureTime parses a TIMESTAMP to Unix seconds and nanoseconds, or
// says why it cannot.
func parseAzureTime(s string) (sec, nsec int64, why string) {
	bad := func(detail string) (int64, int64, string) {
		return 0, 0, fmt.Sprintf("value %s %s; want a UTC date-time like \"2023-11-16 18:15:46.6805900\" (0 to 7 fractional digits)", quote(s), detail)
	}
	v := strings.TrimSuffix(strings.TrimSuffix(s, "Z"), "+00:00")
	if len(v) < 19 {
		return bad("is not a date-time")
	}
	date, frac := v[:19], v[19:]
	if date[10] == 'T' {
		date = date[:10] + " " + date[11:]
	}
	tm, err := time.Parse("2006-01-02 15:04:05", date)
	if err != nil {
		return bad("is not a date-time")
	}
	if frac != "" {
		digits, ok := strings.CutPrefix(frac, ".")
		if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" {
			return bad("has a malformed fraction of a second or a time zone other than UTC")
		}
		if len(digits) > 7 {
			return bad(fmt.Sprintf("has %d fractional digits", len(digits)))
		}
		for i := 0; i < 9; i++ {
			nsec *= 10
			if i < len(digits) {
				nsec += int64(digits[i] - '0')
			}
		}
	}
	return tm.Unix(), nsec, ""
}
