package train

import "fmt"

// Links is what a synchronisation crosses: each server's NIC (bytes/s per
// direction) with its per-step latency alpha, and the GPU link inside a
// server.
type Links struct {
	NICBytesPerSec   float64
	Alpha            float64 // seconds per step across servers
	IntraBytesPerSec float64
	IntraAlpha       float64 // seconds per step inside a server
}

// SyncSeconds is one synchronisation of a gradient of grad bytes by a job
// with gpusOn[i] GPUs on each of its servers, on links it has to itself
// (the alpha-beta closed form):
//
//   - one server: a ring over its g GPUs on the GPU link,
//     2(g-1) alpha_in + 2(g-1)/g S/B_in;
//   - ring: one ring over all n GPUs, paced by the NIC,
//     2(n-1) alpha + 2(n-1)/n S/B;
//   - hierarchical: reduce inside each server and broadcast back after
//     (the largest server's ring on its GPU link) around a ring of the k
//     servers, 2(k-1) alpha + 2(k-1)/k S/B;
//   - ps: the first server's NIC receives every other server's gradient
//     and sends the sum back, pipelined chunk by chunk as BytePS's
//     servers run (a chunk's sum is pulled while the next chunks are
//     pushed, on the other direction of the NICs): (k-1) S/B + 2 alpha,
//     with the servers' inner rings as hierarchical;
//   - ps-dedicated: the same with the PS on a machine of its own, whose
//     NIC receives all k servers' gradients: k S/B + 2 alpha.
//
// The training simulator moves the same bytes as flows on shared links;
// alone, it gives these times (a test holds the two together).
func SyncSeconds(form string, grad float64, gpusOn []int, l Links) (float64, error) {
	k := len(gpusOn)
	if k == 0 {
		return 0, fmt.Errorf("train: a synchronisation over no server")
	}
	n, g := 0, 0
	for _, x := range gpusOn {
		if x < 1 {
			return 0, fmt.Errorf("train: a server with %d GPUs", x)
		}
		n += x
		g = max(g, x)
	}
	inner := 0.0
	if g > 1 {
		inner = 2*float64(g-1)*l.IntraAlpha + 2*float64(g-1)/float64(g)*grad/l.IntraBytesPerSec
	}
	if k == 1 {
		return inner, nil
	}
	switch form {
	case "ring":
		return 2*float64(n-1)*l.Alpha + 2*float64(n-1)/float64(n)*grad/l.NICBytesPerSec, nil
	case "hierarchical":
		return inner + 2*float64(k-1)*l.Alpha + 2*float64(k-1)/float64(k)*grad/l.NICBytesPerSec, nil
	case "ps":
		return inner + 2*l.Alpha + float64(k-1)*grad/l.NICBytesPerSec, nil
	case "ps-dedicated":
		return inner + 2*l.Alpha + float64(k)*grad/l.NICBytesPerSec, nil
	}
	return 0, fmt.Errorf("train: unknown all-reduce %q; use ring, hierarchical, ps or ps-dedicated", form)
}
