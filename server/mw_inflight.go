package server

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
	"golang.org/x/sync/semaphore"
)

// Requests beyond the in-flight limit wait their turn instead of all running
// at once: under a burst (or a stall of the machine) hundreds of requests
// each held a gzip writer, buffers and a database connection wait, and the
// process grew past half a gigabyte while serving none of them faster. A
// waiting request costs a goroutine. One that waits longer than maxWait
// answers 503 with Retry-After, never a wrong or partial answer.
const inFlightPerCPU = 64

type inFlight struct {
	sem     *semaphore.Weighted
	maxWait time.Duration
}

func newInFlight(limit int64, maxWait time.Duration) *inFlight {
	if limit <= 0 {
		limit = int64(inFlightPerCPU * runtime.GOMAXPROCS(0))
	}
	return &inFlight{sem: semaphore.NewWeighted(limit), maxWait: maxWait}
}

func (f *inFlight) middleware(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		// Load balancers must hear about a drain at once; media uploads and
		// downloads stream between the connection and storage for as long
		// as a slow link takes, using neither CPU nor much memory, and must
		// not take the turns of quick requests.
		if path := c.Request().URL.Path; path == "/healthz" || strings.HasPrefix(path, "/media/") {
			return next(c)
		}
		if !f.sem.TryAcquire(1) {
			ctx, cancel := context.WithTimeout(c.Request().Context(), f.maxWait)
			err := f.sem.Acquire(ctx, 1)
			cancel()
			if err != nil {
				c.Response().Header().Set("Retry-After", "1")
				return errorf(http.StatusServiceUnavailable, "The server is busy. Please try again.")
			}
		}
		defer f.sem.Release(1)
		return next(c)
	}
}
