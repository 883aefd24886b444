package paymentstest

import "sync"

// holds keeps requests to a path waiting, their idempotency keys in
// flight, until the test releases them, so a test can send a second request
// with the same key while the first waits, with no timing to race. Both
// fakes use one, under their own mutex (mu).
type holds struct {
	gates   map[string]chan struct{}
	waiting map[string]int
}

func (h *holds) hold(mu *sync.Mutex, path string) (release func()) {
	mu.Lock()
	defer mu.Unlock()
	if h.gates == nil {
		h.gates, h.waiting = map[string]chan struct{}{}, map[string]int{}
	}
	gate := make(chan struct{})
	h.gates[path] = gate
	return sync.OnceFunc(func() {
		mu.Lock()
		delete(h.gates, path)
		mu.Unlock()
		close(gate)
	})
}

func (h *holds) held(mu *sync.Mutex, path string) int {
	mu.Lock()
	defer mu.Unlock()
	return h.waiting[path]
}

// wait is called with mu held; it lets go of mu while the request waits.
func (h *holds) wait(mu *sync.Mutex, path string) {
	gate := h.gates[path]
	if gate == nil {
		return
	}
	h.waiting[path]++
	mu.Unlock()
	<-gate
	mu.Lock()
	h.waiting[path]--
}
