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

type tenantKey struct{}

// ForApp names the app a render is for. Waiting renders take turns by app
// (one of each app with renders waiting, round robin), so a visitor opening
// a cold page of one app waits behind at most one render of each other app
// however many of one app's pages a crawler or a burst asks for, and when
// the queue is full the app with the most renders waiting gives up its
// newest (ErrBusy) rather than a newcomer being refused. Renders of no app
// take their turns as one.
func ForApp(ctx context.Context, appID string) context.Context {
	return context.WithValue(ctx, tenantKey{}, appID)
}

func tenantOf(ctx context.Context) string { v, _ := ctx.Value(tenantKey{}).(string); return v }

// Lanes of the scheduler, served in this order.
const (
	laneFirst   = iota // a viewer waits with nothing to show
	laneRefresh        // a stale copy is being served meanwhile
	lanes
)

// scheduler hands out at most size items (runtimes): idle ones first, then
// new ones while fewer than size exist. Waiters are served by lane; within
// a lane, tenants (apps) take turns round robin, each tenant's waiters in
// order of arrival. Each lane's queue is bounded (limits): past it, the
// tenant with the most waiters loses its newest to a newcomer of a tenant
// with fewer, else the newcomer gets ErrBusy at once. Deterministic: no
// timers.
type scheduler[T any] struct {
	mu      sync.Mutex
	size    int
	made    int // items that exist or are being made
	idle    []T
	waiting [lanes]queue[T]
	limits  [lanes]int
}

// queue is one lane's waiters, by tenant.
type queue[T any] struct {
	n       int
	tenants map[string]*tenantQueue[T]
	turns   list.List // of *tenantQueue[T] with waiters, next turn first
}

type tenantQueue[T any] struct {
	name    string
	waiters list.List // of *waiter[T], oldest first
	turn    *list.Element
}

type waiter[T any] struct {
	ch     chan grant[T]
	tenant *tenantQueue[T]
	el     *list.Element
}

// grant is an item handed to a waiter, or (make) a free slot in which the
// waiter makes a new item, or (err) its dismissal from a full queue.
type grant[T any] struct {
	item T
	make bool
	err  error
}

func newScheduler[T any](size int, limits [lanes]int) *scheduler[T] {
	s := &scheduler[T]{size: size, limits: limits}
	for l := range s.waiting {
		s.waiting[l].tenants = map[string]*tenantQueue[T]{}
	}
	return s
}

// acquire answers an idle item, or make: the caller is to make a new one
// (and discard the slot if that fails). tenant is whose render waits.
func (s *scheduler[T]) acquire(ctx context.Context, lane int, tenant string) (item T, mk bool, err error) {
	s.mu.Lock()
	ahead := 0
	for l := 0; l <= lane; l++ {
		ahead += s.waiting[l].n
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
	q := &s.waiting[lane]
	if q.n >= s.limits[lane] && !q.dismissForNewcomer(tenant) {
		s.mu.Unlock()
		return item, false, ErrBusy
	}
	w := q.push(tenant)
	s.mu.Unlock()
	select {
	case g := <-w.ch:
		return g.item, g.make, g.err
	case <-ctx.Done():
		s.mu.Lock()
		select {
		case g := <-w.ch:
			// Granted as the context ended: pass it on.
			s.mu.Unlock()
			if g.err == nil {
				if g.make {
					s.discard()
				} else {
					s.release(g.item)
				}
			}
		default:
			q.remove(w)
			s.mu.Unlock()
		}
		return item, false, ctx.Err()
	}
}

func (q *queue[T]) push(tenant string) *waiter[T] {
	t := q.tenants[tenant]
	if t == nil {
		t = &tenantQueue[T]{name: tenant}
		q.tenants[tenant] = t
	}
	if t.turn == nil {
		t.turn = q.turns.PushBack(t)
	}
	w := &waiter[T]{ch: make(chan grant[T], 1), tenant: t}
	w.el = t.waiters.PushBack(w)
	q.n++
	return w
}

// remove takes w out of the queue (it was granted or it left).
func (q *queue[T]) remove(w *waiter[T]) {
	t := w.tenant
	t.waiters.Remove(w.el)
	q.n--
	if t.waiters.Len() == 0 {
		q.turns.Remove(t.turn)
		t.turn = nil
		delete(q.tenants, t.name)
	}
}

// pop answers the oldest waiter of the tenant whose turn it is, which goes
// to the back of the turns, or nil.
func (q *queue[T]) pop() *waiter[T] {
	el := q.turns.Front()
	if el == nil {
		return nil
	}
	t := el.Value.(*tenantQueue[T])
	w := t.waiters.Front().Value.(*waiter[T])
	q.remove(w)
	if t.turn != nil {
		q.turns.MoveToBack(t.turn)
	}
	return w
}

// dismissForNewcomer makes room in a full queue for a waiter of tenant:
// the newest waiter of the tenant with the most goes (ErrBusy), when that
// tenant would still have more waiting than tenant. False: no room.
func (q *queue[T]) dismissForNewcomer(tenant string) bool {
	var most *tenantQueue[T]
	for el := q.turns.Front(); el != nil; el = el.Next() {
		if t := el.Value.(*tenantQueue[T]); most == nil || t.waiters.Len() > most.waiters.Len() {
			most = t
		}
	}
	mine := 0
	if t := q.tenants[tenant]; t != nil {
		mine = t.waiters.Len()
	}
	if most == nil || most.name == tenant || most.waiters.Len() <= mine+1 {
		return false
	}
	w := most.waiters.Back().Value.(*waiter[T])
	q.remove(w)
	w.ch <- grant[T]{err: ErrBusy}
	return true
}

// next answers the first waiter by lane, removed from its queue, or nil.
func (s *scheduler[T]) next() *waiter[T] {
	for l := range s.waiting {
		if w := s.waiting[l].pop(); w != nil {
			return w
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
	return s.waiting[lane].n
}
