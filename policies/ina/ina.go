// Package ina provides the policies that share an aggregating device's
// scarce memory (a programmable switch's aggregator slots, a SmartNIC's
// buffer) among the training jobs that aggregate their gradients in the
// network, as named plugins.
//
// Occupancy is fluid, as the systems hold aggregators: a chunk holds one
// for its round trip (SwitchML: until every worker's contribution has
// arrived and the result has left; ATP: until the parameter server's
// result passes back), so a job streaming at its line rate holds its
// bandwidth-delay product in slots (Demand.Need: 189 at 100 Gb/s and a
// 5 us round trip, for a chunk of 332 bytes on the wire, SwitchML's or
// ATP's values and headers alike), spread over the Window of aggregators its
// chunks cycle through; memory pressure comes from the jobs synchronising
// at the same moment, not from whole windows held for whole phases.
//
//   - none: no in-network aggregation; every job runs its host all-reduce.
//   - static (SwitchML, NSDI'21): the pool is cut into fixed partitions of
//     partition slots (default: the bandwidth-delay product, as SwitchML
//     sizes a job's pool); a job takes one when it starts, if one is free,
//     and keeps it to its end; a job without one runs its host
//     all-reduce, and takes the next partition that frees up.
//   - atp (ATP, NSDI'21): one shared pool. Each job's chunks cycle over a
//     window of aggregators chosen by hashing (appID, index) as ATP's
//     HashNew_crc does (CRC-32 truncated to 16 bits, modulo the pool,
//     salted until new to the job: in-ATP/ATP common/HashTable.cc), or by
//     ideal uniform hashing (Pool.Hash "uniform"). A chunk whose aggregator
//     another job's chunk holds is a collision: it goes unaggregated to the
//     job's fallback (its parameter server); the next chunk to that index
//     tries again. A job's collided share is the chance that its
//     aggregator is held: summed over the other synchronising jobs, the
//     share of its window they overlap times the share of their window
//     they hold in flight. First come, first served; nothing is preempted.
//   - esa (ESA: Wang et al., arXiv 2201.06398; ICNP 2023): atp's pool and
//     hashing with preemption in the data plane. A chunk that finds its
//     aggregator held by a lower-priority job takes it; the partial
//     aggregate in it goes to its owner's fallback (Grant.Evicted). The
//     priority is what a switch can know, carried in the packet and set
//     by the host: remaining-iterations (default; fewer first) or
//     size-class (a 4-bit class of the job's remaining gradient bytes,
//     log2 of MB), or fifo (job arrival). Only ESA's abstract could be
//     read from here ("preemptive aggregator allocation primitive and
//     priority scheduling at the data-plane"; the full text, arXiv
//     2201.06398, was not reachable): this is a reading of it.
//   - esa-oracle: the central dealer of exact remaining work that deals
//     the pool whole to the synchronising jobs at every phase change, kept
//     as the oracle ablation of esa.
//
// A policy sees jobs only through Demand and answers with Grants; it
// keeps its own state between calls, which come in the simulator's event
// order, so that it is deterministic.
package ina

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/conspirator-sim/conspirator/internal/suggest"
)

// Demand is a job that begins a synchronisation phase and asks for slots.
type Demand struct {
	Job int // unique, stable
	// Window is the aggregators its chunks cycle over (ATP's
	// AGTR_TO_USE_PER_APPLICATION); Need is how many of them it holds at
	// once, its bandwidth-delay product in slots (at most Window).
	Window int
	Need   int
	// What a host knows and can carry in its packets: iterations left and
	// gradient bytes left to synchronise (esa's priorities).
	RemainingIterations int
	RemainingBytes      float64
	// Work is the exact remaining work in seconds, known only to an
	// oracle (esa-oracle). Arrival breaks ties (lower first).
	Work    float64
	Arrival int
}

// Grant is what a job holds from now on: Slots of the pool in flight;
// PSFraction of its chunks go unaggregated to its fallback (collisions,
// or no slots at all); Evicted: slots whose partial aggregates were
// taken from it now (preemption) and go to its fallback; Ring: no
// in-network aggregation, its host all-reduce instead.
type Grant struct {
	Job        int
	Slots      int
	PSFraction float64
	Evicted    int
	Ring       bool
}

// Policy allocates a pool of Pool.Slots aggregator slots. Start and End
// bracket a job's run; Enter and Leave a synchronisation phase. Enter and
// Leave return every grant that changed, the entering job's always first,
// in a slice the policy may reuse at its next call (the simulator enters
// millions of phases). Peek says what Enter would grant d now, changing nothing: the simulator
// times a job that runs alone (no other job can change its grant) from it
// without entering every phase.
type Policy interface {
	Name() string
	Start(job int)
	End(job int)
	Enter(d Demand) []Grant
	Leave(job int) []Grant
	Peek(d Demand) Grant
}

// Reserver is a policy whose jobs hold slots between their phases as well
// (static's partitions, kept from a job's start to its end): Reserved is
// what job holds now. The occupancy series shows that, not the phases.
type Reserver interface {
	Reserved(job int) int
}

// Settler is a policy whose holdings are a fixed point found by passes
// over the synchronising jobs (atp, esa): Unsettled counts the Enter and
// Leave calls that ended before the passes settled (the run reports it).
type Settler interface {
	Unsettled() int64
}

// Pool describes the aggregator memory a policy shares.
type Pool struct {
	Slots int
	// PerJob is the default of static's partition: a job's
	// bandwidth-delay product in slots.
	PerJob int
	// StaticCost is the pool's slots one of static's (SwitchML's) slots
	// takes: 1 where the pool counts SwitchML's slots with their shadow
	// copies (tofino-switchml), 2 elsewhere (the slot and its shadow
	// copy); 0 is taken as 1.
	StaticCost int
	// Seed seeds the hashing (which application IDs the jobs get).
	Seed uint64
	// Hash is how atp and esa map a job's window onto the pool: crc
	// (ATP's own, the default) or uniform (ideal hashing).
	Hash string
}

