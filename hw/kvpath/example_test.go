package kvpath_test

import (
	"fmt"

	"github.com/conspirator-sim/conspirator/hw"
	"github.com/conspirator-sim/conspirator/hw/kvpath"
)

// One 2,048-token Llama-3.1-8B KV cache (256 MiB in BF16) alone on each
// path of a Default server, with PCIe Gen4 or Gen5 and the host idle or
// under 80% background load: the NIC binds gpudirect and host-rdma, the
// SmartNIC's DMA engine binds conspirator, and tcp is one core's stream
// and slows with the host.
func ExampleHardware_Plan() {
	const kv = 2048 * 128 << 10
	for _, gen := range []string{"gen4-x16", "gen5-x16"} {
		for _, load := range []float64{0, 0.8} {
			h := kvpath.Default()
			h.PCIe, _ = hw.LookupPCIe(gen)
			h.Host.Background = load
			fmt.Printf("%s %2.0f%%:", gen, 100*load)
			for _, path := range kvpath.Paths() {
				p, err := h.Plan(path, kvpath.Transfer{Bytes: kv})
				if err != nil {
					fmt.Println(err)
					return
				}
				fmt.Printf(" %s %.2f ms", path, p.Alone(kv).Millis())
			}
			fmt.Println()
		}
	}
	// Output:
	// gen4-x16  0%: tcp 54.98 ms gpudirect 11.30 ms host-rdma 11.64 ms conspirator 12.21 ms nvlink 0.90 ms host-copy 11.07 ms
	// gen4-x16 80%: tcp 98.70 ms gpudirect 11.30 ms host-rdma 11.64 ms conspirator 12.21 ms nvlink 0.90 ms host-copy 11.07 ms
	// gen5-x16  0%: tcp 54.82 ms gpudirect 11.30 ms host-rdma 11.47 ms conspirator 12.21 ms nvlink 0.90 ms host-copy 5.54 ms
	// gen5-x16 80%: tcp 98.53 ms gpudirect 11.30 ms host-rdma 11.47 ms conspirator 12.21 ms nvlink 0.90 ms host-copy 5.54 ms
}
