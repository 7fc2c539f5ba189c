//go:build cuda

package cuda

/*
#cgo LDFLAGS: -lcuda -lcudart
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

// A no-op kernel and a scale-by-two kernel in PTX, loaded with the driver
// API so that no nvcc step is needed in the Go build.
static const char *rh_ptx =
".version 7.0\n.target sm_70\n.address_size 64\n"
".visible .entry noop() { ret; }\n"
".visible .entry scale(.param .u64 p, .param .u32 n) {\n"
" .reg .b32 r<5>; .reg .b64 rd<4>; .reg .pred q; .reg .f32 f<2>;\n"
" ld.param.u64 rd1, [p]; ld.param.u32 r1, [n];\n"
" mov.u32 r2, %ctaid.x; mov.u32 r3, %ntid.x; mov.u32 r4, %tid.x;\n"
" mad.lo.s32 r2, r2, r3, r4;\n"
" setp.ge.u32 q, r2, r1; @q bra DONE;\n"
" cvta.to.global.u64 rd2, rd1; mul.wide.u32 rd3, r2, 4; add.s64 rd2, rd2, rd3;\n"
" ld.global.f32 f1, [rd2]; mul.f32 f1, f1, 0f40000000; st.global.f32 [rd2], f1;\n"
"DONE: ret;\n}\n";

typedef struct { CUmodule mod; CUfunction noop, scale; } rh_k;

// Returns a CUresult (0 = success); *rt gets the runtime's error from
// creating the primary context, and nothing else is tried if it failed.
static int rh_load(rh_k *k, int *rt) {
	*rt = cudaFree(0); // create the primary context through the runtime
	if (*rt) return 0;
	CUresult r = cuModuleLoadData(&k->mod, rh_ptx);
	if (r) return r;
	if ((r = cuModuleGetFunction(&k->noop, k->mod, "noop"))) return r;
	return cuModuleGetFunction(&k->scale, k->mod, "scale");
}

// Time reps copies of n bytes with CUDA events; ms gets the mean per copy.
static int rh_copy(void *dst, const void *src, size_t n, int kind, int reps, float *ms) {
	cudaEvent_t a, b;
	cudaEventCreate(&a); cudaEventCreate(&b);
	cudaMemcpy(dst, src, n, (enum cudaMemcpyKind)kind); // warm-up
	cudaEventRecord(a, 0);
	for (int i = 0; i < reps; i++) cudaMemcpy(dst, src, n, (enum cudaMemcpyKind)kind);
	cudaEventRecord(b, 0);
	cudaEventSynchronize(b);
	cudaEventElapsedTime(ms, a, b);
	*ms /= reps;
	cudaEventDestroy(a); cudaEventDestroy(b);
	return cudaGetLastError();
}

static int rh_launch(CUfunction f, void **args, unsigned grid) {
	return cuLaunchKernel(f, grid, 1, 1, 256, 1, 1, 0, 0, args, 0);
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

// Stage names of Measure's samples.
const (
	StageH2DPinned   = "cuda-h2d-pinned"
	StageH2DPageable = "cuda-h2d-pageable"
	StageD2HPinned   = "cuda-d2h-pinned"
	StageD2HPageable = "cuda-d2h-pageable"
	StageLaunch      = "cuda-launch"       // noop kernel launch + synchronize, host wall time
	StageLaunchAsync = "cuda-launch-async" // back-to-back noop launches, per launch
	StageKernel      = "cuda-scale-kernel" // scale kernel over n bytes of float32, with synchronize
)

// Measure times pinned and pageable H2D and D2H copies of each size (mean
// of reps copies, CUDA events), kernel launch latency and the scale kernel
// over each size, on device 0.
func Measure(sizes []int64, reps int) ([]realhw.Sample, error) {
	if reps < 1 || reps > 10000 {
		return nil, fmt.Errorf("realhw/cuda: reps %d must be in [1, 10000]", reps)
	}
	var maxN int64
	for _, n := range sizes {
		if n < 4 || n > 1<<30 {
			return nil, fmt.Errorf("realhw/cuda: size %d must be in [4, 1GiB]", n)
		}
		maxN = max(maxN, n)
	}
	if len(sizes) == 0 {
		return nil, fmt.Errorf("realhw/cuda: no sizes to measure")
	}
	// The driver API calls below act on the context current on the calling
	// OS thread, which cudaFree(0) makes current on this one: the goroutine
	// must not move to another thread between cgo calls.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var k C.rh_k
	var rt C.int
	r := C.rh_load(&k, &rt)
	if rt != 0 {
		return nil, fmt.Errorf("realhw/cuda: no usable GPU: creating the CUDA context failed with runtime error %d (%s)", int(rt), errName(int(rt)))
	}
	if r != 0 {
		return nil, fmt.Errorf("realhw/cuda: loading the PTX module failed with CUresult %d (%s): a driver older than CUDA 11.0 cannot JIT PTX 7.0", int(r), errName(int(r)))
	}
	var dev, pinned unsafe.Pointer
	if r := C.cudaMalloc(&dev, C.size_t(maxN)); r != 0 {
		return nil, fmt.Errorf("realhw/cuda: cudaMalloc(%d): error %d", maxN, int(r))
	}
	defer C.cudaFree(dev)
	if r := C.cudaMallocHost(&pinned, C.size_t(maxN)); r != 0 {
		return nil, fmt.Errorf("realhw/cuda: cudaMallocHost(%d): error %d", maxN, int(r))
	}
	defer C.cudaFreeHost(pinned)
	pageable := C.malloc(C.size_t(maxN))
	defer C.free(pageable)
	C.memset(pageable, 1, C.size_t(maxN))
	C.memset(pinned, 1, C.size_t(maxN))

	var out []realhw.Sample
	add := func(stage string, n int64, sec float64) {
		out = append(out, realhw.Sample{Stage: stage, Bytes: n, Latency: engine.Seconds(sec), Source: "cuda"})
	}
	for _, n := range sizes {
		for _, c := range []struct {
			stage    string
			dst, src unsafe.Pointer
			kind     C.int
		}{
			{StageH2DPinned, dev, pinned, C.int(C.cudaMemcpyHostToDevice)},
			{StageH2DPageable, dev, pageable, C.int(C.cudaMemcpyHostToDevice)},
			{StageD2HPinned, pinned, dev, C.int(C.cudaMemcpyDeviceToHost)},
			{StageD2HPageable, pageable, dev, C.int(C.cudaMemcpyDeviceToHost)},
		} {
			var ms C.float
			if r := C.rh_copy(c.dst, c.src, C.size_t(n), c.kind, C.int(reps), &ms); r != 0 {
				return nil, fmt.Errorf("realhw/cuda: %s of %d bytes: error %d", c.stage, n, int(r))
			}
			add(c.stage, n, float64(ms)/1e3)
		}
	}
	// Launch latency: launch + synchronize, and back-to-back async.
	for range reps {
		t0 := time.Now()
		if r := C.rh_launch(k.noop, nil, 1); r != 0 {
			return nil, fmt.Errorf("realhw/cuda: launch: CUresult %d", int(r))
		}
		C.cuCtxSynchronize()
		add(StageLaunch, 0, time.Since(t0).Seconds())
	}
	t0 := time.Now()
	for range reps {
		C.rh_launch(k.noop, nil, 1)
	}
	C.cuCtxSynchronize()
	add(StageLaunchAsync, 0, time.Since(t0).Seconds()/float64(reps))
	// The small kernel over each size (float32 elements).
	args := (*[2]unsafe.Pointer)(C.malloc(C.size_t(2 * unsafe.Sizeof(unsafe.Pointer(nil)))))
	defer C.free(unsafe.Pointer(args))
	ptr := (*C.CUdeviceptr)(C.malloc(C.size_t(unsafe.Sizeof(C.CUdeviceptr(0)))))
	defer C.free(unsafe.Pointer(ptr))
	cnt := (*C.uint)(C.malloc(C.size_t(unsafe.Sizeof(C.uint(0)))))
	defer C.free(unsafe.Pointer(cnt))
	*ptr = C.CUdeviceptr(uintptr(dev))
	args[0], args[1] = unsafe.Pointer(ptr), unsafe.Pointer(cnt)
	for _, n := range sizes {
		*cnt = C.uint(n / 4)
		grid := C.uint((n/4 + 255) / 256)
		for range reps {
			t0 := time.Now()
			if r := C.rh_launch(k.scale, (*unsafe.Pointer)(unsafe.Pointer(args)), grid); r != 0 {
				return nil, fmt.Errorf("realhw/cuda: scale kernel over %d bytes: CUresult %d", n, int(r))
			}
			C.cuCtxSynchronize()
			add(StageKernel, n, time.Since(t0).Seconds())
		}
	}
	C.cuModuleUnload(k.mod)
	return out, nil
}

// errName names the error codes a measurement most often meets; the
// runtime's cudaError_t and the driver's CUresult agree on these numbers.
func errName(code int) string {
	switch code {
	case 1:
		return "invalid value"
	case 2:
		return "out of memory"
	case 3:
		return "not initialized"
	case 35:
		return "driver older than the runtime"
	case 100:
		return "no CUDA-capable device"
	case 218:
		return "invalid PTX"
	case 222:
		return "unsupported PTX version"
	}
	return "see the CUDA error reference"
}
