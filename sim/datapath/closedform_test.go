package datapath

import (
	"math"
	"testing"

	"github.com/conspirator-sim/conspirator/hw/units"
)

// One client, nothing else in the system: every request's latency must be
// the sum of its stage times computed by hand. The expectations below are
// written out from the default parameters (batch 8 of 224x224x3 FP16 =
// 2,408,448 B in, 8 x 2,000 = 16,000 B out; 200 Gb/s x 95% = 23.75 GB/s
// goodput; A100-80GB ResNet-50 batch 8 = 5,000 us / 13.8 = 362,319 ns),
// all in nanoseconds, rounded up where the model rounds up:
//
//	wire in    = 2,408,448 / 23.75e9 = 101,408.3; + 5 per message + 1,300 latency = 102,713
//	wire out   = 16,000 / 23.75e9 = 673.7; + 1,305 = 1,979
//	copy CPU   = 10,000 + 2,408,448 / (25e9 x 0.4) = 10,000 + 240,845 = 250,845 (pageable)
//	sync+d2h   = 6,950 + 10,000 + 16,000 / 10e9 (1,600) = 18,550
//	RDMA reply = post 300 + wire out 1,979 = 2,279
//
//	tcp:         host rx 5,000 + 2,408,448 x 0.6 / 3e9 (481,690) = 486,690, longer than the
//	             wire (102,713) and the client's send (3,000 + 240,845 = 243,845) it overlaps
//	             + decide 2,000 + copy 250,845 + launch 2,700 + gpu 362,319 + sync+d2h 18,550
//	             + reply tx 3,000 + 1,600 = 4,600
//	             + reply net max(wire 1,979, client rx 5,000 + 3,200 = 8,200) = 8,200  -> 1,135,904
//	gpudirect:   wire 102,713 (P2P cap 25 GB/s > 23.75 GB/s) + poll 500 + launch 2,700
//	             + gpu 362,319 + 18,550 + 2,279                                        ->   489,061
//	host-rdma:   102,713 + poll+decide 2,500 + 250,845 + 2,700 + 362,319 + 18,550 + 2,279 -> 741,906
//	conspirator: buffer 0 + 102,713 + SoC (500+2,000+300)/0.62 = 4,517
//	             + DMA 95 + 2,408,448/22e9 (109,475) = 109,570 + SoC (500+300)/0.62 = 1,291
//	             + notify 1,000 + poll 500 + 2,700 + 362,319 + 18,550 + 2,279            ->   605,439
//
// So alone in the system conspirator is 1 - 605,439/741,906 = 18.4% faster
// than host-rdma.
func TestSingleRequestClosedForm(t *testing.T) {
	want := map[string]float64{ // ns, from the comment above
		PathTCP:         1135904,
		PathGPUDirect:   489061,
		PathHostRDMA:    741906,
		PathConspirator: 605439,
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
//	tcp:         486,690 + 2,000 + 250,845 + 2,700 + 18,550 + 4,600 = 765,385
//	             (stretched, the rx stays the longest of its three overlapped parts)
//	gpudirect:   500 + 2,700 + 18,550 + 300 = 22,050
//	host-rdma:   2,500 + 250,845 + 2,700 + 18,550 + 300 = 274,895
//	conspirator: 500 + 2,700 + 18,550 + 300 = 22,050
//
// so latency(u) = latency(0) + (stretch - 1) x host time.
func TestSingleRequestUnderLoad(t *testing.T) {
	base := map[string]float64{PathTCP: 1135904, PathGPUDirect: 489061, PathHostRDMA: 741906, PathConspirator: 605439}
	host := map[string]float64{PathTCP: 765385, PathGPUDirect: 22050, PathHostRDMA: 274895, PathConspirator: 22050}
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
