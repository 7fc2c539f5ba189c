package llmserve

// waitQueue is a replica's waiting requests. FCFS: arrival order, with
// preempted requests put back at the head (the last put back first, so
// several preempted in one step keep their running order). Priority: the
// shortest prompt first, ties by arrival; a preempted request rejoins by
// the same key.
type waitQueue struct {
	priority bool
	fifo     []*request
	head     int
	front    []*request // stack: top served first
	heap     []*request
}

func (w *waitQueue) len() int { return len(w.fifo) - w.head + len(w.front) + len(w.heap) }

func (w *waitQueue) peek() *request {
	if w.priority {
		return w.heap[0]
	}
	if n := len(w.front); n > 0 {
		return w.front[n-1]
	}
	return w.fifo[w.head]
}

func (w *waitQueue) pop() *request {
	if w.priority {
		return w.heapPop()
	}
	if n := len(w.front); n > 0 {
		r := w.front[n-1]
		w.front = w.front[:n-1]
		return r
	}
	r := w.fifo[w.head]
	w.fifo[w.head] = nil
	w.head++
	if w.head == len(w.fifo) {
		w.fifo, w.head = w.fifo[:0], 0
	} else if w.head > 1024 && w.head*2 > len(w.fifo) {
		n := copy(w.fifo, w.fifo[w.head:])
		clear(w.fifo[n:])
		w.fifo, w.head = w.fifo[:n], 0
	}
	return r
}

func (w *waitQueue) pushBack(r *request) {
	if w.priority {
		w.heapPush(r)
		return
	}
	w.fifo = append(w.fifo, r)
}

func (w *waitQueue) pushFront(r *request) {
	if w.priority {
		w.heapPush(r)
		return
	}
	w.front = append(w.front, r)
}

// before orders the priority queue: shorter prompt, then earlier arrival.
func before(a, b *request) bool {
	if a.prompt != b.prompt {
		return a.prompt < b.prompt
	}
	return a.seq < b.seq
}

func (w *waitQueue) heapPush(r *request) {
	h := append(w.heap, r)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !before(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	w.heap = h
}

func (w *waitQueue) heapPop() *request {
	h := w.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h[n] = nil
	h = h[:n]
	i := 0
	for {
		l, m := 2*i+1, i
		if l < n && before(h[l], h[m]) {
			m = l
		}
		if r := l + 1; r < n && before(h[r], h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	w.heap = h
	return top
}
