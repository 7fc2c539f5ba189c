package llm

import (
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/conspirator-sim/conspirator/engine"
)

// req is a short Request literal for the tables: id, arrival, prompt,
// output.
func req(id int, at engine.Time, prompt, output int, hashes ...uint64) Request {
	return Request{ID: id, Arrival: at, PromptTokens: prompt, OutputTokens: output, BlockHashes: hashes}
}

// checkTrace compares a read trace with the expected requests and notes.
func checkTrace(t *testing.T, tr Trace, want []Request, notes []string) {
	t.Helper()
	if !reflect.DeepEqual(tr.Requests, want) {
		t.Errorf("requests\n got %+v\nwant %+v", tr.Requests, want)
	}
	if !slices.Equal(tr.Notes, notes) {
		t.Errorf("notes\n got %q\nwant %q", tr.Notes, notes)
	}
}

// A byte-order mark, CRLF line ends, 0 to 7 fractional digits and rows
// out of order. The earliest row is line 4 (46.5 s), so the arrivals are
// line 2: 46.68059 - 46.5 = 0.18059 s, line 3: 0.5 s, line 4: 0, line 5:
// 0.18059 s again. Lines 4 and 5 arrive before line 3 (47 s): 2 rows out
// of order; the stable sort puts line 2 before line 5 (equal arrivals).
func TestReadAzure(t *testing.T) {
	in := "\ufeffTIMESTAMP,ContextTokens,GeneratedTokens\r\n" +
		"2023-11-16 18:15:46.6805900,374,44\r\n" +
		"2023-11-16 18:15:47,10,1\r\n" +
		"2023-11-16 18:15:46.5,20,2\r\n" +
		"2023-11-16 18:15:46.68059,5,3\r\n"
	tr, err := ReadAzure(strings.NewReader(in), "conv.csv")
	if err != nil {
		t.Fatal(err)
	}
	ms := engine.Millisecond
	checkTrace(t, tr, []Request{
		req(0, 0, 20, 2),
		req(1, 180590*engine.Microsecond, 374, 44),
		req(2, 180590*engine.Microsecond, 5, 3),
		req(3, 500*ms, 10, 1),
	}, []string{
		"2 rows out of order: sorted by arrival (ties keep file order)",
		"arrivals count from the first request, 2023-11-16 18:15:46.5000000 UTC (line 4)",
	})
	if tr.Name != "conv.csv" || tr.Format != FormatAzure || tr.BlockTokens != 0 {
		t.Errorf("name %q format %q block tokens %d", tr.Name, tr.Format, tr.BlockTokens)
	}
}

// The 2024 week's spellings: "T" between date and time, "Z" or "+00:00",
// and columns in another order with one more.
func TestReadAzureTimeForms(t *testing.T) {
	in := "GeneratedTokens,ContextTokens,TIMESTAMP,Extra\n" +
		"1,2,2024-05-10T00:00:00.009930Z,x\n" +
		"3,4,2024-05-10 00:00:01+00:00,y\n"
	tr, err := ReadAzure(strings.NewReader(in), "week.csv")
	if err != nil {
		t.Fatal(err)
	}
	checkTrace(t, tr, []Request{req(0, 0, 2, 1), req(1, engine.Second-9930*engine.Microsecond, 4, 3)},
		[]string{"arrivals count from the first request, 2024-05-10 00:00:00.0099300 UTC (line 2)"})
}

