package cuda

import "errors"

// ErrNotBuilt is returned by every call in a build without -tags cuda.
var ErrNotBuilt = errors.New("realhw/cuda: built without CUDA support; rebuild with -tags cuda (needs cgo, the CUDA toolkit headers and libcuda/libcudart)")
