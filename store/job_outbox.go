package store

import (
	"time"

	"github.com/uptrace/bun"
)

// JobOutbox is a background job written in the same transaction as the
// write that causes it; server/jobs hands it to river after commit.
type JobOutbox struct {
	bun.BaseModel `bun:"table:job_outbox"`

	ID        int64     `bun:",pk,autoincrement"`
	Kind      string    `bun:",notnull"`
	Args      string    `bun:",notnull"`
	CreatedAt time.Time `bun:",notnull,default:current_timestamp"`
}
