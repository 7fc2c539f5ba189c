// Package inputfile opens the files a user gives the simulator to read
// (scenarios, traces, node and job lists, calibration imports and
// profiles), refusing at once, with the path, anything that is not a
// regular file: a named pipe (FIFO) would block the open or the read
// forever, a character device such as /dev/zero or /dev/urandom never
// ends, a socket cannot be opened, a directory holds no data. One helper,
// so that every reader refuses them alike (issue 40).
package inputfile

import (
	"fmt"
	"io/fs"
	"os"
)

// NotRegularError is a path that is not a regular file.
type NotRegularError struct {
	Path string
	Kind string // "a directory", "a named pipe (FIFO)", ...
}

func (e *NotRegularError) Error() string {
	if e.Kind == "a directory" {
		return fmt.Sprintf("%s is a directory, not a regular file; give a file", e.Path)
	}
	return fmt.Sprintf("%s is %s, not a regular file; give a regular file (a pipe or device would block or never end: copy its data into a file first)", e.Path, e.Kind)
}

// Check returns a *NotRegularError unless mode is a regular file's.
func Check(path string, mode fs.FileMode) error {
	if mode.IsRegular() {
		return nil
	}
	return &NotRegularError{Path: path, Kind: kind(mode)}
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "not a regular file (" + m.String() + ")"
}

// Stat is os.Stat (following links) followed by Check.
func Stat(path string) (fs.FileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	return st, Check(path, st.Mode())
}

// Open opens path for reading if it is a regular file, and refuses it at
// once otherwise: it stats the path before opening, opens without
// blocking (O_NONBLOCK where the system has it, so that a FIFO put in
// the file's place between the two calls cannot block the open), and
// checks the opened file again.
func Open(path string) (*os.File, error) {
	if _, err := Stat(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil {
		err = Check(path, st.Mode())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
