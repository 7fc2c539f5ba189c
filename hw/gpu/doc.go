// Package gpu provides the GPU catalog of conspirator-sim: named GPU types
// with sourced specs (memory, power, price, relative speed), the MIG profiles
// and legal instance placements of A100 and H100 parts, and compute-time
// tables for inference work per GPU type, MIG size and batch size.
//
// Everything here is plain data and pure functions: no I/O, no clock, no
// randomness. Grades in comments follow ../shared/reference/hardware.md:
// V vendor spec, M published measurement, A anecdotal, S secondary summary,
// D derived here by arithmetic from sourced numbers, E estimate.
package gpu
