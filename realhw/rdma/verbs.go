//go:build rdma

package rdma

/*
#cgo LDFLAGS: -libverbs
#include <infiniband/verbs.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

// A loopback RC queue pair writing from one registered buffer into another
// in the same process: the smallest real RDMA write path. All verbs calls
// live here so that Go sees a handful of plain functions.
typedef struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *src_mr, *dst_mr;
	char *src, *dst;
	size_t size;
} rh_ctx;

static int rh_device_count(void) {
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);
	if (l) ibv_free_device_list(l);
	return n;
}

// rh_open returns 0 or a step number (1..) that failed; errno holds why.
static int rh_open(rh_ctx *c, const char *name, int port, int gid_idx, size_t size) {
	memset(c, 0, sizeof *c);
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);
	if (!l || n == 0) { if (l) ibv_free_device_list(l); return 1; }
	struct ibv_device *dev = l[0];
	if (name && name[0]) {
		dev = NULL;
		for (int i = 0; i < n; i++) if (strcmp(ibv_get_device_name(l[i]), name) == 0) dev = l[i];
	}
	if (!dev) { ibv_free_device_list(l); errno = ENODEV; return 2; }
	c->ctx = ibv_open_device(dev);
	ibv_free_device_list(l);
	if (!c->ctx) return 3;
	c->pd = ibv_alloc_pd(c->ctx);
	if (!c->pd) return 4;
	c->size = size;
	c->src = malloc(size); c->dst = malloc(size);
	if (!c->src || !c->dst) { errno = ENOMEM; return 5; }
	memset(c->src, 1, size); memset(c->dst, 0, size);
	c->src_mr = ibv_reg_mr(c->pd, c->src, size, IBV_ACCESS_LOCAL_WRITE);
	c->dst_mr = ibv_reg_mr(c->pd, c->dst, size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!c->src_mr || !c->dst_mr) return 6;
	c->cq = ibv_create_cq(c->ctx, 16, NULL, NULL, 0);
	if (!c->cq) return 7;
	struct ibv_qp_init_attr qia = {0};
	qia.send_cq = c->cq; qia.recv_cq = c->cq; qia.qp_type = IBV_QPT_RC;
	qia.cap.max_send_wr = 16; qia.cap.max_recv_wr = 1; qia.cap.max_send_sge = 1; qia.cap.max_recv_sge = 1;
	c->qp = ibv_create_qp(c->pd, &qia);
	if (!c->qp) return 8;
	struct ibv_port_attr pa;
	if (ibv_query_port(c->ctx, port, &pa)) return 9;
	struct ibv_qp_attr a = {0};
	a.qp_state = IBV_QPS_INIT; a.pkey_index = 0; a.port_num = port;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) return 10;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTR; a.path_mtu = pa.active_mtu; a.dest_qp_num = c->qp->qp_num; a.rq_psn = 0;
	a.max_dest_rd_atomic = 1; a.min_rnr_timer = 12;
	a.ah_attr.port_num = port; a.ah_attr.dlid = pa.lid;
	if (gid_idx >= 0) {
		union ibv_gid gid;
		if (ibv_query_gid(c->ctx, port, gid_idx, &gid)) return 11;
		a.ah_attr.is_global = 1; a.ah_attr.grh.dgid = gid; a.ah_attr.grh.sgid_index = gid_idx; a.ah_attr.grh.hop_limit = 1;
	}
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) return 12;
	memset(&a, 0, sizeof a);
	a.qp_state = IBV_QPS_RTS; a.timeout = 14; a.retry_cnt = 7; a.rnr_retry = 7; a.sq_psn = 0; a.max_rd_atomic = 1;
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC)) return 13;
	return 0;
}

// rh_write posts one signaled RDMA WRITE of n bytes and busy-polls its
// completion; it returns 0, or -1 on a post error, or the failed wc status.
static int rh_write(rh_ctx *c, size_t n) {
	struct ibv_sge sge = { .addr = (uintptr_t)c->src, .length = (uint32_t)n, .lkey = c->src_mr->lkey };
	struct ibv_send_wr wr = {0}, *bad = NULL;
	wr.opcode = IBV_WR_RDMA_WRITE; wr.sg_list = &sge; wr.num_sge = 1; wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)c->dst; wr.wr.rdma.rkey = c->dst_mr->rkey;
	if (ibv_post_send(c->qp, &wr, &bad)) return -1;
	struct ibv_wc wc;
	int got;
	// Bounded poll: about 10^9 empty polls is seconds, not forever.
	for (long i = 0; i < 1000000000L; i++) {
		got = ibv_poll_cq(c->cq, 1, &wc);
		if (got < 0) return -1;
		if (got == 1) return wc.status == IBV_WC_SUCCESS ? 0 : (int)wc.status;
	}
	return -2;
}

static void rh_close(rh_ctx *c) {
	if (c->qp) ibv_destroy_qp(c->qp);
	if (c->cq) ibv_destroy_cq(c->cq);
	if (c->src_mr) ibv_dereg_mr(c->src_mr);
	if (c->dst_mr) ibv_dereg_mr(c->dst_mr);
	if (c->pd) ibv_dealloc_pd(c->pd);
	if (c->ctx) ibv_close_device(c->ctx);
	free(c->src); free(c->dst);
	memset(c, 0, sizeof *c);
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"github.com/conspirator-sim/conspirator/engine"
	"github.com/conspirator-sim/conspirator/realhw"
)

// Config configures the RDMA backend.
type Config struct {
	Device  string // device name (ibv_devices); empty for the first
	Port    int    // port number, default 1
	GIDIdx  int    // GID index for RoCE; -1 to use the LID (InfiniBand)
	MaxSize int64  // largest write, default 64 MiB
}

// Backend writes with RDMA WRITE over a loopback RC queue pair.
type Backend struct {
	c      *C.rh_ctx
	max    int64
	closed bool
}

var _ realhw.Backend = (*Backend)(nil)

var steps = []string{"", "list devices", "find the named device", "open device", "allocate PD", "allocate buffers", "register MRs", "create CQ", "create QP", "query port", "QP to INIT", "query GID", "QP to RTR", "QP to RTS"}

// Open opens the device and connects a queue pair to itself. With no RDMA
// device it returns ErrNoDevice.
func Open(cfg Config) (*Backend, error) {
	if cfg.Port == 0 {
		cfg.Port = 1
	}
	if cfg.MaxSize == 0 {
		cfg.MaxSize = 64 << 20
	}
	if cfg.MaxSize < 1 || cfg.MaxSize > 1<<30 {
		return nil, fmt.Errorf("realhw/rdma: max size %d must be in [1, 1GiB]", cfg.MaxSize)
	}
	if C.rh_device_count() == 0 {
		return nil, ErrNoDevice
	}
	c := (*C.rh_ctx)(C.calloc(1, C.size_t(unsafe.Sizeof(C.rh_ctx{}))))
	name := C.CString(cfg.Device)
	defer C.free(unsafe.Pointer(name))
	step, errno := C.rh_open(c, name, C.int(cfg.Port), C.int(cfg.GIDIdx), C.size_t(cfg.MaxSize))
	if step != 0 {
		C.rh_close(c)
		C.free(unsafe.Pointer(c))
		what := "?"
		if int(step) < len(steps) {
			what = steps[step]
		}
		if step == 1 {
			return nil, ErrNoDevice
		}
		return nil, fmt.Errorf("realhw/rdma: %s failed on device %q port %d: %v", what, cfg.Device, cfg.Port, errno)
	}
	return &Backend{c: c, max: cfg.MaxSize}, nil
}

func (b *Backend) Name() string { return "rdma" }

// Network is one RDMA WRITE of bytes into the destination buffer, timed
// from post to completion (the sender's view: the write is in remote
// memory when the completion arrives on an RC queue pair).
func (b *Backend) Network(bytes int64) (engine.Time, error) {
	if b.closed {
		return 0, fmt.Errorf("realhw/rdma: backend used after Close")
	}
	if bytes < 0 || bytes > b.max {
		return 0, fmt.Errorf("realhw/rdma: size %d must be in [0, %d]", bytes, b.max)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := time.Now()
	rc := C.rh_write(b.c, C.size_t(bytes))
	d := time.Since(t0)
	if rc != 0 {
		return 0, fmt.Errorf("realhw/rdma: RDMA write of %d bytes failed (status %d)", bytes, int(rc))
	}
	return engine.Time(d), nil
}

func (b *Backend) HostCopy(int64) (engine.Time, error) {
	return 0, realhw.Unsupported("rdma", realhw.StageHostCopy)
}
func (b *Backend) CPUWork(engine.Time) (engine.Time, error) {
	return 0, realhw.Unsupported("rdma", realhw.StageCPU)
}
func (b *Backend) DMA(int64) (engine.Time, error) {
	return 0, realhw.Unsupported("rdma", realhw.StageDMA)
}
func (b *Backend) Compute(int64) (engine.Time, error) {
	return 0, realhw.Unsupported("rdma", realhw.StageCompute)
}
func (b *Backend) Reply(int64) (engine.Time, error) {
	return 0, realhw.Unsupported("rdma", realhw.StageReply)
}

// Close releases the queue pair, memory regions and device.
func (b *Backend) Close() error {
	if !b.closed {
		b.closed = true
		C.rh_close(b.c)
		C.free(unsafe.Pointer(b.c))
	}
	return nil
}

// WriteLatency opens the backend and times reps RDMA writes of each size,
// returning samples of stage "rdma-write-loopback".
func WriteLatency(cfg Config, sizes []int64, reps int) ([]realhw.Sample, error) {
	if reps < 1 || reps > 1_000_000 {
		return nil, fmt.Errorf("realhw/rdma: reps %d must be in [1, 1000000]", reps)
	}
	b, err := Open(cfg)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	var out []realhw.Sample
	for _, n := range sizes {
		for range reps {
			d, err := b.Network(n)
			if err != nil {
				return nil, err
			}
			out = append(out, realhw.Sample{Stage: "rdma-write-loopback", Bytes: n, Latency: d, Source: "rdma"})
		}
	}
	return out, nil
}
