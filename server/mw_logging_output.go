package server

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// LogOutput is where `marquee serve` writes its log: every line in the
// order it was made, but access lines gathered and written together, at
// most LOG_FLUSH (default 1s) after they were made or once 64 KB have
// gathered, as nginx's `access_log ... buffer= flush=` does. One write
// per request was a fifth of a cached page's CPU (perf on `marquee serve`
// answering the demo's landing: 32 us per request with access lines
// written to /dev/null, 27 us at LOG_LEVEL=warn). Any other line (a
// warning, an error, "serving") is written at once, after the access
// lines gathered before it, so the log reads in order and nothing but
// access lines waits. Close writes what is left; a process killed with
// SIGKILL loses at most LOG_FLUSH of access lines.
type LogOutput struct {
	w     io.Writer
	every time.Duration // 0: each access line written as it is made

	mu       sync.Mutex
	taken    *sync.Cond // broadcast when the gathered lines are taken to be written
	gathered []byte
	closed   bool

	writeMu sync.Mutex // one write to w at a time, batches in the order they were taken
	spare   []byte     // the buffer written last, reused (under writeMu)

	full chan struct{} // the gathered lines reached logBatchBytes
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

const (
	// logBatchBytes of access lines are written in one go.
	logBatchBytes = 64 << 10
	// logMaxGathered bounds what waits while a write is slow (a blocked
	// pipe): past it, requests wait for the write, as they would for a
	// line each, rather than memory growing or lines being lost.
	logMaxGathered = 4 * logBatchBytes
)

// NewLogOutput writes the log to w, access lines every LOG_FLUSH (a
// duration up to 1m; 0 writes each line as it is made).
func NewLogOutput(w io.Writer, getenv func(string) string) (*LogOutput, error) {
	every := time.Second
	if v := strings.TrimSpace(getenv("LOG_FLUSH")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > time.Minute {
			return nil, fmt.Errorf("LOG_FLUSH: want a duration from 0 to 1m (0 writes each access line as it is made), got %q", v)
		}
		every = d
	}
	o := &LogOutput{w: w, every: every, full: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	o.taken = sync.NewCond(&o.mu)
	if every > 0 {
		go o.run()
	} else {
		close(o.done)
	}
	return o, nil
}

// Write writes p, a line of slog's, at once: after the access lines
// gathered before it.
func (o *LogOutput) Write(p []byte) (int, error) {
	o.writeMu.Lock()
	defer o.writeMu.Unlock()
	o.writeGathered()
	return o.w.Write(p)
}

// gather adds an access line to those written together. It copies line.
func (o *LogOutput) gather(line []byte) {
	o.mu.Lock()
	for len(o.gathered) >= logMaxGathered && !o.closed {
		o.taken.Wait()
	}
	if o.closed || o.every == 0 {
		o.mu.Unlock()
		_, _ = o.Write(line)
		return
	}
	o.gathered = append(o.gathered, line...)
	if len(o.gathered) >= logBatchBytes {
		select {
		case o.full <- struct{}{}:
		default: // already told
		}
	}
	o.mu.Unlock()
}

// Flush writes the access lines gathered so far.
func (o *LogOutput) Flush() {
	o.writeMu.Lock()
	defer o.writeMu.Unlock()
	o.writeGathered()
}

// writeGathered takes the gathered lines and writes them; writeMu is held.
// A failed write loses them, as a failed write of one line lost it (the
// log has nowhere else to say so).
func (o *LogOutput) writeGathered() {
	o.mu.Lock()
	batch := o.gathered
	o.gathered, o.spare = o.spare[:0], nil
	o.taken.Broadcast()
	o.mu.Unlock()
	if len(batch) > 0 {
		_, _ = o.w.Write(batch)
	}
	o.spare = batch[:0]
}

func (o *LogOutput) run() {
	defer close(o.done)
	tick := time.NewTicker(o.every)
	defer tick.Stop()
	for {
		select {
		case <-o.stop:
			return
		case <-o.full:
		case <-tick.C:
		}
		o.Flush()
	}
}

// Close writes what has gathered; access lines made after it are written
// as they are made.
func (o *LogOutput) Close() error {
	o.once.Do(func() {
		o.mu.Lock()
		o.closed = true
		o.taken.Broadcast()
		o.mu.Unlock()
		close(o.stop)
		<-o.done
		o.Flush()
	})
	return nil
}
