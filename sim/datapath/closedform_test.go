package datapath

import (
	"math"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/units"
)

// One client, nothing else in the system: every request's latency must be
// the sum of its stage times computed by hand. The expectations below are
// written out from the default parameters (batch 8 of 224x224x3 INT8 =
// 1,204,224 B in, 8 x 2,000 = 16,000 B out; 200 Gb/s x 95% = 23.75 GB/s
// goodput; A100-80GB ResNet-50 batch 8 on TensorRT = 461,000 + 7 x
// 1e9/42,379.3 (23,596.6) = 626,176.2, which engine.Microseconds rounds
// to 626,175 ns), all in nanoseconds, rounded up where the model rounds up:
//
//	wire in    = 1,204,224 / 23.75e9 = 50,704.2; + 5 per message + 1,300 latency = 52,010
//	wire out   = 16,000 / 23.75e9 = 673.7; + 1,305 = 1,979
//	copy CPU   = 10,000 + 1,204,224 / (25e9 x 0.4) = 10,000 + 120,422.4 = 130,424 (pageable)
//	sync+d2h   = 6,950 + 10,000 + 16,000 / 10e9 (1,600) = 18,550
//	RDMA reply = post 300 + wire out 1,979 = 2,279
//
//	tcp:         host rx 5,000 + 1,204,224 x 0.6 / 3e9 (240,845) = 245,846, longer than the
//	             wire (52,010) and the client's send (3,000 + 120,422 = 123,422) it overlaps
//	             + decide 2,000 + copy 130,424 + launch 2,700 + gpu 626,175 + sync+d2h 18,550
//	             + reply tx 3,000 + 1,600 = 4,600
//	             + reply net max(wire 1,979, client rx 5,000 + 3,200 = 8,200) = 8,200  -> 1,038,495
//	gpudirect:   wire 52,010 (P2P cap 25 GB/s > 23.75 GB/s) + poll 500 + launch 2,700
//	             + gpu 626,175 + 18,550 + 2,279                                        ->   702,214
//	host-rdma:   52,010 + poll+decide 2,500 + 130,424 + 2,700 + 626,175 + 18,550 + 2,279 -> 834,638
//	conspirator: buffer 0 + 52,010 + SoC (500+2,000+300)/0.62 = 4,517
//	             + DMA 95 + 1,204,224/22e9 (54,738) = 54,833 + SoC (500+300)/0.62 = 1,291
//	             + notify 1,000 + poll 500 + 2,700 + 626,175 + 18,550 + 2,279            ->   763,855
//
// So alone in the system conspirator is 1 - 763,855/834,638 = 8.5% faster
// than host-rdma.
func TestSingleRequestClosedForm(t *testing.T) {
	want := map[string]float64{ // ns, from the comment above
		PathTCP:         1038495,
		PathGPUDirect:   702214,
		PathHostRDMA:    834638,
		PathConspirator: 763855,
	}
	cfg := Defaults()
	cfg.Clients.Count = 1
	cfg.Clients.Requests = 5
	cfg.WarmupRequests = 0
	res, err := Run(cfg, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Paths {
		for _, rec := range p.Records() {
			got := (rec.End - rec.Start) * 1000
			// Each stage may round by a nanosecond: allow 2 ns per stage.
			if tol := 2 * float64(len(rec.Stages)); math.Abs(got-want[p.Name]) > tol {
				t.Errorf("%s request %d: latency %.0f ns, hand-computed %.0f ns (stages %v us)", p.Name, rec.ID, got, want[p.Name], rec.Stages)
			}
		}
		if p.Completed != 5 {
			t.Errorf("%s: completed %d of 5", p.Name, p.Completed)
		}
	}
}

// The same requests under background load: every host-side stage is
// stretched by (1 + alpha*u) / (1 - u/2) in the per-core model; nothing
// else moves. At u = 50%, alpha = 10%: 1.05 / 0.75 = 1.4. In the threads
// model 40 busy threads on 80 cores leave a lone job a whole core, so only
// interference stretches: 1.05. The host-side time of each path (from the
// comment above):
//
//	tcp:         245,846 + 2,000 + 130,424 + 2,700 + 18,550 + 4,600 = 404,120
//	             (stretched, the rx stays the longest of its three overlapped parts)
//	gpudirect:   500 + 2,700 + 18,550 + 300 = 22,050
//	host-rdma:   2,500 + 130,424 + 2,700 + 18,550 + 300 = 154,474
//	conspirator: 500 + 2,700 + 18,550 + 300 = 22,050
//
// so latency(u) = latency(0) + (stretch - 1) x host time.
func TestSingleRequestUnderLoad(t *testing.T) {
	base := map[string]float64{PathTCP: 1038495, PathGPUDirect: 702214, PathHostRDMA: 834638, PathConspirator: 763855}
	host := map[string]float64{PathTCP: 404120, PathGPUDirect: 22050, PathHostRDMA: 154474, PathConspirator: 22050}
	for _, model := range []string{"per-core", "threads"} {
		cfg := Defaults()
		cfg.Clients.Count = 1
		cfg.Clients.Requests = 3
		cfg.WarmupRequests = 0
		cfg.Host.BackgroundLoad = units.Fraction(0.5)
		cfg.Host.BackgroundModel = model
		res, err := Run(cfg, 7)
		if err != nil {
			t.Fatal(err)
		}
		stretch := 1.4
		if model == "threads" {
			stretch = 1.05
		}
		for _, p := range res.Paths {
			want := base[p.Name] + (stretch-1)*host[p.Name]
			for _, rec := range p.Records() {
				got := (rec.End - rec.Start) * 1000
				if tol := 2 * float64(len(rec.Stages)); math.Abs(got-want) > tol {
					t.Errorf("%s, %s: latency %.0f ns, want %.0f", model, p.Name, got, want)
				}
			}
		}
	}
}
