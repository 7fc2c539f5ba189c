package inputfile

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Every kind of non-regular path is refused at once, naming the path and
// its kind; a regular file (and a link to one) opens.
func TestOpenRefusesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "a.csv")
	if err := os.WriteFile(regular, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink(regular, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("unix socket: %v", err)
	}
	defer l.Close()
	for _, c := range []struct {
		path, want string // want "": opens
	}{
		{regular, ""},
		{link, ""},
		{fifo, "is a named pipe (FIFO), not a regular file"},
		{sock, "is a socket, not a regular file"},
		{"/dev/zero", "is a character device, not a regular file"},
		{"/dev/null", "is a character device, not a regular file"},
		{dir, "is a directory, not a regular file"},
	} {
		done := make(chan error, 1)
		go func() {
			f, err := Open(c.path)
			if err == nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Open(%s): %v, want it open", c.path, err)
			case c.want != "":
				var nr *NotRegularError
				if !errors.As(err, &nr) || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) {
					t.Errorf("Open(%s): %v, want a *NotRegularError naming the path and %q", c.path, err, c.want)
				}
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Open(%s) blocked", c.path)
		}
	}
}
