package host

import (
	"fmt"
	"runtime"
	"time"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/realhw"
)

// PathConfig configures a real run of the TCP request path over loopback.
type PathConfig struct {
	// Sizes are the request payload sizes in bytes; requests cycle through
	// them in order (size i%len for request i) so that slow drift of the
	// machine spreads evenly over the sizes.
	Sizes []int64
	// Requests is the number of measured requests per size (> 0).
	Requests int
	// Warmup requests per size are sent first and not recorded.
	Warmup int
	// ReplyBytes is the reply payload (default 2000, 1000 FP16 logits).
	ReplyBytes int64
	// ComputeBytes is the fixed compute's input (default 4096 bytes).
	ComputeBytes int64
	// Load is the background duty cycle u during the run (0..0.9), with
	// LoadWorkers threads (0 = one per CPU).
	Load        float64
	LoadWorkers int
	// NoPin leaves the client and server threads, and the load workers,
	// free to migrate. By
	// default the whole process is pinned to its first allowed CPU for the
	// run (as `taskset -c` would), with one background worker on that
	// core too. Unpinned, the two threads land on one core in some runs
	// and on two in others, and on a VM a wake-up across cores costs tens
	// of microseconds more (the idle vCPU must be woken by the hypervisor):
	// the unloaded median then differs by 2x from run to run, which no
	// calibration can carry over to a later run.
	NoPin bool
	// Timeout bounds the whole run (default 60 s); a run that reaches it
	// returns an error, not partial results.
	Timeout time.Duration
}

// Defaults for PathConfig's zero fields.
const (
	DefaultReplyBytes   = 2000
	DefaultComputeBytes = 4096
	maxRequests         = 1_000_000
)

func (c *PathConfig) defaults() error {
	if len(c.Sizes) == 0 {
		return fmt.Errorf("host: TCP path run needs at least one request size")
	}
	for i, n := range c.Sizes {
		if n < 0 || n > MaxPayload {
			return fmt.Errorf("host: request size %d (sizes[%d]) must be in [0, %d]", n, i, MaxPayload)
		}
	}
	if c.Requests <= 0 || c.Requests*len(c.Sizes) > maxRequests {
		return fmt.Errorf("host: requests per size %d must be in [1, %d/%d sizes]", c.Requests, maxRequests, len(c.Sizes))
	}
	if c.Warmup < 0 || c.Warmup > maxRequests {
		return fmt.Errorf("host: warmup %d must be in [0, %d]", c.Warmup, maxRequests)
	}
	if c.ReplyBytes == 0 {
		c.ReplyBytes = DefaultReplyBytes
	}
	if c.ComputeBytes == 0 {
		c.ComputeBytes = DefaultComputeBytes
	}
	if c.ReplyBytes < 0 || c.ReplyBytes > MaxPayload || c.ComputeBytes < 0 || c.ComputeBytes > MaxPayload {
		return fmt.Errorf("host: reply %d and compute %d bytes must be in [0, %d]", c.ReplyBytes, c.ComputeBytes, MaxPayload)
	}
	if c.Timeout == 0 {
		c.Timeout = time.Minute
	}
	if c.Timeout < 0 {
		return fmt.Errorf("host: timeout %v must be > 0", c.Timeout)
	}
	return nil
}

// Request is one measured request of a path run.
type Request struct {
	Bytes int64
	RequestTimes
	// ServerCPU and ClientCPU are this request's CPU time on each side,
	// from consecutive RequestTimes CPU readings; CPUValid is false where a
	// reading was missing (the last request has no next server reading).
	ServerCPU, ClientCPU time.Duration
	CPUValid             bool
}

// PathRun is the result of RunTCPPath.
type PathRun struct {
	Config   PathConfig
	Requests []Request // in the order sent
	Load     LoadReport
	Wall     time.Duration // the whole run, warm-up included
}

