package llm_test

import (
	"fmt"

	"github.com/conspirator-sim/conspirator/hw/gpu"
	"github.com/conspirator-sim/conspirator/hw/llm"
)

// One decode step of Llama-2-70B on 8 H100s: the weights over bandwidth are
// about 5 ms, the step is well above it, and the per-operator breakdown
// shows where the rest goes.
func Example() {
	m, _ := llm.Lookup("llama-2-70b")
	g, _ := gpu.Lookup("h100-80gb")
	eff, _ := llm.FittedEfficiency(g)
	st, err := llm.Step(m, llm.Placement{GPU: g, TP: 8}, llm.Batch{Decode: []int{1024}}, eff)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("floor %.1f ms, step %.1f ms: memory %.1f, all-reduces %.1f, fixed %.1f\n",
		st.MemoryFloor*1e3, st.Seconds*1e3, st.Memory*1e3, st.Communication*1e3, st.Overhead*1e3)
	// Output:
	// floor 5.1 ms, step 14.8 ms: memory 6.5, all-reduces 4.7, fixed 3.5
}
