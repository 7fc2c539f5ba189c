// Package fit provides the "first-fit" and "best-fit" bin-packing policies.
//
// Both keep running jobs in place (no migration) and place pending jobs in
// snapshot order (arrival). A job may use any of its options: a fraction of
// a non-MIG GPU or a MIG profile.
//
//   - first-fit: the lowest-ID GPU where some option fits; there, the first
//     option in the job's order that fits (the simulator lists MIG options
//     smallest first), at the lowest legal start.
//   - best-fit: on each GPU the first option that fits (the smallest, in
//     the simulator's order); over the GPUs, the one that leaves the
//     least free share on that GPU afterwards (non-MIG: 1 - fraction sum;
//     MIG: free compute slices / 7, then free memory slices), ties to the
//     lower GPU ID and option index; a new instance goes to the start that
//     leaves the layout most open (pack.View.BestStart).
//
// Argument mig (bool, default true): whether the policy partitions MIG GPUs.
// With mig=false the simulator runs MIG-capable GPUs as whole devices shared
// by fractions (first-fit with mig=false then equals naive-share). Neither
// policy reads Option.Speed: both are heterogeneity-blind.
//
// Cost per call O(pending x GPUs x options x starts); GPUs are the ones in
// the snapshot (the simulator passes the GPUs in use plus a few empty ones
// of each model).
package fit
