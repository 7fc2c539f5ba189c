/*
 * A stand-in for the CUDA driver API header, written for conspirator-sim's
 * CI from NVIDIA's published API reference: only the types and calls that
 * realhw/cuda uses, with the documented signatures. It lets CI compile,
 * link and run the cuda-tagged package on a machine with no GPU and no
 * CUDA toolkit (see README.md beside this file). Not NVIDIA's header.
 */
#ifndef CONSPIRATOR_STUB_CUDA_H
#define CONSPIRATOR_STUB_CUDA_H

typedef int CUresult; /* an enum in the real header; 0 is CUDA_SUCCESS */
#define CUDA_SUCCESS 0
#define CUDA_ERROR_NO_DEVICE 100

typedef unsigned long long CUdeviceptr;
typedef int CUdevice;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;

CUresult cuModuleLoadData(CUmodule *module, const void *image);
CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name);
CUresult cuModuleUnload(CUmodule hmod);
CUresult cuLaunchKernel(CUfunction f,
                        unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                        unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                        unsigned int sharedMemBytes, CUstream hStream,
                        void **kernelParams, void **extra);
CUresult cuCtxSynchronize(void);
CUresult cuDriverGetVersion(int *driverVersion);
CUresult cuDeviceGetName(char *name, int len, CUdevice dev);

#endif
