/*
 * libcuda.so and libcudart.so stand-ins that behave as a machine with the
 * CUDA libraries installed but no GPU: every call fails with "no device".
 * Built by .ci/run into a temporary folder; see README.md beside this file.
 */
#include "cuda.h"
#include "cuda_runtime.h"

#ifdef DRIVER
CUresult cuModuleLoadData(CUmodule *m, const void *image) { (void)m; (void)image; return CUDA_ERROR_NO_DEVICE; }
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *n) { (void)f; (void)m; (void)n; return CUDA_ERROR_NO_DEVICE; }
CUresult cuModuleUnload(CUmodule m) { (void)m; return CUDA_ERROR_NO_DEVICE; }
CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                        unsigned int bx, unsigned int by, unsigned int bz,
                        unsigned int shm, CUstream s, void **params, void **extra) {
	(void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shm; (void)s; (void)params; (void)extra;
	return CUDA_ERROR_NO_DEVICE;
}
CUresult cuCtxSynchronize(void) { return CUDA_ERROR_NO_DEVICE; }
/* The version queries need no device and answer as CUDA 13.0 would. */
CUresult cuDriverGetVersion(int *v) { *v = 13000; return CUDA_SUCCESS; }
CUresult cuDeviceGetName(char *name, int len, CUdevice dev) { (void)name; (void)len; (void)dev; return CUDA_ERROR_NO_DEVICE; }
#else
cudaError_t cudaFree(void *p) { (void)p; return cudaErrorNoDevice; }
cudaError_t cudaMalloc(void **p, size_t n) { (void)p; (void)n; return cudaErrorNoDevice; }
cudaError_t cudaMallocHost(void **p, size_t n) { (void)p; (void)n; return cudaErrorNoDevice; }
cudaError_t cudaFreeHost(void *p) { (void)p; return cudaErrorNoDevice; }
cudaError_t cudaMemcpy(void *d, const void *s, size_t n, enum cudaMemcpyKind k) { (void)d; (void)s; (void)n; (void)k; return cudaErrorNoDevice; }
cudaError_t cudaEventCreate(cudaEvent_t *e) { (void)e; return cudaErrorNoDevice; }
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { (void)e; (void)s; return cudaErrorNoDevice; }
cudaError_t cudaEventSynchronize(cudaEvent_t e) { (void)e; return cudaErrorNoDevice; }
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) { (void)ms; (void)a; (void)b; return cudaErrorNoDevice; }
cudaError_t cudaEventDestroy(cudaEvent_t e) { (void)e; return cudaErrorNoDevice; }
cudaError_t cudaGetLastError(void) { return cudaErrorNoDevice; }
cudaError_t cudaRuntimeGetVersion(int *v) { *v = 13000; return cudaSuccess; }
#endif
