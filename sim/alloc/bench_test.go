package alloc

import (
	"fmt"
	"testing"

	"github.com/conspirator-sim/conspirator/policies/nodealloc"
)

// benchInput is an openb-like cluster: 200 servers of 2, 4 or 8 GPUs of
// two models and 2,000 pods of the openb shapes (CPU-only, GPU shares,
// whole GPUs, gangs), enough that placement fails at the end of a run.
func benchInput() Input {
	var in Input
	for i := range 200 {
		in.Nodes = append(in.Nodes, nodealloc.NewNode(fmt.Sprintf("n%03d", i), []string{"T4", "V100M16"}[i%2], 64000+32000*int64(i%3), 262144, []int{2, 4, 8}[i%3]))
	}
	for i := range 2000 {
		p := nodealloc.Pod{CPU: int64(1000 * (1 + i%8)), Mem: 4096}
		switch i % 6 {
		case 1, 2, 3:
			p.NumGPU, p.GPUMilli = 1, []int64{200, 250, 500, 700}[i%4]
		case 4:
			p.NumGPU, p.GPUMilli = 1, 1000
		case 5:
			p.NumGPU, p.GPUMilli = 2+2*(i%2), 1000
		}
		in.Pods = append(in.Pods, p)
	}
	return in
}

// One seed of each policy on benchInput, tuned to 130% of the GPU
// capacity. go test -bench Allocation -benchmem ./sim/alloc/
func BenchmarkAllocation(b *testing.B) {
	in := benchInput()
	for _, name := range nodealloc.Names() {
		b.Run("policy="+name, func(b *testing.B) {
			c := Config{Trace: "x", Nodes: "x", Policies: []string{name}, Seeds: 1, Tune: 1.3, TypicalThreshold: 95, TieBreak: TieNodeOrder}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Simulate(c, in, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
