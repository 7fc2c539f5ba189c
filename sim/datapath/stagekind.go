package datapath

// StageKind is the vocabulary shared by every path: what kind of work a
// pipeline stage does and where. A stage has a name of its own (the same
// name for the same operation on every path, e.g. "network", "launch")
// and one kind; figures draw one colour per kind, so the paths compare
// stage by stage, and calibration names what it measures in the same
// words (see realhw).
type StageKind string

// The kinds, in the order a request meets them.
const (
	// KindNIC is the SmartNIC holding a request: waiting for buffer space
	// on the card, and its doorbell write into the host's ring.
	KindNIC StageKind = "nic"
	// KindNetwork is the request's bytes travelling from the client into
	// server memory. On tcp the host's kernel receive processing overlaps
	// the wire; the stage ends when both are done (the host core-time is
	// in host_cpu_us_per_request).
	KindNetwork StageKind = "network"
	// KindHostCPU is control-plane work on a host core: polling a
	// completion, the scheduling decision, the TCP send processing.
	KindHostCPU StageKind = "host-cpu"
	// KindSoC is control-plane work on the SmartNIC's Arm cores: polling,
	// the decision, posting the DMA and the notification.
	KindSoC StageKind = "soc"
	// KindHostCopy is a copy issued by a host core (cudaMemcpy), staged
	// through a bounce buffer when the source is pageable.
	KindHostCopy StageKind = "host-copy"
	// KindDMA is bytes moved into GPU memory by a DMA engine: the GPU's
	// copy engine over PCIe, or the SmartNIC's from its SoC memory.
	KindDMA StageKind = "dma"
	// KindLaunch is the host launching the kernel.
	KindLaunch StageKind = "launch"
	// KindCompute is the kernel running on its GPU or MIG instance.
	KindCompute StageKind = "compute"
	// KindSync is the host waiting for the kernel and copying the result
	// back.
	KindSync StageKind = "sync"
	// KindReply is the result travelling back to the client.
	KindReply StageKind = "reply"
)

// StageKinds lists every kind once, in pipeline order, with the words a
// legend uses. Reports colour kinds by their index in this list.
var StageKinds = []struct {
	Kind  StageKind
	Label string
}{
	{KindNIC, "SmartNIC buffer, doorbell"},
	{KindNetwork, "network in"},
	{KindHostCPU, "host CPU: poll, decide, TCP"},
	{KindSoC, "SmartNIC SoC: poll, decide, post"},
	{KindHostCopy, "host-issued copy"},
	{KindDMA, "DMA into the GPU"},
	{KindLaunch, "kernel launch"},
	{KindCompute, "GPU compute"},
	{KindSync, "sync, result copy"},
	{KindReply, "reply"},
}
