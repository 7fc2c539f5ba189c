//go:build cuda

package cuda

/*
#include "rh.h"
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

// Built says whether this binary was built with -tags cuda.
const Built = true

// session is device 0 opened on the calling OS thread: the PTX module and
// buffers of up to capBytes (device, pinned and pageable host).
type session struct {
	k                     C.rh_k
	dev, pinned, pageable unsafe.Pointer
	capBytes              int64
	info                  Info
}

// open makes the primary context current on the calling thread (which
// must stay locked to it), loads the kernels and allocates the buffers.
func open(capBytes int64) (*session, error) {
	s := &session{}
	var rt C.int
	r := C.rh_load(&s.k, &rt)
	if rt != 0 {
		return nil, fmt.Errorf("realhw/cuda: no usable GPU: creating the CUDA context failed with runtime error %d (%s)", int(rt), errName(int(rt)))
	}
	if r != 0 {
		return nil, fmt.Errorf("realhw/cuda: loading the PTX module failed with CUresult %d (%s): a driver older than CUDA 11.0 cannot JIT PTX 7.0", int(r), errName(int(r)))
	}
	var name [256]C.char
	var drv, rtv C.int
	if r := C.rh_info(&name[0], 256, &drv, &rtv); r != 0 {
		C.cuModuleUnload(s.k.mod)
		return nil, fmt.Errorf("realhw/cuda: reading the device's name and versions: error %d (%s)", int(r), errName(int(r)))
	}
	s.info = Info{Name: C.GoString(&name[0]), Driver: version(int(drv)), Runtime: version(int(rtv))}
	if err := s.grow(max(capBytes, 4096)); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// grow makes the buffers hold n bytes.
func (s *session) grow(n int64) error {
	if n <= s.capBytes {
		return nil
	}
	if n > 1<<30 {
		return fmt.Errorf("realhw/cuda: %d bytes: at most 1 GiB per copy", n)
	}
	s.free()
	if r := C.cudaMalloc(&s.dev, C.size_t(n)); r != 0 {
		return fmt.Errorf("realhw/cuda: cudaMalloc(%d): error %d (%s)", n, int(r), errName(int(r)))
	}
	if r := C.cudaMallocHost(&s.pinned, C.size_t(n)); r != 0 {
		return fmt.Errorf("realhw/cuda: cudaMallocHost(%d): error %d (%s)", n, int(r), errName(int(r)))
	}
	s.pageable = C.malloc(C.size_t(n))
	C.memset(s.pageable, 1, C.size_t(n))
	C.memset(s.pinned, 1, C.size_t(n))
	s.capBytes = n
	return nil
}

func (s *session) free() {
	if s.dev != nil {
		C.cudaFree(s.dev)
	}
	if s.pinned != nil {
		C.cudaFreeHost(s.pinned)
	}
	if s.pageable != nil {
		C.free(s.pageable)
	}
	s.dev, s.pinned, s.pageable, s.capBytes = nil, nil, nil, 0
}

func (s *session) close() {
	s.free()
	C.cuModuleUnload(s.k.mod)
}

// copyArgs returns the buffers and kind of a copy stage.
func (s *session) copyArgs(stage string) (dst, src unsafe.Pointer, kind C.int) {
	switch stage {
	case StageH2DPinned:
		return s.dev, s.pinned, C.int(C.cudaMemcpyHostToDevice)
	case StageH2DPageable:
		return s.dev, s.pageable, C.int(C.cudaMemcpyHostToDevice)
	case StageD2HPinned:
		return s.pinned, s.dev, C.int(C.cudaMemcpyDeviceToHost)
	}
	return s.pageable, s.dev, C.int(C.cudaMemcpyDeviceToHost)
}

// CopyStages are the copy stages of MeasureEach, in order.
var CopyStages = []string{StageH2DPinned, StageH2DPageable, StageD2HPinned, StageD2HPageable}

// MeasureEach times every copy of reps at each size one by one (CUDA
// events around each cudaMemcpy), and reps launches with synchronize, so
// that a stage's p50 and p99 can be read: the held-out runs of calibrate
// --backend cuda --validate.
func MeasureEach(sizes []int64, reps int) ([]realhw.Sample, error) {
	maxN, err := checkMeasure(sizes, reps)
	if err != nil {
		return nil, err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s, err := open(maxN)
	if err != nil {
		return nil, err
	}
	defer s.close()
	ms := make([]C.float, reps)
	var out []realhw.Sample
	for _, n := range sizes {
		for _, st := range CopyStages {
			dst, src, kind := s.copyArgs(st)
			if r := C.rh_copy_each(dst, src, C.size_t(n), kind, C.int(reps), &ms[0]); r != 0 {
				return nil, fmt.Errorf("realhw/cuda: %s of %d bytes: error %d (%s)", st, n, int(r), errName(int(r)))
			}
			for _, v := range ms {
				out = append(out, realhw.Sample{Stage: st, Bytes: n, Latency: engine.Seconds(float64(v) / 1e3), Source: "cuda"})
			}
		}
	}
	for range reps {
		t0 := time.Now()
		if r := C.rh_launch(s.k.noop, nil, 1); r != 0 {
			return nil, fmt.Errorf("realhw/cuda: launch: CUresult %d", int(r))
		}
		C.cuCtxSynchronize()
		out = append(out, realhw.Sample{Stage: StageLaunch, Latency: engine.Seconds(time.Since(t0).Seconds()), Source: "cuda"})
	}
	return out, nil
}

// DeviceInfo opens device 0 and returns its name and CUDA versions.
func DeviceInfo() (Info, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	s, err := open(4096)
	if err != nil {
		return Info{}, err
	}
	defer s.close()
	return s.info, nil
}

// Backend performs the GPU-side stages of a request on device 0: the
// host copy toward the GPU as a pageable cudaMemcpy H2D, the DMA as a
// pinned one, the launch, the compute as a stand-in kernel of the model's
// compute time (KernelWorkNote), the result as a D2H copy into pageable
// memory (as out.cpu() does and sim/datapath prices it). Every
// call runs on one goroutine locked to the OS thread that holds the CUDA
// context; each returns the wall time of the operation.
type Backend struct {
	calls  chan func()
	s      *session // used only on the CUDA goroutine
	info   Info
	closed bool
}

// NewBackend opens device 0; a machine without a usable GPU is an error
// that says so.
func NewBackend() (realhw.Backend, error) {
	b := &Backend{calls: make(chan func())}
	ready := make(chan error)
	go func() {
		runtime.LockOSThread() // for the goroutine's life: the context is this thread's
		s, err := open(1 << 20)
		if err != nil {
			ready <- err
			return
		}
		b.s, b.info = s, s.info
		ready <- nil
		for f := range b.calls {
			f()
		}
		s.close()
	}()
	if err := <-ready; err != nil {
		return nil, err
	}
	return b, nil
}

// Info is the device the backend runs on.
func (b *Backend) Info() Info { return b.info }

// do runs f on the CUDA thread.
func (b *Backend) do(f func(s *session) (engine.Time, error)) (engine.Time, error) {
	if b.closed {
		return 0, fmt.Errorf("realhw/cuda: backend used after Close")
	}
	var d engine.Time
	var err error
	done := make(chan struct{})
	b.calls <- func() {
		defer close(done)
		d, err = f(b.s)
	}
	<-done
	return d, err
}

// Name is "cuda".
func (b *Backend) Name() string { return "cuda" }

// Network is not a GPU stage.
func (b *Backend) Network(int64) (engine.Time, error) {
	return 0, realhw.Unsupported("cuda", realhw.StageNetwork)
}

// Reply is not a GPU stage.
func (b *Backend) Reply(int64) (engine.Time, error) {
	return 0, realhw.Unsupported("cuda", realhw.StageReply)
}

// CPUWork is the host backend's.
func (b *Backend) CPUWork(engine.Time) (engine.Time, error) {
	return 0, realhw.Unsupported("cuda", realhw.StageCPU)
}

func (b *Backend) copy(stage string, n int64) (engine.Time, error) {
	if n < 0 {
		return 0, fmt.Errorf("realhw/cuda: %s of %d bytes", stage, n)
	}
	return b.do(func(s *session) (engine.Time, error) {
		if err := s.grow(n); err != nil {
			return 0, err
		}
		dst, src, kind := s.copyArgs(stage)
		// Timed on the wall clock until the copy has landed. A pageable
		// H2D cudaMemcpy returns once the buffer is staged, before its
		// last DMA (CUDA's API synchronization notes; the review of issue
		// 42 found 75 us returned against the events' ~98 us at 1.2 MB),
		// so an event after it is waited for; every other cudaMemcpy here
		// returns when the copy is done, and waiting on an event would only
		// add its API time (8-9 us on the H200: the 16,000 B result copy
		// took 9.7-9.9 us returned, 18.3-19.0 us waited, 2026-11-27).
		if stage != StageH2DPageable {
			t0 := time.Now()
			if r := C.rh_memcpy(dst, src, C.size_t(n), kind); r != 0 {
				return 0, fmt.Errorf("realhw/cuda: %s of %d bytes: error %d (%s)", stage, n, int(r), errName(int(r)))
			}
			return engine.Seconds(time.Since(t0).Seconds()), nil
		}
		var e C.cudaEvent_t
		if r := C.cudaEventCreate(&e); r != 0 {
			return 0, fmt.Errorf("realhw/cuda: %s: creating an event: error %d (%s)", stage, int(r), errName(int(r)))
		}
		defer C.cudaEventDestroy(e)
		t0 := time.Now()
		if r := C.rh_memcpy_done(dst, src, C.size_t(n), kind, e); r != 0 {
			return 0, fmt.Errorf("realhw/cuda: %s of %d bytes: error %d (%s)", stage, n, int(r), errName(int(r)))
		}
		return engine.Seconds(time.Since(t0).Seconds()), nil
	})
}

// HostCopy is a pageable cudaMemcpy host to device of n bytes: the
// CPU-staged copy a pageable input takes.
func (b *Backend) HostCopy(n int64) (engine.Time, error) { return b.copy(StageH2DPageable, n) }

// DMA is a pinned cudaMemcpy host to device of n bytes (the copy engine).
func (b *Backend) DMA(n int64) (engine.Time, error) { return b.copy(StageH2DPinned, n) }

// ResultCopy is a cudaMemcpy device to host of n bytes into pageable
// memory: the copy of the result the data paths make (a fresh CPU tensor,
// as out.cpu() does), which sim/datapath prices at pageable_d2h_factor.
// (The device check of 2026-11-27 ran it into pinned memory: 7.6-8.6 us
// for 16,000 B against the model's pageable 17.75 us with sync_wait.)
func (b *Backend) ResultCopy(n int64) (engine.Time, error) { return b.copy(StageD2HPageable, n) }

// Compute runs the scale kernel over n bytes of float32 and synchronizes.
func (b *Backend) Compute(n int64) (engine.Time, error) {
	if n < 4 {
		return 0, fmt.Errorf("realhw/cuda: compute over %d bytes: at least 4", n)
	}
	return b.do(func(s *session) (engine.Time, error) {
		if err := s.grow(n); err != nil {
			return 0, err
		}
		ptr := C.CUdeviceptr(uintptr(s.dev))
		// Every argument is copied as 8 bytes (launchSync): the .u32 count
		// is read from the low half of its slot (x86-64, arm64: little-endian).
		cnt := C.ulonglong(n / 4)
		args := []unsafe.Pointer{unsafe.Pointer(&ptr), unsafe.Pointer(&cnt)}
		return launchSync(s.k.scale, args, C.uint((n/4+255)/256))
	})
}

// KernelWork launches the spin kernel for d of GPU time and synchronizes.
func (b *Backend) KernelWork(d engine.Time) (engine.Time, error) {
	if d < 0 {
		return 0, fmt.Errorf("realhw/cuda: kernel work %v", d)
	}
	return b.do(func(s *session) (engine.Time, error) {
		ns := C.ulonglong(d.Seconds() * 1e9)
		return launchSync(s.k.spin, []unsafe.Pointer{unsafe.Pointer(&ns)}, 1)
	})
}

// Launch is one launch of the empty kernel, not waited for: the CPU cost
// of a launch (the GPU finishes it before the next call).
func (b *Backend) Launch() (engine.Time, error) {
	return b.do(func(s *session) (engine.Time, error) {
		t0 := time.Now()
		r := C.rh_launch(s.k.noop, nil, 1)
		d := engine.Seconds(time.Since(t0).Seconds())
		C.cuCtxSynchronize()
		if r != 0 {
			return 0, fmt.Errorf("realhw/cuda: launch: CUresult %d", int(r))
		}
		return d, nil
	})
}

// launchSync launches f with args, each a pointer to an 8-byte value
// (copied into C memory: cgo forbids passing C a Go pointer to Go
// pointers), and waits for it, returning the wall time.
func launchSync(f C.CUfunction, args []unsafe.Pointer, grid C.uint) (engine.Time, error) {
	cargs := (*[8]unsafe.Pointer)(C.malloc(C.size_t(8 * unsafe.Sizeof(unsafe.Pointer(nil)))))
	defer C.free(unsafe.Pointer(cargs))
	vals := C.malloc(C.size_t(8 * len(args)))
	defer C.free(vals)
	for i, a := range args {
		slot := unsafe.Add(vals, 8*i)
		C.memcpy(slot, a, 8)
		cargs[i] = slot
	}
	t0 := time.Now()
	if r := C.rh_launch(f, (*unsafe.Pointer)(unsafe.Pointer(cargs)), grid); r != 0 {
		return 0, fmt.Errorf("realhw/cuda: launch: CUresult %d (%s)", int(r), errName(int(r)))
	}
	if r := C.cuCtxSynchronize(); r != 0 {
		return 0, fmt.Errorf("realhw/cuda: synchronize: CUresult %d (%s)", int(r), errName(int(r)))
	}
	return engine.Seconds(time.Since(t0).Seconds()), nil
}

// Close ends the CUDA thread and frees the device's buffers.
func (b *Backend) Close() error {
	if !b.closed {
		b.closed = true
		close(b.calls)
	}
	return nil
}
