package llm

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/conspirator-sim/conspirator/internal/inputfile"
)

// Format names.
const (
	FormatAzure     = "azure"
	FormatMooncake  = "mooncake"
	FormatBurstGPT  = "burstgpt"
	FormatSynthetic = "synthetic" // Trace.Format of Synthesize's traces; not readable
)

// Formats returns the names Read accepts.
func Formats() []string { return []string{FormatAzure, FormatBurstGPT, FormatMooncake} }

const bom = "\ufeff"

// Detect returns the format of a trace from its first bytes (a UTF-8
// byte-order mark is skipped): a JSON object on the first line is
// Mooncake's; a CSV header with TIMESTAMP, ContextTokens and
// GeneratedTokens is Azure's; one with Request tokens and Response tokens
// is BurstGPT's. head need hold only the first line.
func Detect(head []byte) (string, error) {
	line, _, _ := bytes.Cut(bytes.TrimPrefix(head, []byte(bom)), []byte("\n"))
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return "", fmt.Errorf("the first line is empty; want a CSV header (azure, burstgpt) or a JSON object (mooncake)")
	}
	if line[0] == '{' {
		return FormatMooncake, nil
	}
	cols := map[string]bool{}
	for _, c := range strings.Split(string(line), ",") {
		cols[strings.ToLower(strings.Trim(strings.TrimSpace(c), `"`))] = true
	}
	switch {
	case cols["timestamp"] && cols["contexttokens"] && cols["generatedtokens"]:
		return FormatAzure, nil
	case cols["request tokens"] && cols["response tokens"]:
		return FormatBurstGPT, nil
	}
	return "", fmt.Errorf("cannot tell the format from the first line %s; want an Azure header (%s), a BurstGPT header (%s) or a Mooncake JSON line, or name the format (%s)",
		quote(string(line)), strings.Join(azureColumns, ","), strings.Join(burstColumns, ","), strings.Join(Formats(), ", "))
}

// Read reads a trace in the given format ("" detects it with Detect) from
// r; name is used in messages and as Trace.Name. Every reader refuses, with
// a *ParseError naming name:line:column, the field and the fix: a row it
// cannot parse, a length <= 0 or above MaxTokens, an arrival past
// engine.Horizon, and a file with no requests. Rows out of time order are
// sorted, and Trace.Notes says how many.
func Read(format string, r io.Reader, name string) (Trace, error) {
	if format == "" {
		br := bufio.NewReaderSize(r, 64<<10)
		head, _ := br.Peek(64 << 10)
		f, err := Detect(head)
		if err != nil {
			return Trace{}, &ParseError{File: name, Row: 1, Reason: err.Error()}
		}
		format, r = f, br
	}
	switch strings.ToLower(format) {
	case FormatAzure:
		return ReadAzure(r, name)
	case FormatMooncake:
		return ReadMooncake(r, name)
	case FormatBurstGPT:
		return ReadBurstGPT(r, name)
	}
	return Trace{}, fmt.Errorf("llm: %s: unknown trace format %s; want one of %s, or \"\" to detect it", name, quote(format), strings.Join(Formats(), ", "))
}

// ReadFile reads the trace at path (format as for Read), refusing a path
// that is not a regular file.
func ReadFile(path, format string) (Trace, error) {
	f, err := inputfile.Open(path)
	if err != nil {
		return Trace{}, err
	}
	defer f.Close()
	return Read(format, f, path)
}

// noRequests is the error for a trace without a request.
func noRequests(name, want string) error {
	return &ParseError{File: name, Reason: "the trace holds no requests; want " + want}
}
