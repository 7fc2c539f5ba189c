// Package fgd provides the "fgd" policy: Fragmentation Gradient Descent
// (Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads
// with Fragmentation Gradient Descent", USENIX ATC'23), on the simulator's
// GPU-level model.
//
// # Fragmentation measure (the paper's definition, per GPU)
//
// The target workload M is a set of task classes m with popularity p_m
// (shares summing to 1): a class is a per-GPU demand d_m in (0, 1] and the
// GPU types it may use. For a GPU g with free share f_g, the fragment that g
// leaves for class m is
//
//	F_g(m) = f_g  when m cannot run on g: g's type is not allowed for m,
//	              or f_g < d_m (the free share is too small for one task);
//	F_g(m) = 0    otherwise,
//
// and the GPU's expected fragmentation is F_g(M) = sum_m p_m F_g(m). The
// paper defines F per node, summing this over the node's GPUs and also
// counting a node whose CPU cannot host the task as all fragment; here the
// unit is one GPU (the cluster model has no host CPU or node locality), so
// the node sum reduces to the GPU term.
//
// # Placement
//
// Running jobs stay (FGD never migrates). Each pending job, in snapshot
// order, goes to the GPU and option minimising the fragmentation increase
// Delta = F_g(M) after placing - F_g(M) before; ties go to the lower GPU ID.
// FGD is MIG-unaware (UsesMIG false: GPUs are shared by fractions) and
// ignores Option.Speed.
//
// # Target workload
//
// The simulator calls SetWorkload with the classes of the whole trace, as
// FGD assumes the workload's distribution is known. Without it the classes
// are those of the snapshot's own jobs, each weighted by its count.
//
// # Cost
//
// F_g(M) = f_g x W_g(f_g), where W_g(f) is the popularity of classes that
// are incompatible with g's type or need more than f; with the compatible
// demands of each GPU type sorted and suffix-summed once, W is a binary
// search. A call costs O(pending x GPUs x options x log |M|) plus
// O(|M| log |M|) per GPU type to prepare.
package fgd
