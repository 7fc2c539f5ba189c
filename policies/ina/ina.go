// Package ina provides the policies that share an aggregating device's
// scarce memory (a programmable switch's aggregator slots, a SmartNIC's
// buffer) among the training jobs that aggregate their gradients in the
// network, as named plugins:
//
//   - none: no in-network aggregation; every job runs its host all-reduce.
//   - static (SwitchML, NSDI'21): the pool is cut into fixed partitions of
//     partition slots; a job takes one when it starts, if one is free, and
//     keeps it to its end; a job without one runs its host all-reduce, and
//     takes the next partition that frees up at its next iteration.
//   - atp (ATP, NSDI'21): one shared pool. Each job's window of slots is
//     a set of aggregators chosen by hashing (job, index), as ATP's
//     HashNew_crc does; a slot held by another job at the moment is a
//     collision, and the chunks that map to it go unaggregated to the
//     job's parameter server over the host path, for the whole phase.
//     First come, first served; nothing is preempted.
//   - esa (ESA: Wang et al., arXiv 2201.06398; ICNP 2023): preemptive
//     allocation with priority. Whenever a job enters or leaves its
//     synchronisation, the pool is dealt to the jobs synchronising in
//     priority order, each up to its window; a job that loses slots has
//     the partial aggregates in them sent to its parameter server, and
//     one left with none sends the rest of its phase there. ESA's full
//     text is not public; this reading is from its abstract ("preemptive
//     allocation plus priority scheduling"). Priority is the least
//     remaining work first (argument priority: remaining), which shortens
//     mean completion time as shortest-remaining-time does; fifo (the
//     earliest arrival first) is the alternative.
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
	Job    int // unique, stable
	Window int // slots it would use (its window of chunks in flight)
	// Priority orders jobs for preemptive policies: lower first (esa:
	// the remaining work in seconds). Arrival breaks ties (lower first).
	Priority float64
	Arrival  int
}

// Grant is what a job gets for a synchronisation phase: Slots of the pool
// (its in-network window); PSFraction of its chunks go unaggregated to its
// parameter server (atp's collisions); Ring: no in-network aggregation,
// its host all-reduce instead.
type Grant struct {
	Job        int
	Slots      int
	PSFraction float64
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

// Pool describes the aggregator memory a policy shares.
type Pool struct {
	Slots int
	// PerJob is the device's window per job, the default of static's
	// partition.
	PerJob int
	// Seed seeds atp's hashing (each job's set of slots).
	Seed uint64
}

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
		return newStatic(p.Slots, size), nil
	}},
	"atp": {args: map[string]string{}, make: func(p Pool, _ map[string]string) (Policy, error) { return newATP(p), nil }},
	"esa": {args: map[string]string{"priority": "remaining"}, make: func(p Pool, a map[string]string) (Policy, error) {
		switch a["priority"] {
		case "remaining", "fifo":
		default:
			return nil, fmt.Errorf("esa: priority %q; want remaining (least remaining work first) or fifo (earliest arrival first)", a["priority"])
		}
		return newESA(p.Slots, a["priority"] == "fifo"), nil
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
