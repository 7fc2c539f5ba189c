package host

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"time"
)

// Wire format of the loopback request path (little endian):
//
//	request:  reqBytes uint64, replyBytes uint64, computeBytes uint64, then reqBytes of payload
//	reply:    replyHeader (7 x int64, see below), then replyBytes of payload
//
// Server and client run in one process and share one monotonic clock origin
// (Server.origin), so the server can report absolute stage boundaries as
// nanoseconds since that origin and the client can place them on its own
// timeline: the network stage is then "client starts writing" to "server
// holds the last byte", measured on one clock.
const (
	requestHeaderLen = 24
	replyHeaderLen   = 7 * 8
	// MaxPayload bounds one request or reply (64 MiB): larger sizes are a
	// configuration mistake on a CI machine.
	MaxPayload = 64 << 20
)

// serverTimes are the server's stage boundaries for one request, in
// nanoseconds since the shared origin, and its receive CPU time.
type serverTimes struct {
	firstByte   int64 // header read returned: the request has arrived
	rxDone      int64 // the whole payload is in the receive buffer
	copyDone    int64 // copied into the destination buffer
	computeDone int64 // fixed compute over the destination done
	replyStart  int64 // about to write the reply
	cpuAt       int64 // server thread's cumulative CPU time when the request arrived, ns
	checksum    int64 // result of the compute: keeps it from being optimized away
}

// Server is a loopback TCP server that receives requests into a buffer,
// copies them into a destination buffer (the stand-in for the GPU copy),
// runs a small fixed compute and replies. It serves one connection at a
// time on one OS thread.
type Server struct {
	ln     net.Listener
	origin time.Time
	wg     sync.WaitGroup
	mu     sync.Mutex
	err    error
	conns  map[net.Conn]struct{}
}

// NewServer listens on 127.0.0.1 on a free port. origin is the clock origin
// shared with the client.
func NewServer(origin time.Time) (*Server, error) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("host: listen on loopback: %w", err)
	}
	s := &Server{ln: ln, origin: origin, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr is the server's loopback address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			err := s.serve(c)
			s.mu.Lock()
			delete(s.conns, c)
			if err != nil && s.err == nil {
				s.err = err
			}
			s.mu.Unlock()
			c.Close()
		}()
	}
}

func (s *Server) since() int64 { return int64(time.Since(s.origin)) }

// serve handles one connection until the client closes it.
func (s *Server) serve(c net.Conn) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var hdr [requestHeaderLen]byte
	var rh [replyHeaderLen]byte
	var rx, dst, reply []byte
	for {
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("host: server reading request header: %w", err)
		}
		var t serverTimes
		t.firstByte = s.since()
		// The thread has just woken from waiting for this request, and the
		// kernel folds a thread's run time into its total when it sleeps:
		// this reading is exact up to the end of the previous request's
		// work. Consecutive readings give one request's server CPU time.
		if cpu, err := ThreadCPUTime(); err == nil {
			t.cpuAt = int64(cpu)
		} else {
			t.cpuAt = -1
		}
		n := binary.LittleEndian.Uint64(hdr[0:])
		m := binary.LittleEndian.Uint64(hdr[8:])
		k := binary.LittleEndian.Uint64(hdr[16:])
		if n > MaxPayload || m > MaxPayload || k > MaxPayload {
			return fmt.Errorf("host: server got request of %d bytes, reply %d, compute %d: each must be <= %d", n, m, k, MaxPayload)
		}
		rx = grow(rx, int(n))
		if _, err := io.ReadFull(c, rx); err != nil {
			return fmt.Errorf("host: server reading %d-byte payload: %w", n, err)
		}
		t.rxDone = s.since()
		dst = grow(dst, int(n))
		copy(dst, rx)
		t.copyDone = s.since()
		t.checksum = int64(Compute(dst, int(k)))
		t.computeDone = s.since()
		reply = grow(reply, int(m))
		t.replyStart = s.since()
		for i, v := range []int64{t.firstByte, t.rxDone, t.copyDone, t.computeDone, t.replyStart, t.cpuAt, t.checksum} {
			binary.LittleEndian.PutUint64(rh[8*i:], uint64(v))
		}
		// One write for header and payload: two would cost a second
		// system call and, with small replies, a second segment.
		if _, err := (&net.Buffers{rh[:], reply}).WriteTo(c); err != nil {
			return fmt.Errorf("host: server writing %d-byte reply: %w", m, err)
		}
	}
}

