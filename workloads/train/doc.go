// Package train provides the workload of distributed training: the
// models a job trains (parameters, batch, per-GPU throughput, each with
// its source and grade), training jobs (GPUs, iterations, model, arrival)
// and their sources: a job list in the format of the Alibaba-derived list
// of the SwitchML-omnetpp simulator (num_gpu,submit_time,iterations,model),
// the jobs of a cluster trace given a model by a stated rule, and
// synthesis.
package train
