package llmserve

// kvCache is one replica's paged KV memory as vLLM's block manager keeps
// it: total blocks, each free, held privately by one request, or a cached
// prefix block (a hash) held by refs requests. A cached block no request
// holds stays cached and counts as free: it is evicted, least recently
// freed first, when a free block is needed and no uncached one is left.
type kvCache struct {
	total int
	free  int // blocks neither held nor cached
	held  int // blocks held by requests (private and cached with refs > 0)

	// Cached blocks: entries by hash; an entry with refs 0 sits in the
	// LRU list (head: evicted first). Entries live in a slice, linked by
	// index, so the cache allocates nothing per block in steady use.
	index     map[blockKey]int32
	entries   []cacheEntry
	spare     []int32 // entry slots to reuse
	lruHead   int32
	lruTail   int32
	evictable int
}

// blockKey names one BlockSize-token prompt block: the trace's hash of
// the coarser block it lies in, and its position inside that block.
type blockKey struct {
	hash uint64
	sub  int32
}

type cacheEntry struct {
	key        blockKey
	refs       int32
	prev, next int32 // LRU links while refs == 0; -1 ends
}

func newKVCache(blocks int) *kvCache {
	return &kvCache{total: blocks, free: blocks, index: map[blockKey]int32{}, lruHead: -1, lruTail: -1}
}

// available is the blocks an allocation may take: free and evictable.
func (c *kvCache) available() int { return c.free + c.evictable }

// used is the fraction of blocks held by requests.
func (c *kvCache) used() float64 { return float64(c.held) / float64(c.total) }

// allocate takes n private blocks, evicting cached ones as needed; the
// caller has checked available() >= n.
func (c *kvCache) allocate(n int) {
	for c.free < n {
		c.evict()
	}
	c.free -= n
	c.held += n
}

// release returns n private blocks.
func (c *kvCache) release(n int) {
	c.free += n
	c.held -= n
}

func (c *kvCache) evict() {
	i := c.lruHead
	e := &c.entries[i]
	c.unlink(i)
	delete(c.index, e.key)
	c.spare = append(c.spare, i)
	c.free++
}

func (c *kvCache) unlink(i int32) {
	e := &c.entries[i]
	if e.prev >= 0 {
		c.entries[e.prev].next = e.next
	} else {
		c.lruHead = e.next
	}
	if e.next >= 0 {
		c.entries[e.next].prev = e.prev
	} else {
		c.lruTail = e.prev
	}
	c.evictable--
}

func (c *kvCache) pushLRU(i int32) {
	e := &c.entries[i]
	e.prev, e.next = c.lruTail, -1
	if c.lruTail >= 0 {
		c.entries[c.lruTail].next = i
	} else {
		c.lruHead = i
	}
	c.lruTail = i
	c.evictable++
}

// lookup returns the entry cached under k, or -1.
func (c *kvCache) lookup(k blockKey) int32 {
	if i, ok := c.index[k]; ok {
		return i
	}
	return -1
}

// touch adds a holder to a cached entry (a prefix hit).
func (c *kvCache) touch(i int32) {
	e := &c.entries[i]
	if e.refs == 0 {
		c.unlink(i)
		c.held++
	}
	e.refs++
}

// unref drops a holder; a block no one holds stays cached, evictable.
func (c *kvCache) unref(i int32) {
	e := &c.entries[i]
	e.refs--
	if e.refs == 0 {
		c.held--
		c.pushLRU(i)
	}
}

// promote turns one of a request's private blocks, just filled with the
// prompt block k, into a cached entry the request holds; it returns the
// entry, or -1 when k is cached already (the block stays private, as a
// duplicate vLLM does not share either).
func (c *kvCache) promote(k blockKey) int32 {
	if _, ok := c.index[k]; ok {
		return -1
	}
	var i int32
	if n := len(c.spare); n > 0 {
		i = c.spare[n-1]
		c.spare = c.spare[:n-1]
	} else {
		i = int32(len(c.entries))
		c.entries = append(c.entries, cacheEntry{})
	}
	c.entries[i] = cacheEntry{key: k, refs: 1, prev: -1, next: -1}
	c.index[k] = i
	return i
}
