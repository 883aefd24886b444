package render

import (
	"container/list"
	"context"
	"errors"
	"sync"
)

// ErrBusy is answered to a refresh (Refresh) when as many refreshes wait
// for a runtime as the engine lets wait, and to any render when the queue
// of first views is full: the caller has a page to serve meanwhile, or
// answers 503 at once rather than after a long wait.
var ErrBusy = errors.New("renderer busy")

type refreshKey struct{}

// Refresh marks a render as one whose page is being served meanwhile (an
// older copy, stale while it renders again): it waits behind every render
// of a page nobody has yet, so that a visitor opening a cold page never
// queues behind the refreshes of pages others are already reading.
func Refresh(ctx context.Context) context.Context { return context.WithValue(ctx, refreshKey{}, true) }

func isRefresh(ctx context.Context) bool { v, _ := ctx.Value(refreshKey{}).(bool); return v }

// Lanes of the scheduler, served in this order.
const (
	laneFirst   = iota // a viewer waits with nothing to show
	laneRefresh        // a stale copy is being served meanwhile
	lanes
)

// scheduler hands out at most size items (runtimes): idle ones first, then
// new ones while fewer than size exist. Waiters are served by lane, first
// come first served within one; each lane's queue is bounded (limits), past
// which acquire answers ErrBusy at once. Deterministic: no timers.
type scheduler[T any] struct {
	mu      sync.Mutex
	size    int
	made    int // items that exist or are being made
	idle    []T
	waiting [lanes]list.List // of *waiter[T]
	limits  [lanes]int
}

type waiter[T any] struct {
	ch chan grant[T]
}

// grant is an item handed to a waiter, or (make) a free slot in which the
// waiter makes a new item.
type grant[T any] struct {
	item T
	make bool
}

func newScheduler[T any](size int, limits [lanes]int) *scheduler[T] {
	return &scheduler[T]{size: size, limits: limits}
}

// acquire answers an idle item, or make: the caller is to make a new one
// (and discard the slot if that fails).
func (s *scheduler[T]) acquire(ctx context.Context, lane int) (item T, mk bool, err error) {
	s.mu.Lock()
	ahead := 0
	for l := 0; l <= lane; l++ {
		ahead += s.waiting[l].Len()
	}
	if ahead == 0 {
		if n := len(s.idle); n > 0 {
			item = s.idle[n-1]
			s.idle = s.idle[:n-1]
			s.mu.Unlock()
			return item, false, nil
		}
		if s.made < s.size {
			s.made++
			s.mu.Unlock()
			return item, true, nil
		}
	}
	if s.waiting[lane].Len() >= s.limits[lane] {
		s.mu.Unlock()
		return item, false, ErrBusy
	}
	w := &waiter[T]{ch: make(chan grant[T], 1)}
	el := s.waiting[lane].PushBack(w)
	s.mu.Unlock()
	select {
	case g := <-w.ch:
		return g.item, g.make, nil
	case <-ctx.Done():
		s.mu.Lock()
		select {
		case g := <-w.ch:
			// Granted as the context ended: pass it on.
			s.mu.Unlock()
			if g.make {
				s.discard()
			} else {
				s.release(g.item)
			}
		default:
			s.waiting[lane].Remove(el)
			s.mu.Unlock()
		}
		return item, false, ctx.Err()
	}
}

// next answers the first waiter by lane, removed from its queue, or nil.
func (s *scheduler[T]) next() *waiter[T] {
	for l := range s.waiting {
		if el := s.waiting[l].Front(); el != nil {
			s.waiting[l].Remove(el)
			return el.Value.(*waiter[T])
		}
	}
	return nil
}

// release gives an item back: to the first waiter, or idle.
func (s *scheduler[T]) release(item T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.next(); w != nil {
		w.ch <- grant[T]{item: item}
		return
	}
	s.idle = append(s.idle, item)
}

// discard frees the slot of an item that is no more (or was never made):
// the first waiter makes a new one in it.
func (s *scheduler[T]) discard() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.next(); w != nil {
		w.ch <- grant[T]{make: true}
		return
	}
	s.made--
}

// stats answers the items in use and the most there may be.
func (s *scheduler[T]) stats() (inUse, size int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.made - len(s.idle), s.size
}

// waitingIn answers how many wait in lane (tests).
func (s *scheduler[T]) waitingIn(lane int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waiting[lane].Len()
}
