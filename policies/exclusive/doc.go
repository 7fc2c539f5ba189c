// Package exclusive provides the "exclusive" policy: one job per GPU, the
// baseline without any sharing.
//
// Algorithm: running jobs stay where they are. Pending jobs, in snapshot
// order (the simulator lists them by arrival), each take the lowest-ID GPU
// that holds no job and where one of their options fits; among the options
// that fit there, the one with the most compute (a whole GPU on a MIG model:
// 7g). Jobs that find no free GPU stay pending. It never migrates. It runs
// MIG-capable GPUs in non-MIG mode (UsesMIG is false): a job gets the whole
// device. Cost O(pending x GPUs x options) per call.
package exclusive
