package server

import "container/list"

// pageEntries holds the page cache's entries within a byte budget
// (PAGE_CACHE_MB), evicting by S3-FIFO (Yang et al., SOSP 2023): a new page
// enters a small FIFO queue (a tenth of the budget); leaving it, a page read
// again since it came goes on to the main queue, one read once goes (its key
// is remembered as a ghost). The main queue gives each page as many more
// rounds as it was read (up to three) before it goes. So a crawler reading
// every page once passes through the small queue without pushing out the
// pages visitors keep reading, and a page that was evicted and is asked for
// again soon (a ghost) comes back straight into the main queue. Sizes
// count: a page takes its bytes of the budget, and one larger than the
// budget is not kept.
//
// Not safe for concurrent use: pageCache.mu guards it. Deterministic (no
// clock, no randomness), so the eviction order is what the tests say.
type pageEntries struct {
	limit       int
	bytes       int
	smallBytes  int
	small, main list.List // of *pageSlot, oldest at the front
	slots       map[string]*list.Element
	// ghosts are keys evicted from the small queue unread, oldest first,
	// as many as there are entries at most (keys only: a few bytes each).
	ghosts     list.List // of string
	ghostIndex map[string]*list.Element
}

type pageSlot struct {
	key    string
	page   *cachedPage
	freq   uint8 // reads since it entered its queue, up to maxFreq
	inMain bool
}

const maxPageFreq = 3

func newPageEntries(limit int) *pageEntries {
	return &pageEntries{limit: limit, slots: map[string]*list.Element{}, ghostIndex: map[string]*list.Element{}}
}

// get answers the entry of key and counts the read.
func (e *pageEntries) get(key string) *cachedPage { return e.touch(e.slots[key]) }

// getBytes is get of string(key), without making the string.
func (e *pageEntries) getBytes(key []byte) *cachedPage { return e.touch(e.slots[string(key)]) }

func (e *pageEntries) touch(el *list.Element) *cachedPage {
	if el == nil {
		return nil
	}
	s := el.Value.(*pageSlot)
	if s.freq < maxPageFreq {
		s.freq++
	}
	return s.page
}

// peek answers the entry of key without counting a read.
func (e *pageEntries) peek(key string) *cachedPage {
	if el := e.slots[key]; el != nil {
		return el.Value.(*pageSlot).page
	}
	return nil
}

// put files p under key and answers the entries evicted to make room (p
// itself when it is larger than the whole budget).
func (e *pageEntries) put(key string, p *cachedPage) (evicted []*pageSlot) {
	if el := e.slots[key]; el != nil {
		// A newer render of the same page keeps the old one's place.
		s := el.Value.(*pageSlot)
		e.bytes += p.size - s.page.size
		if !s.inMain {
			e.smallBytes += p.size - s.page.size
		}
		s.page = p
	} else {
		if p.size > e.limit {
			return []*pageSlot{{key: key, page: p}}
		}
		s := &pageSlot{key: key, page: p}
		if g := e.ghostIndex[key]; g != nil {
			e.ghosts.Remove(g)
			delete(e.ghostIndex, key)
			s.inMain = true
			e.slots[key] = e.main.PushBack(s)
		} else {
			e.slots[key] = e.small.PushBack(s)
			e.smallBytes += p.size
		}
		e.bytes += p.size
	}
	for e.bytes > e.limit {
		evicted = append(evicted, e.evict(key))
	}
	return evicted
}

// evict removes one entry: never keep (the page just filed) while
// there is another.
func (e *pageEntries) evict(keep string) *pageSlot {
	for {
		if e.small.Len() > 0 && (e.smallBytes > e.limit/10 || e.main.Len() == 0) {
			el := e.small.Front()
			s := el.Value.(*pageSlot)
			e.small.Remove(el)
			e.smallBytes -= s.page.size
			if s.freq > 0 || s.key == keep && e.main.Len()+e.small.Len() > 0 {
				// Read again while in the small queue: it stays.
				s.freq, s.inMain = 0, true
				e.slots[s.key] = e.main.PushBack(s)
				continue
			}
			e.drop(s)
			e.remember(s.key)
			return s
		}
		el := e.main.Front()
		s := el.Value.(*pageSlot)
		e.main.Remove(el)
		if s.key == keep && e.main.Len()+e.small.Len() > 0 {
			e.slots[s.key] = e.main.PushBack(s)
			continue
		}
		if s.freq > 0 {
			s.freq--
			e.slots[s.key] = e.main.PushBack(s)
			continue
		}
		e.drop(s)
		return s
	}
}

func (e *pageEntries) drop(s *pageSlot) {
	delete(e.slots, s.key)
	e.bytes -= s.page.size
}

func (e *pageEntries) remember(key string) {
	e.ghostIndex[key] = e.ghosts.PushBack(key)
	e.trimGhosts()
}

// trimGhosts forgets the oldest ghosts past as many as there are entries.
func (e *pageEntries) trimGhosts() {
	for e.ghosts.Len() > max(len(e.slots), 64) {
		old := e.ghosts.Front()
		e.ghosts.Remove(old)
		delete(e.ghostIndex, old.Value.(string))
	}
}

// remove drops the entry of key, if any.
func (e *pageEntries) remove(key string) {
	el := e.slots[key]
	if el == nil {
		return
	}
	s := el.Value.(*pageSlot)
	if s.inMain {
		e.main.Remove(el)
	} else {
		e.small.Remove(el)
		e.smallBytes -= s.page.size
	}
	e.drop(s)
	e.trimGhosts()
}

func (e *pageEntries) len() int { return len(e.slots) }
