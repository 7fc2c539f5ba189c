// Package datapath simulates inference requests travelling from clients to
// GPUs and back through the four data paths of the Conspirator paper (TCP
// via the host CPU, GPUDirect RDMA, RDMA into host memory, RDMA into a
// SmartNIC that schedules and DMAs to the GPU), request by request, and
// reports their latency, throughput, CPU cost and cost efficiency.
package datapath
