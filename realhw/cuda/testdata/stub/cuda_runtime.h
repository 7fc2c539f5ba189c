/*
 * A stand-in for the CUDA runtime API header (see cuda.h beside this
 * file): only what realhw/cuda uses, with the documented C signatures (the
 * real header's default arguments are C++ only). Not NVIDIA's header.
 */
#ifndef CONSPIRATOR_STUB_CUDA_RUNTIME_H
#define CONSPIRATOR_STUB_CUDA_RUNTIME_H

#include <stddef.h>

typedef int cudaError_t; /* an enum in the real header; 0 is cudaSuccess */
#define cudaSuccess 0
#define cudaErrorNoDevice 100

enum cudaMemcpyKind {
	cudaMemcpyHostToHost = 0,
	cudaMemcpyHostToDevice = 1,
	cudaMemcpyDeviceToHost = 2,
	cudaMemcpyDeviceToDevice = 3,
	cudaMemcpyDefault = 4
};

typedef struct CUevent_st *cudaEvent_t;
typedef struct CUstream_st *cudaStream_t;

cudaError_t cudaFree(void *devPtr);
cudaError_t cudaMalloc(void **devPtr, size_t size);
cudaError_t cudaMallocHost(void **ptr, size_t size);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaEventCreate(cudaEvent_t *event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaGetLastError(void);
cudaError_t cudaRuntimeGetVersion(int *runtimeVersion);

#endif