// Each bad input is refused naming file:line:column, the column, and the
// fix. 1970 to 2090 is 120 years with 30 leap days (1972 to 2088), 43,830
// days or 3,786,912,000 s, past the 100-year horizon. Columns are byte positions: "2023-11-16 18:15:46," is 20 bytes, so
// the second field starts at column 21, the third at 23 when the second
// is one digit.
func TestReadAzureRefuses(t *testing.T) {
	const h = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
	const ok = "2023-11-16 18:15:46,3,4\n"
	for _, c := range []struct{ name, in, want string }{
		{"empty", "", "x.csv: the file is empty; want a header row naming TIMESTAMP,ContextTokens,GeneratedTokens"},
		{"header only", h, "x.csv: the trace holds no requests"},
		{"missing column", "TIMESTAMP,ContextTokens\n" + ok, `x.csv:1: the header "TIMESTAMP,ContextTokens" lacks GeneratedTokens`},
		{"bad hour", h + ok + "2023-11-16 25:00:00,1,1\n", `x.csv:3:1: TIMESTAMP: value "2023-11-16 25:00:00" is not a date-time; want a UTC date-time like`},
		{"8 digits", h + "2023-11-16 18:15:46.12345678,1,1\n", "x.csv:2:1: TIMESTAMP: value \"2023-11-16 18:15:46.12345678\" has 8 fractional digits"},
		{"other zone", h + "2023-11-16 18:15:46.5+01:00,1,1\n", "time zone other than UTC"},
		{"zero prompt", h + "2023-11-16 18:15:46,0,5\n", "x.csv:2:21: ContextTokens: 0 prompt tokens; a request has at least 1"},
		{"negative output", h + "2023-11-16 18:15:46,3,-1\n", "x.csv:2:23: GeneratedTokens: -1 output tokens; a request has at least 1"},
		{"huge output", h + "2023-11-16 18:15:46,3,1000000000000\n", "x.csv:2:23: GeneratedTokens: 1000000000000 output tokens is more than 100000000"},
		{"not a number", h + ok + "2023-11-16 18:15:46,abc,5\n", `x.csv:3:21: ContextTokens: value "abc" is not a whole number of tokens`},
		{"fraction", h + "2023-11-16 18:15:46,3.5,5\n", `x.csv:2:21: ContextTokens: value "3.5" is not a whole number`},
		{"short row", h + "2023-11-16 18:15:46,3\n", "x.csv:2: the row has 2 fields; want at least 3"},
		{"bare quote", h + ok + "2023-11-16 18:15:46,3,4\"\n", `x.csv:3:24: CSV syntax: bare " in non-quoted-field; quote a field`},
		{"past horizon", h + "1970-01-01 00:00:00,1,1\n2090-01-01 00:00:00,1,1\n", "x.csv:3: TIMESTAMP: the row arrives 3786912000 s after the first request (line 2), past the simulator's horizon (100 years"},
		{"past horizon, earliest last", h + "2090-01-01 00:00:00,1,1\n1970-01-01 00:00:00,1,1\n", "x.csv:2: TIMESTAMP: the row arrives 3786912000 s after the first request (line 3)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadAzure(strings.NewReader(c.in), "x.csv")
			wantErr(t, err, c.want)
		})
	}
}

func wantErr(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v; want one containing %q", err, want)
	}
}

