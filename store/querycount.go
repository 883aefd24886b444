package store

import (
	"context"
	"sync/atomic"

	"github.com/uptrace/bun"
)

// QueryCount counts the database queries made with a context that carries
// it (WithQueryCount), once QueryCountHook is added to the database. Tests
// use it to prove a list costs the same number of queries whatever its
// length: no N+1.
type QueryCount struct {
	n       atomic.Int64
	queries chan string
}

// N is the number of queries counted so far.
func (c *QueryCount) N() int { return int(c.n.Load()) }

// Queries lists the counted queries' text, in order (up to 1,000), for a
// failing test to show.
func (c *QueryCount) Queries() []string {
	var out []string
	for {
		select {
		case q := <-c.queries:
			out = append(out, q)
		default:
			return out
		}
	}
}

type queryCountKey struct{}

// WithQueryCount returns a context whose queries are counted into a new
// QueryCount.
func WithQueryCount(ctx context.Context) (context.Context, *QueryCount) {
	c := &QueryCount{queries: make(chan string, 1000)}
	return context.WithValue(ctx, queryCountKey{}, c), c
}

// QueryCountHook is a bun query hook feeding the QueryCount of each query's
// context; queries with none pass untouched.
type QueryCountHook struct{}

var _ bun.QueryHook = QueryCountHook{}

func (QueryCountHook) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }

func (QueryCountHook) AfterQuery(ctx context.Context, e *bun.QueryEvent) {
	c, ok := ctx.Value(queryCountKey{}).(*QueryCount)
	if !ok {
		return
	}
	c.n.Add(1)
	select {
	case c.queries <- e.Query:
	default:
	}
}
