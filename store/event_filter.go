package store

import (
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// Event types and attendee roles (SPEC.md section 3).
const (
	AttendeeHost      = "HOST"
	AttendeeModerator = "MODERATOR"
	AttendeeAttendee  = "ATTENDEE"

	EventsPageSize    = 20 // SPEC.md section 9
	AttendeesPageSize = 50
)

// EventTypes lists the event types in the order the form offers them.
var EventTypes = []string{"LIVESTREAM", "MEETUP", "CLASS", "CONFERENCE", "OTHER"}

func IsEventType(t string) bool {
	for _, x := range EventTypes {
		if x == t {
			return true
		}
	}
	return false
}

// EventFilter is the query of GET /api/events/apps/{appId}/events. Nil
// pointers mean "no filter".
type EventFilter struct {
	Page, Limit int
	Search      string
	Type        string
	IsOfficial  *bool
	IsFeatured  *bool
	// StartDate and EndDate select events overlapping [StartDate, EndDate]:
	// an event still running at StartDate is in the window.
	StartDate *time.Time
	EndDate   *time.Time
}

// Apply adds the filter's conditions to a query over events.
func (f EventFilter) Apply(q *bun.SelectQuery) *bun.SelectQuery {
	if s := strings.TrimSpace(f.Search); s != "" {
		// LOWER + LIKE behaves alike on PostgreSQL and SQLite; the user's
		// % and _ are escaped so they match themselves.
		pattern := "%" + likeEscaper.Replace(strings.ToLower(s)) + "%"
		q = q.WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where(`LOWER(name) LIKE ? ESCAPE '\'`, pattern).
				WhereOr(`LOWER(description) LIKE ? ESCAPE '\'`, pattern).
				WhereOr(`LOWER(location) LIKE ? ESCAPE '\'`, pattern)
		})
	}
	if f.Type != "" {
		q = q.Where("type = ?", f.Type)
	}
	if f.IsOfficial != nil {
		q = q.Where("is_official = ?", *f.IsOfficial)
	}
	if f.IsFeatured != nil {
		q = q.Where("is_featured = ?", *f.IsFeatured)
	}
	if f.StartDate != nil {
		q = q.Where("end_date >= ?", f.StartDate.UTC())
	}
	if f.EndDate != nil {
		q = q.Where("start_date <= ?", f.EndDate.UTC())
	}
	return q
}

// Filtered reports whether any filter is set (the empty state differs).
func (f EventFilter) Filtered() bool {
	return strings.TrimSpace(f.Search) != "" || f.Type != "" || f.IsOfficial != nil || f.IsFeatured != nil ||
		f.StartDate != nil || f.EndDate != nil
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