// RunTCPPath starts a loopback server, a background load if asked, and
// sends Warmup+Requests requests per size one at a time (closed loop, one
// outstanding request), recording each request's stage times. Everything
// is torn down before it returns.
func RunTCPPath(cfg PathConfig) (*PathRun, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	origin := time.Now()
	deadline := origin.Add(cfg.Timeout)
	srv, err := NewServer(origin)
	if err != nil {
		return nil, err
	}
	cl, err := Dial(srv.Addr(), origin)
	if err != nil {
		srv.Close()
		return nil, err
	}
	// The load's CPU list is read before the process is pinned.
	load, err := StartLoad(LoadConfig{Fraction: cfg.Load, Workers: cfg.LoadWorkers, MaxDuration: cfg.Timeout, NoPin: cfg.NoPin})
	if err != nil {
		cl.Close()
		srv.Close()
		return nil, err
	}
	unpin := func() {}
	if !cfg.NoPin {
		if unpin, err = pinProcess(allowedCPUs()[0]); err != nil {
			load.Stop()
			cl.Close()
			srv.Close()
			return nil, err
		}
	}
	// Let the load workers (running since StartLoad returned) pass a few
	// periods before measuring.
	if cfg.Load > 0 {
		time.Sleep(20 * time.Millisecond)
	}
	run := &PathRun{Config: cfg, Requests: make([]Request, 0, cfg.Requests*len(cfg.Sizes))}
	runErr := func() error {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		total := (cfg.Warmup + cfg.Requests) * len(cfg.Sizes)
		all := make([]Request, 0, total)
		for i := range total {
			n := cfg.Sizes[i%len(cfg.Sizes)]
			rt, err := cl.Do(n, cfg.ReplyBytes, cfg.ComputeBytes, deadline)
			if err != nil {
				return fmt.Errorf("host: request %d of %d (%d bytes): %w", i+1, total, n, err)
			}
			all = append(all, Request{Bytes: n, RequestTimes: rt})
		}
		attributeCPU(all)
		run.Requests = append(run.Requests, all[cfg.Warmup*len(cfg.Sizes):]...)
		return nil
	}()
	run.Load = load.Stop()
	unpin()
	run.Wall = time.Since(origin)
	if runErr == nil && run.Load.Err != nil {
		runErr = run.Load.Err
	}
	cerr := cl.Close()
	serr := srv.Close()
	for _, e := range []error{runErr, cerr, serr} {
		if e != nil {
			return nil, e
		}
	}
	return run, nil
}

// attributeCPU turns the cumulative CPU readings into per-request CPU
// times. The server reads its clock when request i arrives, so request i's
// server work lies between readings i and i+1; the client reads after
// request i's reply, so its work lies between readings i-1 and i.
func attributeCPU(rs []Request) {
	for i := range rs {
		if i == 0 || i+1 >= len(rs) {
			continue
		}
		s0, s1 := rs[i].ServerCPUAt, rs[i+1].ServerCPUAt
		c0, c1 := rs[i-1].ClientCPUAt, rs[i].ClientCPUAt
		if s0 < 0 || s1 < s0 || c0 < 0 || c1 < c0 {
			continue
		}
		rs[i].ServerCPU, rs[i].ClientCPU, rs[i].CPUValid = s1-s0, c1-c0, true
	}
}

// Stage names of the TCP path's samples (realhw.Sample.Stage). The first
// five are latencies; the CPU ones carry the kernel's CPU accounting in
// Sample.CPUTime with Latency set to the same value.
const (
	StageTCPNetwork   = "tcp-network"    // client write start -> server has the payload
	StageTCPCopy      = "tcp-copy"       // copy into the destination buffer
	StageTCPCompute   = "tcp-compute"    // fixed compute (ComputeBytes)
	StageTCPReply     = "tcp-reply"      // reply write start -> client has it
	StageTCPE2E       = "tcp-e2e"        // the whole request
	StageTCPServerCPU = "tcp-server-cpu" // server thread CPU per request (receive, copy, compute, reply)
	StageTCPClientCPU = "tcp-client-cpu" // client thread CPU per request (send incl. loopback softirq, receive)
	StageMemcpy       = "host-memcpy"    // MemcpyBandwidth samples
	StageCPUSpin      = "cpu-fixed"      // fixed CPU work
)

// Samples turns the run into one realhw.Sample per request and stage. The
// compute stage's Bytes is the compute size, the reply's the reply size.
func (r *PathRun) Samples() []realhw.Sample {
	out := make([]realhw.Sample, 0, 7*len(r.Requests))
	u := r.Config.Load
	for _, q := range r.Requests {
		add := func(stage string, bytes int64, d time.Duration, cpu time.Duration) {
			out = append(out, realhw.Sample{Stage: stage, Bytes: bytes, Latency: engine.Time(d), CPUTime: engine.Time(cpu), BackgroundLoad: u, Source: "host"})
		}
		add(StageTCPNetwork, q.Bytes, q.Network, 0)
		add(StageTCPCopy, q.Bytes, q.Copy, 0)
		add(StageTCPCompute, r.Config.ComputeBytes, q.Compute, 0)
		add(StageTCPReply, r.Config.ReplyBytes, q.Reply, 0)
		add(StageTCPE2E, q.Bytes, q.EndToEnd, 0)
		if q.CPUValid {
			add(StageTCPServerCPU, q.Bytes, q.ServerCPU, q.ServerCPU)
			add(StageTCPClientCPU, q.Bytes, q.ClientCPU, q.ClientCPU)
		}
	}
	return out
}
