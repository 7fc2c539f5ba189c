/*
 * The C side of realhw/cuda (build tag cuda), included by its cgo files:
 * PTX kernels loaded through the driver API (no nvcc step in the Go build)
 * and small helpers that time copies with CUDA events. Static inline: each
 * cgo file that includes it gets its own copy.
 */
#ifndef CONSPIRATOR_RH_H
#define CONSPIRATOR_RH_H

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
"DONE: ret;\n}\n"
// spin: the calling threads wait until ns nanoseconds of %globaltimer
// have passed (a stand-in for compute of a given length).
".visible .entry spin(.param .u64 ns) {\n"
" .reg .b64 rd<4>; .reg .pred q;\n"
" ld.param.u64 rd1, [ns];\n"
" mov.u64 rd2, %globaltimer;\n"
"SPIN: mov.u64 rd3, %globaltimer;\n"
" sub.u64 rd3, rd3, rd2;\n"
" setp.lt.u64 q, rd3, rd1;\n"
" @q bra SPIN;\n"
" ret;\n}\n";

typedef struct { CUmodule mod; CUfunction noop, scale, spin; } rh_k;

// Returns a CUresult (0 = success); *rt gets the runtime's error from
// creating the primary context, and nothing else is tried if it failed.
static inline int rh_load(rh_k *k, int *rt) {
	*rt = cudaFree(0); // create the primary context through the runtime
	if (*rt) return 0;
	CUresult r = cuModuleLoadData(&k->mod, rh_ptx);
	if (r) return r;
	if ((r = cuModuleGetFunction(&k->noop, k->mod, "noop"))) return r;
	if ((r = cuModuleGetFunction(&k->spin, k->mod, "spin"))) return r;
	return cuModuleGetFunction(&k->scale, k->mod, "scale");
}

// Time reps copies one by one with CUDA events; ms[i] gets copy i.
static inline int rh_copy_each(void *dst, const void *src, size_t n, int kind, int reps, float *ms) {
	cudaEvent_t a, b;
	int r;
	if ((r = cudaEventCreate(&a))) return r;
	if ((r = cudaEventCreate(&b))) { cudaEventDestroy(a); return r; }
	cudaMemcpy(dst, src, n, (enum cudaMemcpyKind)kind); // warm-up
	for (int i = 0; i < reps; i++) {
		cudaEventRecord(a, 0);
		cudaMemcpy(dst, src, n, (enum cudaMemcpyKind)kind);
		cudaEventRecord(b, 0);
		cudaEventSynchronize(b);
		cudaEventElapsedTime(&ms[i], a, b);
	}
	cudaEventDestroy(a); cudaEventDestroy(b);
	return cudaGetLastError();
}

// The device's name and the driver's and runtime's CUDA versions.
static inline int rh_info(char *name, int len, int *drv, int *rt) {
	int r;
	if ((r = cudaRuntimeGetVersion(rt))) return r;
	if ((r = cuDriverGetVersion(drv))) return r;
	return cuDeviceGetName(name, len, 0);
}

// Time reps copies of n bytes with CUDA events; ms gets the mean per copy.
static inline int rh_copy(void *dst, const void *src, size_t n, int kind, int reps, float *ms) {
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

static inline int rh_launch(CUfunction f, void **args, unsigned grid) {
	return cuLaunchKernel(f, grid, 1, 1, 256, 1, 1, 0, 0, args, 0);
}

// cudaMemcpy with the kind as an int (cgo passes enums awkwardly).
static inline int rh_memcpy(void *dst, const void *src, size_t n, int kind) {
	return cudaMemcpy(dst, src, n, (enum cudaMemcpyKind)kind);
}

// rh_memcpy_done is rh_memcpy that returns once the copy has landed: a
// pageable host-to-device cudaMemcpy returns when the buffer is staged,
// before the last DMA completes (the CUDA runtime's API notes on
// synchronous copies), so an event recorded after it is waited for.
static inline int rh_memcpy_done(void *dst, const void *src, size_t n, int kind, cudaEvent_t e) {
	int r;
	if ((r = cudaMemcpy(dst, src, n, (enum cudaMemcpyKind)kind))) return r;
	if ((r = cudaEventRecord(e, 0))) return r;
	return cudaEventSynchronize(e);
}

#endif
