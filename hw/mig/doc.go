// Package mig is the one place that knows NVIDIA Multi-Instance GPU
// geometry: how many compute (SM) and memory slices a GPU model has, its
// GPU-instance profiles with their legal start slots and maximum counts,
// and the rules a set of instances (a layout) must obey:
//
//   - every instance uses a profile of the GPU, at one of its legal starts;
//   - no two instances share a memory slice;
//   - the compute slices in use do not exceed the GPU's;
//   - no profile is used more often than its maximum count;
//   - optionally (Geometry.No4g3g), no 4g instance beside a 3g one, as
//     drivers before R510 required.
//
// The GPU catalog (hw/gpu) holds one *Geometry per MIG-capable model, built
// from a family of shapes here (SevenSlice for A100, H100, H200 and B200
// parts; FourSlice for the A30). The policies' snapshot checks, their
// packing helper, the exact program and the cluster simulator all ask this
// package, so a new GPU is one catalog entry plus its sources.
//
// Source: NVIDIA MIG User Guide v580 (supported-mig-profiles, concepts and
// getting-started pages), grade V, as copied in
// ../shared/reference/hardware.md section 6 and design.md "MIG facts".
//
// A geometry can also come from the device: ParseNvidiaSMI reads the
// output of `nvidia-smi mig -lgip` and `-lgipp` and FromNvidiaSMI builds
// the geometry (IDs, placements, counts, memory per instance in MiB, SMs),
// which WriteYAML and ReadYAML keep as a file (`conspirator mig import`;
// cluster.mig_geometry). Profiles carry their SMs where known, so that an
// instance's compute can be counted as its SM share (ComputeShare,
// BasisSMs) beside its slice share: on an H200 they differ.
//
// Everything here is plain data and pure functions: no I/O (the parsers
// take bytes), no clock.
package mig
