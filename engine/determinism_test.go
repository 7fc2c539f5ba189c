package engine

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// mmc is an M/M/c queue with reneging built only on the engine: Poisson
// arrivals, c servers with exponential service, and customers who abandon
// the waiting line after an exponential patience unless a server takes
// them first (which cancels their abandonment event). Each random quantity
// has its own named stream.
type mmc struct {
	s                       *Simulator
	arrivals, service, pat  *Stream
	meanIA, meanSvc, meanPt float64 // nanoseconds; meanPt 0 means infinitely patient
	servers, busy           int
	line                    []*customer // FIFO; abandoned ones are removed
	nextID                  int
	trace                   []string // "time label id", when tracing
	tracing                 bool

	// response times (arrival to departure) of served customers, in order
	// of departure
	resp []Time
}

type customer struct {
	id      int
	arrived Time
	renege  Handle
}

func newMMC(k QueueKind, seed uint64, servers int, meanIA, meanSvc, meanPt Time) *mmc {
	m := &mmc{
		s:        New(NewQueue(k)),
		arrivals: NewStream(seed, "arrivals"),
		service:  NewStream(seed, "service"),
		pat:      NewStream(seed, "patience"),
		meanIA:   float64(meanIA), meanSvc: float64(meanSvc), meanPt: float64(meanPt),
		servers: servers,
	}
	m.s.MustAfter(Time(m.arrivals.Exp(m.meanIA)), m.arrive)
	return m
}

func (m *mmc) log(label string, id int) {
	if m.tracing {
		m.trace = append(m.trace, fmt.Sprintf("%d %s %d", m.s.Now(), label, id))
	}
}

func (m *mmc) arrive() {
	c := &customer{id: m.nextID, arrived: m.s.Now()}
	m.nextID++
	m.log("arrive", c.id)
	m.s.MustAfter(Time(m.arrivals.Exp(m.meanIA)), m.arrive)
	if m.busy < m.servers {
		m.startService(c)
		return
	}
	if m.meanPt > 0 {
		c.renege = m.s.MustAfter(Time(m.pat.Exp(m.meanPt)), func() { m.abandon(c) })
	}
	m.line = append(m.line, c)
}

func (m *mmc) abandon(c *customer) {
	i := slices.Index(m.line, c)
	m.line = slices.Delete(m.line, i, i+1)
	m.log("renege", c.id)
}

func (m *mmc) startService(c *customer) {
	m.busy++
	m.log("start", c.id)
	m.s.MustAfter(Time(m.service.Exp(m.meanSvc)), func() { m.depart(c) })
}

func (m *mmc) depart(c *customer) {
	m.busy--
	m.log("depart", c.id)
	m.resp = append(m.resp, m.s.Now()-c.arrived)
	if len(m.line) > 0 {
		next := m.line[0]
		m.line = m.line[1:]
		if !m.s.Cancel(next.renege) && next.renege.Valid() {
			panic("a waiting customer's abandonment had already fired")
		}
		m.startService(next)
	}
}

func mmcTrace(k QueueKind, seed uint64) []string {
	// lambda = 1/ms, service mean 1.6ms on 2 servers (rho = 0.8), patience
	// mean 3ms: a busy line where reneging, and so cancellation, is common.
	m := newMMC(k, seed, 2, Millisecond, Microseconds(1600), 3*Millisecond)
	m.tracing = true
	m.s.RunUntil(2 * Second)
	return m.trace
}

// TestDeterminism: the same seed gives the same (time, label) trace bit for
// bit, on every queue implementation; different seeds give different traces.
func TestDeterminism(t *testing.T) {
	ref := mmcTrace(QueueKinds[0], 1)
	reneged := 0
	for _, l := range ref {
		if strings.Contains(l, " renege ") {
			reneged++
		}
	}
	// About 2000 arrivals in 2s; with this load some tens renege. If none
	// did, the test would not exercise cancellation.
	if len(ref) < 5000 || reneged < 20 {
		t.Fatalf("trace too thin to test anything: %d entries, %d reneges", len(ref), reneged)
	}
	for _, k := range QueueKinds {
		for run := range 2 {
			if got := mmcTrace(k, 1); !slices.Equal(got, ref) {
				t.Errorf("%s run %d: trace differs from %s with the same seed", k, run, QueueKinds[0])
			}
		}
		if got := mmcTrace(k, 2); slices.Equal(got, ref) {
			t.Errorf("%s: seeds 1 and 2 gave identical traces", k)
		}
	}
}

// The engine reproduces a closed form: the M/M/2 mean response time from
// Erlang's C formula. With a = lambda/mu = 1.6 and c = 2 (rho = 0.8),
// C = (a^2/2 * 1/(1-rho)) / (1 + a + a^2/2 * 1/(1-rho)) = 6.4/9 = 0.7111,
// W = C/(c*mu - lambda) + 1/mu = 0.7111/0.25 + 1.6 = 4.444 ms. The
// tolerance is 4 standard errors from 20 batch means (responses of
// consecutive customers are correlated, so i.i.d. errors would be too
// small).
func TestMM2MatchesErlangC(t *testing.T) {
	const lambda, mu, c = 1.0, 1 / 1.6, 2 // per ms
	a := lambda / mu
	rho := a / c
	top := a * a / 2 / (1 - rho)
	erlangC := top / (1 + a + top)
	wantW := erlangC/(c*mu-lambda) + 1/mu // ms

	n := 200_000
	if testing.Short() {
		n = 50_000
	}
	m := newMMC(QueueCalendar, 11, 2, Millisecond, Microseconds(1600), 0)
	for len(m.resp) < n && m.s.Step() {
	}
	const batches = 20
	bs := n / batches
	var means []float64
	for b := range batches {
		sum := 0.0
		for _, r := range m.resp[b*bs : (b+1)*bs] {
			sum += r.Millis()
		}
		means = append(means, sum/float64(bs))
	}
	var mean, v float64
	for _, x := range means {
		mean += x / batches
	}
	for _, x := range means {
		v += (x - mean) * (x - mean) / (batches - 1)
	}
	se := math.Sqrt(v / batches)
	t.Logf("M/M/2 rho=0.8: simulated W = %.4f ms +- %.4f (1 SE), Erlang C gives %.4f ms", mean, se, wantW)
	if math.Abs(mean-wantW) > 4*se || se > 0.05*wantW {
		t.Errorf("simulated W = %.4f ms (SE %.4f), Erlang C %.4f ms", mean, se, wantW)
	}
}
