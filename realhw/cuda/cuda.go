//go:build cuda

package cuda

/*
#cgo LDFLAGS: -lcuda -lcudart
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

// checkMeasure checks a measurement's sizes and repetitions, and returns
// the largest size (the buffers' size).
func checkMeasure(sizes []int64, reps int) (maxN int64, err error) {
	if reps < 1 || reps > 10000 {
		return 0, fmt.Errorf("realhw/cuda: reps %d must be in [1, 10000]", reps)
	}
	for _, n := range sizes {
		if n < 4 || n > 1<<30 {
			return 0, fmt.Errorf("realhw/cuda: size %d must be in [4, 1GiB]", n)
		}
		maxN = max(maxN, n)
	}
	if len(sizes) == 0 {
		return 0, fmt.Errorf("realhw/cuda: no sizes to measure")
	}
	return maxN, nil
}

// Measure times pinned and pageable H2D and D2H copies of each size (mean
// of reps copies, CUDA events), kernel launch latency and the scale kernel
// over each size, on device 0.
func Measure(sizes []int64, reps int) ([]realhw.Sample, error) {
	maxN, err := checkMeasure(sizes, reps)
	if err != nil {
		return nil, err
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