// Hash ids per 512-token block (1025 tokens: 3 blocks), a fractional
// millisecond, an unknown field, the largest uint64 id, a blank line, a
// byte-order mark; line 3 (1000.5 ms) arrives before line 1 (1500 ms).
func TestReadMooncake(t *testing.T) {
	in := "\ufeff" + `{"timestamp": 1500, "input_length": 1025, "output_length": 7, "hash_ids": [0, 1, 2]}` + "\n\n" +
		`{"timestamp": 1000.5, "input_length": 512, "output_length": 1, "hash_ids": [0], "extra": "x"}` + "\n" +
		`{"timestamp": 2000, "input_length": 10, "output_length": 3, "hash_ids": [18446744073709551615]}`
	tr, err := ReadMooncake(strings.NewReader(in), "m.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	checkTrace(t, tr, []Request{
		req(0, 1000500*engine.Microsecond, 512, 1, 0),
		req(1, 1500*engine.Millisecond, 1025, 7, 0, 1, 2),
		req(2, 2000*engine.Millisecond, 10, 3, 1<<64-1),
	}, []string{"1 row out of order: sorted by arrival (ties keep file order)"})
	if tr.BlockTokens != 512 || tr.Format != FormatMooncake {
		t.Errorf("block tokens %d format %q; want 512, mooncake", tr.BlockTokens, tr.Format)
	}

	// Without hash_ids: BlockTokens 0 and nil hashes; with some: a note.
	tr, err = ReadMooncake(strings.NewReader(`{"timestamp": 0, "input_length": 5, "output_length": 6}`), "n.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	checkTrace(t, tr, []Request{req(0, 0, 5, 6)}, nil)
	if tr.BlockTokens != 0 {
		t.Errorf("block tokens %d; want 0 without hashes", tr.BlockTokens)
	}
	tr, err = ReadMooncake(strings.NewReader(`{"timestamp": 0, "input_length": 5, "output_length": 6}`+"\n"+`{"timestamp": 1, "input_length": 5, "output_length": 6, "hash_ids": [9]}`), "n.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	checkTrace(t, tr, []Request{req(0, 0, 5, 6), req(1, engine.Millisecond, 5, 6, 9)}, []string{"1 of 2 requests have no hash_ids"})
}

// Columns are the byte position of the field's key: in
// `{"timestamp": 0, "input_length"` the key's quote is the 18th byte.
func TestReadMooncakeRefuses(t *testing.T) {
	const ok = `{"timestamp": 0, "input_length": 5, "output_length": 6}` + "\n"
	for _, c := range []struct{ name, in, want string }{
		{"empty", "", "m.jsonl: the trace holds no requests"},
		{"blank lines", "\n \n", "m.jsonl: the trace holds no requests"},
		{"zero input", `{"timestamp": 0, "input_length": 0, "output_length": 1}`, "m.jsonl:1:18: input_length: 0 prompt tokens; a request has at least 1"},
		{"negative output", ok + `{"timestamp": 0, "input_length": 3, "output_length": -2}`, "m.jsonl:2:37: output_length: -2 output tokens"},
		{"huge output", `{"timestamp": 0, "input_length": 3, "output_length": 1e12}`, `m.jsonl:1:37: output_length: value "1e12" is not a whole number of tokens`},
		{"missing output", `{"timestamp": 0, "input_length": 3}`, "m.jsonl:1: output_length: the field is missing; want a whole number of output tokens"},
		{"missing timestamp", `{"input_length": 3, "output_length": 3}`, "m.jsonl:1: timestamp: the field is missing; want a number, the milliseconds since the trace's start"},
		{"negative timestamp", `{"timestamp": -1, "input_length": 3, "output_length": 3}`, `m.jsonl:1:2: timestamp: value "-1" is out of range; want the milliseconds since the trace's start, 0..3155760000000`},
		{"past horizon", `{"timestamp": 1e300, "input_length": 3, "output_length": 3}`, `timestamp: value "1e300" is out of range`},
		{"syntax", ok + ok + `{"timestamp": 0,`, "m.jsonl:3:16: JSON syntax: unexpected end of JSON input"},
		{"trailing data", `{"timestamp": 0, "input_length": 5, "output_length": 6} x`, "m.jsonl:1:57: JSON syntax: invalid character 'x' after top-level value"},
		{"hash_ids not a list", `{"timestamp": 0, "input_length": 5, "output_length": 6, "hash_ids": "abc"}`, "m.jsonl:1:57: hash_ids: a JSON string; want a list of non-negative integers"},
		{"negative hash", `{"timestamp": 0, "input_length": 5, "output_length": 6, "hash_ids": [-1]}`, `m.jsonl:1:57: hash_ids[0]: value "-1" is not an integer in 0..2^64-1`},
		{"hash count", `{"timestamp": 0, "input_length": 1025, "output_length": 6, "hash_ids": [1]}`, "hash_ids: 1 ids for 1025 prompt tokens; want one per 512-token block, 3"},
		{"not an object", `[1, 2]`, `m.jsonl:1:1: the line is a JSON array; want one object per line, {"timestamp": 27482`},
		{"string length", `{"timestamp": 0, "input_length": "5", "output_length": 6}`, "m.jsonl:1:18: input_length: a JSON string; want a whole number of prompt tokens"},
		{"null length", `{"timestamp": 0, "input_length": null, "output_length": 6}`, "m.jsonl:1:18: input_length: the field is missing"},
		{"list of lists", `{"timestamp": 0, "input_length": 5, "output_length": 6, "hash_ids": [[1]]}`, `m.jsonl:1:57: hash_ids[0]: value "[1]" is not an integer`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadMooncake(strings.NewReader(c.in), "m.jsonl")
			wantErr(t, err, c.want)
		})
	}
}

// Failed requests (0 response tokens, here line 4) are left out and
// counted; line 5 (20.25 s) arrives before line 3 (45 s).
func TestReadBurstGPT(t *testing.T) {
	in := "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n" +
		"5,ChatGPT,472,18,490,Conversation log\n" +
		"45,ChatGPT,1087,230,1317,Conversation log\n" +
		"1106,ChatGPT,0,0,0,Conversation log\n" +
		"20.25,GPT-4,417,276,693,API log\n"
	tr, err := ReadBurstGPT(strings.NewReader(in), "b.csv")
	if err != nil {
		t.Fatal(err)
	}
	checkTrace(t, tr, []Request{
		req(0, 5*engine.Second, 472, 18),
		req(1, 20250*engine.Millisecond, 417, 276),
		req(2, 45*engine.Second, 1087, 230),
	}, []string{
		"1 row out of order: sorted by arrival (ties keep file order)",
		"1 failed request (Response tokens 0) left out",
	})
}

