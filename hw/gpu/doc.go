// Package gpu provides the GPU catalog of conspirator-sim: named GPU types
// with sourced specs (memory, power, price, relative speed, and for
// MIG-capable parts their MIG geometry from hw/mig), and compute-time tables
// for inference work per GPU type, MIG size and batch size.
//
// Adding a GPU is one entry in buildCatalog (spec.go) with its sources; a
// MIG part names its geometry family (mig.SevenSlice, mig.FourSlice) and
// its profile names, and every MIG rule follows from hw/mig.
//
// Everything here is plain data and pure functions: no I/O, no clock, no
// randomness. Grades in comments follow ../shared/reference/hardware.md:
// V vendor spec, M published measurement, A anecdotal, S secondary summary,
// D derived here by arithmetic from sourced numbers, E estimate.
package gpu
