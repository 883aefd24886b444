package render

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// runtimesMade answers how many runtimes exist or are being made.
func (e *Engine) runtimesMade() int {
	e.runtimes.mu.Lock()
	defer e.runtimes.mu.Unlock()
	return e.runtimes.made
}

// waitFor polls cond (no timing is asserted: it only waits for goroutines
// to reach the queue).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// A cold page's render never waits behind refreshes (renders of pages
// served stale meanwhile), and first views are served in order of arrival:
// with both runtimes held by blocked renders, a burst of refreshes and
// then first views queue; as the runtimes come back, every first view gets
// one before any refresh does, in the order they came. Refreshes past the
// bound are refused at once (the stale page serves on), as are first views
// past theirs.
func TestRenderQueueServesFirstViewsFirst(t *testing.T) {
	t.Parallel()
	s := newScheduler[int](2, [lanes]int{laneFirst: 3, laneRefresh: 2})
	ctx := context.Background()
	for i := 0; i < 2; i++ { // two renders hold both runtimes
		if _, mk, err := s.acquire(ctx, laneFirst, ""); err != nil || !mk {
			t.Fatalf("render %d: make=%v err=%v", i, mk, err)
		}
	}
	var mu sync.Mutex
	var order []string
	start := func(name string, lane int) {
		go func() {
			// It keeps the runtime (the test hands out new ones).
			if _, _, err := s.acquire(ctx, lane, ""); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
		}()
	}
	names := []string{"refresh1", "refresh2", "first1", "first2", "first3"}
	for i, name := range names {
		lane := laneRefresh
		if i >= 2 {
			lane = laneFirst
		}
		start(name, lane)
		waitFor(t, name+" to queue", func() bool { return s.waitingIn(laneFirst)+s.waitingIn(laneRefresh) == i+1 })
	}
	if _, _, err := s.acquire(ctx, laneRefresh, ""); !errors.Is(err, ErrBusy) {
		t.Errorf("a third refresh waiting: %v, want ErrBusy", err)
	}
	if _, _, err := s.acquire(ctx, laneFirst, ""); !errors.Is(err, ErrBusy) {
		t.Errorf("a fourth first view waiting: %v, want ErrBusy", err)
	}
	// Hand the runtimes back one at a time: each goes to the next in line.
	for i := 0; i < len(names); i++ {
		s.release(i)
		waitFor(t, "a grant", func() bool { mu.Lock(); defer mu.Unlock(); return len(order) == i+1 })
	}
	want := []string{"first1", "first2", "first3", "refresh1", "refresh2"}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("served in the order %v, want %v", order, want)
		}
	}
	if inUse, size := s.stats(); inUse != 2 || size != 2 {
		t.Errorf("stats %d/%d, want 2/2 (five renders came and went on two runtimes)", inUse, size)
	}
}

// A waiter whose client leaves is taken out of the queue, and a runtime
// handed to one that left at that moment goes on to the next.
func TestRenderQueueForgetsLeavers(t *testing.T) {
	t.Parallel()
	s := newScheduler[int](1, [lanes]int{laneFirst: 4, laneRefresh: 1})
	if _, _, err := s.acquire(context.Background(), laneFirst, ""); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	left := make(chan error)
	go func() { _, _, err := s.acquire(ctx, laneFirst, ""); left <- err }()
	waitFor(t, "the waiter", func() bool { return s.waitingIn(laneFirst) == 1 })
	cancel()
	if err := <-left; !errors.Is(err, context.Canceled) {
		t.Fatalf("leaver: %v", err)
	}
	if n := s.waitingIn(laneFirst); n != 0 {
		t.Fatalf("%d still waiting after the leaver left", n)
	}
	s.discard() // the render's runtime broke: its slot is free again
	if _, mk, err := s.acquire(context.Background(), laneRefresh, ""); err != nil || !mk {
		t.Fatalf("after a discard: make=%v err=%v, want a new runtime", mk, err)
	}
}

// Apps take turns: with the one runtime held, a burst of one app's renders
// (a crawler reading its pages) and then one render each of two other apps
// queue; the other apps are served after one of the burst, not after all
// of it. When the queue is full, a newcomer of another app takes the place
// of the burst's newest (ErrBusy to that one), while one more of the burst
// is refused: the bound never keeps out an app that has nothing waiting.
func TestRenderQueueTakesAppsInTurn(t *testing.T) {
	t.Parallel()
	s := newScheduler[int](1, [lanes]int{laneFirst: 6, laneRefresh: 1})
	ctx := context.Background()
	if _, mk, err := s.acquire(ctx, laneFirst, "a"); err != nil || !mk {
		t.Fatalf("first render: make=%v err=%v", mk, err)
	}
	var mu sync.Mutex
	var order []string
	results := map[string]error{}
	start := func(name, app string) {
		go func() {
			_, _, err := s.acquire(ctx, laneFirst, app)
			mu.Lock()
			defer mu.Unlock()
			results[name] = err
			if err == nil {
				order = append(order, name)
			}
		}()
	}
	queued := 0
	for _, w := range [][2]string{{"a1", "a"}, {"a2", "a"}, {"a3", "a"}, {"a4", "a"}, {"b1", "b"}, {"c1", "c"}} {
		start(w[0], w[1])
		queued++
		waitFor(t, w[0]+" to queue", func() bool { return s.waitingIn(laneFirst) == queued })
	}
	// Full (6): one more of app a is refused at once; one of app d
	// dismisses a4, the newest of the app with the most waiting.
	if _, _, err := s.acquire(ctx, laneFirst, "a"); !errors.Is(err, ErrBusy) {
		t.Errorf("a fifth render of app a in a full queue: %v, want ErrBusy", err)
	}
	start("d1", "d")
	waitFor(t, "a4 dismissed", func() bool { mu.Lock(); defer mu.Unlock(); _, ok := results["a4"]; return ok })
	if err := results["a4"]; !errors.Is(err, ErrBusy) {
		t.Errorf("a4: %v, want ErrBusy (dismissed for d1)", err)
	}
	waitFor(t, "d1 to queue", func() bool { return s.waitingIn(laneFirst) == 6 })
	for i := 0; i < 6; i++ {
		s.release(i)
		waitFor(t, "a grant", func() bool { mu.Lock(); defer mu.Unlock(); return len(order) == i+1 })
	}
	want := []string{"a1", "b1", "c1", "d1", "a2", "a3"}
	if !slices.Equal(order, want) {
		t.Errorf("served in the order %v, want %v", order, want)
	}
	if n := s.waitingIn(laneFirst); n != 0 {
		t.Errorf("%d still waiting", n)
	}
}

// The engine takes the app from the context: ForApp reaches the queue.
func TestForAppNamesTheTenant(t *testing.T) {
	t.Parallel()
	if got := tenantOf(ForApp(Refresh(context.Background()), "app1")); got != "app1" {
		t.Errorf("tenant %q, want app1", got)
	}
	if got := tenantOf(context.Background()); got != "" {
		t.Errorf("no app: tenant %q", got)
	}
}
