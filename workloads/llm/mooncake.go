package llm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/conspirator-sim/conspirator/engine"
)

// maxMooncakeLine bounds one JSON line: a prompt of MaxTokens tokens has
// 195,313 hash ids, about 2.3 MB written out; 16 MiB leaves room.
const maxMooncakeLine = 16 << 20

const mooncakeExample = `{"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, ...]}`

// mooncakeWant says what each field holds, for messages.
var mooncakeWant = map[string]string{
	"timestamp":     "a number, the milliseconds since the trace's start",
	"input_length":  "a whole number of prompt tokens",
	"output_length": "a whole number of output tokens",
	"hash_ids":      "a list of non-negative integers, one per 512-token prompt block",
}

// mooncakeRow is one line of a Mooncake trace. Fields stay raw JSON
// until checked, so that a missing field, a null and a value of the wrong
// kind each get their own message.
type mooncakeRow struct {
	Timestamp    json.RawMessage `json:"timestamp"`
	InputLength  json.RawMessage `json:"input_length"`
	OutputLength json.RawMessage `json:"output_length"`
	HashIDs      json.RawMessage `json:"hash_ids"`
}

// ReadMooncake reads a Mooncake trace: JSON lines {"timestamp": ms,
// "input_length": n, "output_length": n, "hash_ids": [...]}, hash_ids
// holding one non-negative integer per 512-token block of the prompt
// (ceil(input_length/512) of them; an absent hash_ids gives a request
// without hashes). Other fields are ignored; blank lines are skipped.
// Arrivals are the timestamps as given. name is used in messages.
func ReadMooncake(r io.Reader, name string) (Trace, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxMooncakeLine)
	var rs []Request
	hashes := 0
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte(bom))
		}
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		req, err := mooncakeRequest(b, name, line)
		if err != nil {
			return Trace{}, err
		}
		if req.BlockHashes != nil {
			hashes++
		}
		rs = append(rs, req)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Trace{}, &ParseError{File: name, Row: line + 1, Reason: fmt.Sprintf("the line is longer than %d MiB; want one JSON object per line", maxMooncakeLine>>20)}
		}
		return Trace{}, fmt.Errorf("llm: %s: %w", name, err)
	}
	if len(rs) == 0 {
		return Trace{}, noRequests(name, `JSON lines {"timestamp": ms, "input_length": n, "output_length": n, "hash_ids": [...]}`)
	}
	tr := Trace{Name: name, Format: FormatMooncake, Requests: rs}
	if hashes > 0 {
		tr.BlockTokens = MooncakeBlockTokens
	}
	if note := sortByArrival(rs); note != "" {
		tr.Notes = append(tr.Notes, note)
	}
	if hashes > 0 && hashes < len(rs) {
		tr.Notes = append(tr.Notes, fmt.Sprintf("%d of %d requests have no hash_ids", len(rs)-hashes, len(rs)))
	}
	return tr, nil
}

// mooncakeRequest parses one line.
func mooncakeRequest(b []byte, name string, line int) (Request, error) {
	fail := func(col int, field, reason string) (Request, error) {
		if col == 0 && field != "" {
			// The byte column of the field's key, the first place to look.
			key, _, _ := bytes.Cut([]byte(field), []byte("["))
			if i := bytes.Index(b, append(append([]byte{'"'}, key...), '"')); i >= 0 {
				col = i + 1
			}
		}
		return Request{}, &ParseError{File: name, Row: line, Col: col, Column: field, Reason: reason}
	}
	var row mooncakeRow
	if err := json.Unmarshal(b, &row); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return fail(int(se.Offset), "", "JSON syntax: "+se.Error()+"; want one object per line, "+mooncakeExample)
		case errors.As(err, &te):
			return fail(1, "", fmt.Sprintf("the line is a JSON %s; want one object per line, %s", te.Value, mooncakeExample))
		}
		return fail(0, "", "not a JSON object: "+err.Error()+"; want one object per line, "+mooncakeExample)
	}
	text, why := jsonNumber(row.Timestamp, "timestamp")
	if why != "" {
		return fail(0, "timestamp", why)
	}
	maxMs := engine.Horizon / engine.Millisecond
	ms, ok := finiteIn(text, 0, float64(maxMs))
	if !ok {
		return fail(0, "timestamp", fmt.Sprintf("value %s is out of range; want the milliseconds since the trace's start, 0..%d (the simulator's horizon, %s)",
			quote(text), maxMs, engine.HorizonText))
	}
	var n [2]int64
	for i, f := range []struct {
		raw         json.RawMessage
		field, what string
	}{{row.InputLength, "input_length", "prompt"}, {row.OutputLength, "output_length", "output"}} {
		text, why := jsonNumber(f.raw, f.field)
		if why != "" {
			return fail(0, f.field, why)
		}
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return fail(0, f.field, fmt.Sprintf("value %s is not a whole number of tokens; write the count in digits", quote(text)))
		}
		if why := checkLength(v, f.what); why != "" {
			return fail(0, f.field, why)
		}
		n[i] = v
	}
	req := Request{Arrival: engine.Milliseconds(ms), PromptTokens: int(n[0]), OutputTokens: int(n[1])}
	if missing(row.HashIDs) {
		return req, nil
	}
	var ids []json.RawMessage
	if row.HashIDs[0] != '[' || json.Unmarshal(row.HashIDs, &ids) != nil {
		return fail(0, "hash_ids", fmt.Sprintf("a JSON %s; want %s", jsonKind(row.HashIDs), mooncakeWant["hash_ids"]))
	}
	blocks := (n[0] + MooncakeBlockTokens - 1) / MooncakeBlockTokens
	if int64(len(ids)) != blocks {
		return fail(0, "hash_ids", fmt.Sprintf("%d ids for %d prompt tokens; want one per %d-token block, %d", len(ids), n[0], MooncakeBlockTokens, blocks))
	}
	req.BlockHashes = make([]uint64, len(ids))
	for k, h := range ids {
		v, err := strconv.ParseUint(string(h), 10, 64)
		if err != nil {
			return fail(0, fmt.Sprintf("hash_ids[%d]", k), fmt.Sprintf("value %s is not an integer in 0..2^64-1", quote(string(h))))
		}
		req.BlockHashes[k] = v
	}
	return req, nil
}

// missing reports whether a field is absent or null.
func missing(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// jsonNumber returns the text of a JSON number, or why the field is not
// one.
func jsonNumber(raw json.RawMessage, field string) (string, string) {
	if missing(raw) {
		return "", "the field is missing; want " + mooncakeWant[field]
	}
	if k := jsonKind(raw); k != "number" {
		return "", fmt.Sprintf("a JSON %s; want %s", k, mooncakeWant[field])
	}
	return string(raw), ""
}

// jsonKind names the kind of a valid JSON value from its first byte.
func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return "string"
	case '[':
		return "array"
	case '{':
		return "object"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}
