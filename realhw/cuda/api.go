package cuda

import "fmt"

// Info identifies the GPU and CUDA stack a measurement ran on.
type Info struct {
	Name    string // the device's name, e.g. "NVIDIA H200"
	Driver  string // the CUDA version the driver supports, e.g. "13.0" (cuDriverGetVersion)
	Runtime string // the CUDA runtime linked, e.g. "13.0" (cudaRuntimeGetVersion)
}

// version writes CUDA's 1000*major + 10*minor as "major.minor".
func version(v int) string { return fmt.Sprintf("%d.%d", v/1000, v%1000/10) }
