package llm

import (
	"fmt"
	"io"
	"strings"

	"github.com/conspirator-sim/conspirator/engine"
)

var burstColumns = []string{"Timestamp", "Request tokens", "Response tokens"}

// ReadBurstGPT reads a BurstGPT trace: CSV with the columns Timestamp
// (seconds from the trace's start, a number), Model, Request tokens (the
// prompt), Response tokens (the output), Total tokens and Log Type (the
// v2 files add Session ID and Elapsed time); only Timestamp and the two
// token counts are read. A row with 0 response tokens is a failed request
// in BurstGPT: it is left out and counted in a note. Arrivals are the
// timestamps as given. name is used in messages.
func ReadBurstGPT(r io.Reader, name string) (Trace, error) {
	t, err := openCSV(r, name, burstColumns)
	if err != nil {
		return Trace{}, err
	}
	var (
		rs     []Request
		vals   []string
		failed int
	)
	for {
		vals, _, err = t.next(vals)
		if err == io.EOF {
			break
		}
		if err != nil {
			return Trace{}, err
		}
		at, ok := finiteIn(vals[0], 0, engine.HorizonSeconds)
		if !ok {
			return Trace{}, t.errAt(0, fmt.Sprintf("value %s is not a number of seconds in 0..%.4g (the simulator's horizon, %s); write the seconds since the trace's start, e.g. 5 or 12.25",
				quote(vals[0]), engine.HorizonSeconds, engine.HorizonText))
		}
		out, err := t.tokens(vals, 2)
		if err != nil {
			return Trace{}, err
		}
		if out == 0 {
			failed++
			continue
		}
		if why := checkLength(out, "output"); why != "" {
			return Trace{}, t.errAt(2, why)
		}
		prompt, err := t.length(vals, 1, "prompt")
		if err != nil {
			return Trace{}, err
		}
		rs = append(rs, Request{Arrival: engine.Seconds(at), PromptTokens: prompt, OutputTokens: int(out)})
	}
	if len(rs) == 0 {
		return Trace{}, noRequests(name, fmt.Sprintf("rows of %s with Response tokens > 0 (%d failed %s left out)",
			strings.Join(burstColumns, ","), failed, plural(failed, "row", "rows")))
	}
	tr := Trace{Name: name, Format: FormatBurstGPT, Requests: rs}
	if note := sortByArrival(rs); note != "" {
		tr.Notes = append(tr.Notes, note)
	}
	if failed > 0 {
		tr.Notes = append(tr.Notes, fmt.Sprintf("%d failed %s (Response tokens 0) left out", failed, plural(failed, "request", "requests")))
	}
	return tr, nil
}