// "5,ChatGPT," is 10 bytes: Request tokens start at column 11.
func TestReadBurstGPTRefuses(t *testing.T) {
	const h = "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
	for _, c := range []struct{ name, in, want string }{
		{"empty", "", "b.csv: the file is empty; want a header row naming Timestamp,Request tokens,Response tokens"},
		{"only failures", h + "1,ChatGPT,0,0,0,Conversation log\n2,ChatGPT,5,0,5,API log\n", "holds no requests; want rows of Timestamp,Request tokens,Response tokens with Response tokens > 0 (2 failed rows left out)"},
		{"zero request", h + "5,ChatGPT,0,7,7,Conversation log\n", "b.csv:2:11: Request tokens: 0 prompt tokens; a request has at least 1"},
		{"negative response", h + "5,ChatGPT,3,-7,7,Conversation log\n", "b.csv:2:13: Response tokens: -7 output tokens"},
		{"negative time", h + "-5,ChatGPT,3,7,10,Conversation log\n", `b.csv:2:1: Timestamp: value "-5" is not a number of seconds in 0..3.156e+09`},
		{"time past horizon", h + "4e9,ChatGPT,3,7,10,Conversation log\n", `b.csv:2:1: Timestamp: value "4e9" is not a number of seconds`},
		{"NaN time", h + "NaN,ChatGPT,3,7,10,Conversation log\n", `Timestamp: value "NaN" is not a number`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadBurstGPT(strings.NewReader(c.in), "b.csv")
			wantErr(t, err, c.want)
		})
	}
}

func TestDetect(t *testing.T) {
	for _, c := range []struct{ head, want, err string }{
		{"\ufeffTIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-", FormatAzure, ""},
		{"TIMESTAMP,ContextTokens,GeneratedTokens", FormatAzure, ""},
		{`{"timestamp": 0, "input_length": 1}`, FormatMooncake, ""},
		{"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,", FormatBurstGPT, ""},
		{"Timestamp,Session ID,Model,Request tokens,Response tokens,Total tokens,Log Type,Elapsed time", FormatBurstGPT, ""},
		{"", "", "the first line is empty"},
		{"a,b,c\n", "", `cannot tell the format from the first line "a,b,c"`},
	} {
		got, err := Detect([]byte(c.head))
		if got != c.want || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("Detect(%q) = %q, %v; want %q, %q", c.head, got, err, c.want, c.err)
		}
	}
}

// Read detects the format, and refuses an unknown one.
func TestRead(t *testing.T) {
	tr, err := Read("", strings.NewReader("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,3,4\n"), "a.csv")
	if err != nil || tr.Format != FormatAzure || len(tr.Requests) != 1 {
		t.Fatalf("Read detected %q with %d requests, %v; want azure, 1", tr.Format, len(tr.Requests), err)
	}
	_, err = Read("", strings.NewReader("x,y\n"), "a.csv")
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Row != 1 {
		t.Errorf("undetectable: %v; want a ParseError at line 1", err)
	}
	_, err = Read("parquet", strings.NewReader(""), "a.parquet")
	wantErr(t, err, `a.parquet: unknown trace format "parquet"; want one of azure, burstgpt, mooncake`)
	tr, err = Read("MOONCAKE", strings.NewReader(`{"timestamp": 0, "input_length": 5, "output_length": 6}`), "m")
	if err != nil || tr.Format != FormatMooncake {
		t.Errorf("Read(MOONCAKE) = %q, %v; want mooncake", tr.Format, err)
	}
}

// A line longer than 16 MiB is refused, naming it, instead of growing the
// buffer without bound.
func TestReadMooncakeLongLine(t *testing.T) {
	in := `{"timestamp": 0, "input_length": 5, "output_length": 6}` + "\n" + strings.Repeat(" ", 17<<20) + "\n"
	_, err := ReadMooncake(strings.NewReader(in), "m.jsonl")
	wantErr(t, err, "m.jsonl:2: the line is longer than 16 MiB; want one JSON object per line")
}

// ReadFile refuses a path that is not a regular file, and reads one that is.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadFile(dir, "")
	wantErr(t, err, dir+" is a directory, not a regular file")
	path := dir + "/b.csv"
	if err := os.WriteFile(path, []byte("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr, err := ReadFile(path, "")
	if err != nil || tr.Name != path || tr.Format != FormatBurstGPT || len(tr.Requests) != 1 {
		t.Errorf("ReadFile = %+v, %v; want 1 burstgpt request named %s", tr, err, path)
	}
}