// Hashes (Pool.Hash).
const (
	HashCRC     = "crc"
	HashUniform = "uniform"
)

// HashNames lists the hashes.
func HashNames() []string { return []string{HashCRC, HashUniform} }

type factory struct {
	args map[string]string // argument -> default
	make func(p Pool, args map[string]string) (Policy, error)
}

var registry = map[string]factory{
	"none": {args: map[string]string{}, make: func(Pool, map[string]string) (Policy, error) { return none{}, nil }},
	"static": {args: map[string]string{"partition": ""}, make: func(p Pool, a map[string]string) (Policy, error) {
		size := p.PerJob
		if a["partition"] != "" {
			n, err := strconv.Atoi(a["partition"])
			if err != nil || n < 1 {
				return nil, fmt.Errorf("static: partition %q; want a number of slots >= 1", a["partition"])
			}
			size = n
		}
		return newStatic(p.Slots, size, max(1, p.StaticCost)), nil
	}},
	"atp": {args: map[string]string{}, make: func(p Pool, _ map[string]string) (Policy, error) { return newShared("atp", p, "") }},
	"esa": {args: map[string]string{"priority": PriorityRemainingIterations}, make: func(p Pool, a map[string]string) (Policy, error) {
		if !slices.Contains(Priorities(), a["priority"]) {
			return nil, fmt.Errorf("esa: priority %q; want %s (what a switch can read from the packet)", a["priority"], strings.Join(Priorities(), ", "))
		}
		return newShared("esa", p, a["priority"])
	}},
	"esa-oracle": {args: map[string]string{"priority": "remaining"}, make: func(p Pool, a map[string]string) (Policy, error) {
		switch a["priority"] {
		case "remaining", "fifo":
		default:
			return nil, fmt.Errorf("esa-oracle: priority %q; want remaining (least exact remaining work first) or fifo (earliest arrival first)", a["priority"])
		}
		return newESAOracle(p.Slots, a["priority"] == "fifo"), nil
	}},
}

// Names lists the policies, sorted.
func Names() []string {
	out := make([]string, 0, len(registry))
	for k := range registry {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// BaseName is a policy entry's name without its label ("esa/fifo" ->
// "esa"): an entry NAME/LABEL is NAME with arguments of its own.
func BaseName(entry string) string {
	name, _, _ := strings.Cut(entry, "/")
	return name
}

// ResultsViaPS says whether policy entry runs ATP's protocol, in which
// the switch sends every fully aggregated chunk to the job's parameter
// server, whose reply carries the result back through the switch to the
// workers (in-ATP/ATP server/ParameterServer.cc): atp, and esa and
// esa-oracle, read as ATP's protocol with another allocation. SwitchML
// (static) returns the result from the switch.
func ResultsViaPS(entry string) bool {
	switch BaseName(entry) {
	case "atp", "esa", "esa-oracle":
		return true
	}
	return false
}

// CRCUnusedSlots is how many of a pool of slots a hashing policy (atp,
// esa) among entries never uses under hash: ATP's CRC is truncated to 16
// bits, so a pool past CRCMaxWindow slots has slots no window can name
// (0 when no such policy runs, the hash is uniform, or the pool is
// smaller).
func CRCUnusedSlots(hash string, slots int, entries []string) int {
	if hash != HashCRC || slots <= CRCMaxWindow {
		return 0
	}
	for _, e := range entries {
		if b := BaseName(e); b == "atp" || b == "esa" {
			return slots - CRCMaxWindow
		}
	}
	return 0
}

// New returns the named policy (an entry NAME or NAME/LABEL) over pool,
// with args over its defaults; an unknown name or argument is an error
// naming what is known.
func New(entry string, pool Pool, args map[string]string) (Policy, error) {
	name := BaseName(entry)
	f, ok := registry[name]
	if !ok {
		hint := ""
		if near := suggest.Nearest(name, Names()); near != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", near)
		}
		return nil, fmt.Errorf("unknown aggregation policy %q%s; known: %s", name, hint, strings.Join(Names(), ", "))
	}
	if pool.Slots < 1 {
		return nil, fmt.Errorf("%s: a pool of %d slots; want at least 1", name, pool.Slots)
	}
	if pool.Hash == "" {
		pool.Hash = HashCRC
	}
	if !slices.Contains(HashNames(), pool.Hash) {
		return nil, fmt.Errorf("%s: hash %q; want %s", name, pool.Hash, strings.Join(HashNames(), " or "))
	}
	all := map[string]string{}
	for k, v := range f.args {
		all[k] = v
	}
	for k, v := range args {
		if _, ok := f.args[k]; !ok {
			known := make([]string, 0, len(f.args))
			for a := range f.args {
				known = append(known, a)
			}
			slices.Sort(known)
			return nil, fmt.Errorf("%s: unknown argument %q; it takes %v", name, k, known)
		}
		all[k] = v
	}
	return f.make(pool, all)
}

// none: every job runs its host all-reduce.
type none struct{}

func (none) Name() string           { return "none" }
func (none) Start(int)              {}
func (none) End(int)                {}
func (none) Leave(int) []Grant      { return nil }
func (none) Enter(d Demand) []Grant { return []Grant{{Job: d.Job, Ring: true}} }
func (none) Peek(d Demand) Grant    { return Grant{Job: d.Job, Ring: true} }
