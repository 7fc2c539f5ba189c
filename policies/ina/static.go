package ina

import "slices"

// static cuts the pool into partitions held by jobs for their lifetime.
type static struct {
	size    int   // a partition's slots, the job's rate
	cost    int   // the pool's slots one of them takes (Pool.StaticCost)
	owner   []int // per partition: the job holding it, -1 free
	waiting []int // jobs started without a partition, in start order
	held    map[int]int
	out     [1]Grant // Enter's answer, reused
}

func newStatic(slots, size, cost int) *static {
	n := slots / (size * cost)
	s := &static{size: size, cost: cost, owner: make([]int, n), held: map[int]int{}}
	for i := range s.owner {
		s.owner[i] = -1
	}
	return s
}

func (*static) Name() string { return "static" }

func (s *static) Start(job int) {
	if !s.take(job) {
		s.waiting = append(s.waiting, job)
	}
}

func (s *static) take(job int) bool {
	for p, o := range s.owner {
		if o < 0 {
			s.owner[p] = job
			s.held[job] = p
			return true
		}
	}
	return false
}

func (s *static) End(job int) {
	if p, ok := s.held[job]; ok {
		s.owner[p] = -1
		delete(s.held, job)
		// The next job waiting takes it (it uses it from its next phase).
		for len(s.waiting) > 0 {
			j := s.waiting[0]
			s.waiting = s.waiting[1:]
			if s.take(j) {
				break
			}
		}
		return
	}
	s.waiting = slices.DeleteFunc(s.waiting, func(j int) bool { return j == job })
}

func (s *static) Enter(d Demand) []Grant {
	s.out[0] = s.Peek(d)
	return s.out[:]
}

func (s *static) Peek(d Demand) Grant {
	if _, ok := s.held[d.Job]; ok {
		return Grant{Job: d.Job, Slots: min(s.size, d.Need)}
	}
	return Grant{Job: d.Job, Ring: true}
}

func (*static) Leave(int) []Grant { return nil }

// Reserved is the pool's slots of the partition job holds, kept between
// its phases (its slots with their shadow copies, where the pool does
// not count them).
func (s *static) Reserved(job int) int {
	if _, ok := s.held[job]; ok {
		return s.size * s.cost
	}
	return 0
}