// Close stops the server and waits for its goroutines; it returns the
// first error a connection ended with.
func (s *Server) Close() error {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// grow returns b resized to n bytes, reusing its storage when it is large
// enough. A fresh buffer is filled with a pattern so that its pages are
// mapped before the first timed use.
func grow(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	b = make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// Compute is the host backend's fixed small compute: an FNV-1a hash over
// the first k bytes of b (cycling over b when k exceeds it). It stands in
// for the GPU kernel with a known, size-proportional CPU cost.
func Compute(b []byte, k int) uint64 {
	h := uint64(14695981039346656037)
	if len(b) == 0 {
		return h
	}
	for done := 0; done < k; {
		n := min(k-done, len(b))
		for _, c := range b[:n] {
			h ^= uint64(c)
			h *= 1099511628211
		}
		done += n
	}
	return h
}

// Client sends requests to a Server over one loopback connection.
type Client struct {
	c       net.Conn
	origin  time.Time
	payload []byte
	reply   []byte
}

// Dial connects to a loopback server sharing origin. Any address but
// 127.0.0.1 is refused: the host backend never leaves the machine.
func Dial(addr string, origin time.Time) (*Client, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" {
		return nil, fmt.Errorf("host: address %q: the host backend only talks to 127.0.0.1", addr)
	}
	c, err := net.DialTimeout("tcp4", addr, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("host: dial %s: %w", addr, err)
	}
	return &Client{c: c, origin: origin}, nil
}

// Close closes the connection.
func (cl *Client) Close() error { return cl.c.Close() }

// RequestTimes are one request's stage durations, all in nanoseconds on
// the shared clock.
type RequestTimes struct {
	Network  time.Duration // client starts writing -> server holds the whole payload
	Send     time.Duration // the client's write call (returns once the kernel has the data)
	Copy     time.Duration // server copy into the destination buffer
	Compute  time.Duration // fixed compute
	Reply    time.Duration // server starts writing the reply -> client holds all of it
	EndToEnd time.Duration // client starts writing -> client holds the whole reply
	// ServerCPUAt and ClientCPUAt are the server's and the client's
	// cumulative thread CPU times (getrusage RUSAGE_THREAD) read right after
	// each woke for this request (-1 when unavailable). The difference
	// between two consecutive requests' readings is one request's CPU time
	// on that side, exact because each thread sleeps in between; see
	// PathRun.CPU. The client's side includes the loopback transmit path,
	// which on Linux also runs the receive protocol processing (softirq)
	// in the sender's context.
	ServerCPUAt time.Duration
	ClientCPUAt time.Duration
}

// Do sends one request of n payload bytes asking for m reply bytes and k
// bytes of compute, waits for the reply and returns the stage times. The
// deadline bounds the whole exchange.
func (cl *Client) Do(n, m, k int64, deadline time.Time) (RequestTimes, error) {
	var rt RequestTimes
	if n < 0 || m < 0 || k < 0 || n > MaxPayload || m > MaxPayload || k > MaxPayload {
		return rt, fmt.Errorf("host: request %d bytes, reply %d, compute %d: each must be in [0, %d]", n, m, k, MaxPayload)
	}
	if err := cl.c.SetDeadline(deadline); err != nil {
		return rt, err
	}
	cl.payload = grow(cl.payload, requestHeaderLen+int(n))
	binary.LittleEndian.PutUint64(cl.payload[0:], uint64(n))
	binary.LittleEndian.PutUint64(cl.payload[8:], uint64(m))
	binary.LittleEndian.PutUint64(cl.payload[16:], uint64(k))
	start := time.Since(cl.origin)
	if _, err := cl.c.Write(cl.payload); err != nil {
		return rt, fmt.Errorf("host: client writing %d-byte request: %w", n, err)
	}
	sent := time.Since(cl.origin)
	cl.reply = grow(cl.reply, replyHeaderLen+int(m))
	if _, err := io.ReadFull(cl.c, cl.reply); err != nil {
		return rt, fmt.Errorf("host: client reading %d-byte reply: %w", m, err)
	}
	end := time.Since(cl.origin)
	rt.ClientCPUAt = -1
	if cpu, err := ThreadCPUTime(); err == nil {
		rt.ClientCPUAt = cpu
	}
	var st [7]int64
	for i := range st {
		st[i] = int64(binary.LittleEndian.Uint64(cl.reply[8*i:]))
	}
	t := serverTimes{firstByte: st[0], rxDone: st[1], copyDone: st[2], computeDone: st[3], replyStart: st[4], cpuAt: st[5]}
	rt.Send = sent - start
	rt.Network = time.Duration(t.rxDone) - start
	rt.Copy = time.Duration(t.copyDone - t.rxDone)
	rt.Compute = time.Duration(t.computeDone - t.copyDone)
	rt.Reply = end - time.Duration(t.replyStart)
	rt.EndToEnd = end - start
	rt.ServerCPUAt = time.Duration(t.cpuAt)
	return rt, nil
}
