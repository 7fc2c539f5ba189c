// Package torch ships measure_compute.py, the PyTorch program that
// measures a real model's GPU compute time per batch (eager and CUDA-graph
// modes, a stated precision) on the GPU machine and writes the CSV that
// `conspirator calibrate --import` reads into a profile's compute table.
// Go cannot run the model itself; this package only holds the program and
// its tests (a syntax check and its --help, where python3 is installed).
package torch
