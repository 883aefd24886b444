package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/uptrace/bun"
)

// EventPage is one page of events with its pagination.
type EventPage struct {
	Events     []EventView
	Pagination Pagination
}

// Events lists an app's events matching f. Upcoming and ongoing events come
// first, soonest first; past events follow, most recent first, so page 1
// shows what a member can still attend. viewerID ("" for none) fills
// isAttending and userRole.
//
// The page without the viewer's part is cached per app version
// (cachedList) and minute: the order moves as events end.
func (s *Storage) Events(ctx context.Context, appID string, f EventFilter, viewerID string, now time.Time) (*EventPage, error) {
	page, limit := ClampPage(f.Page, f.Limit)
	out := new(EventPage)
	key := "events:" + eventFilterKey(f) + ":" + strconv.Itoa(page) + ":" + strconv.Itoa(limit) + ":" +
		strconv.FormatInt(now.Unix()/60, 10)
	err := s.cachedList(ctx, appID, key, out, func(ctx context.Context) error {
		p, err := s.events(ctx, appID, f, now)
		if err == nil {
			*out = *p
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := s.fillViewer(ctx, out.Events, viewerID); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *Storage) events(ctx context.Context, appID string, f EventFilter, now time.Time) (*EventPage, error) {
	page, limit := ClampPage(f.Page, f.Limit)
	now = now.UTC()
	var events []Event
	q := s.db.NewSelect().Model(&events).Where("app_id = ? AND hidden = ''", appID)
	q = f.Apply(q).
		OrderExpr("CASE WHEN end_date >= ? THEN 0 ELSE 1 END ASC", now).
		OrderExpr("CASE WHEN end_date >= ? THEN start_date END ASC", now).
		OrderExpr("start_date DESC, id ASC").
		Limit(int64(limit)).Offset(int64((page - 1) * limit))
	if err := q.Scan(ctx); err != nil {
		return nil, fmt.Errorf("list events of app %s: %w", appID, err)
	}
	// The total is counted once per app version and filter (listTotal).
	total, err := s.listTotal(ctx, appID, "events:"+eventFilterKey(f), func(ctx context.Context) (int, error) {
		n, err := f.Apply(s.db.NewSelect().Model((*Event)(nil)).Where("app_id = ? AND hidden = ''", appID)).Count(ctx)
		if err != nil {
			return 0, fmt.Errorf("count events of app %s: %w", appID, err)
		}
		return int(n), nil
	})
	if err != nil {
		return nil, err
	}
	views, err := s.eventViews(ctx, s.db, events)
	if err != nil {
		return nil, err
	}
	return &EventPage{Events: views, Pagination: NewPagination(page, limit, int(total))}, nil
}

// UpcomingEvents lists events that have not ended, soonest first, for the
// calendar feed.
func (s *Storage) UpcomingEvents(ctx context.Context, appID string, now time.Time, limit int) ([]Event, error) {
	var events []Event
	if err := s.db.NewSelect().Model(&events).Where("app_id = ? AND end_date >= ? AND hidden = ''", appID, now.UTC()).
		OrderExpr("start_date ASC, id ASC").Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("list upcoming events of app %s: %w", appID, err)
	}
	return events, nil
}

// EventByID loads a raw event, or ErrNotFound.
func (s *Storage) EventByID(ctx context.Context, id string) (*Event, error) {
	e := new(Event)
	if err := selectOne(ctx, s.db.NewSelect().Model(e).Where("id = ?", id), "event "+id); err != nil {
		return nil, err
	}
	return e, nil
}

// EventView hydrates one event for viewerID ("" for none).
func (s *Storage) EventView(ctx context.Context, e *Event, viewerID string) (*EventView, error) {
	views, err := s.eventViews(ctx, s.db, []Event{*e})
	if err != nil {
		return nil, err
	}
	if err := s.fillViewer(ctx, views, viewerID); err != nil {
		return nil, err
	}
	return &views[0], nil
}

// fillViewer sets isAttending and userRole from the viewer's attendee rows.
func (s *Storage) fillViewer(ctx context.Context, views []EventView, viewerID string) error {
	if viewerID == "" || len(views) == 0 {
		return nil
	}
	ids := make([]string, len(views))
	for i, v := range views {
		ids[i] = v.ID
	}
	var rows []Attendee
	if err := s.db.NewSelect().Model(&rows).Where("user_id = ? AND event_id IN (?)", viewerID, bun.List(ids)).
		Scan(ctx); err != nil {
		return fmt.Errorf("load attendance of %s: %w", viewerID, err)
	}
	roles := make(map[string]string, len(rows))
	for _, r := range rows {
		roles[r.EventID] = r.Role
	}
	for i := range views {
		if role, ok := roles[views[i].ID]; ok {
			views[i].IsAttending, views[i].UserRole = true, &role
		}
	}
	return nil
}

// eventFilterKey spells out the pointers of an EventFilter, which %+v
// would print as addresses.
func eventFilterKey(f EventFilter) string {
	out := fmt.Sprintf("search=%q type=%q", f.Search, f.Type)
	if f.IsOfficial != nil {
		out += fmt.Sprintf(" official=%t", *f.IsOfficial)
	}
	if f.IsFeatured != nil {
		out += fmt.Sprintf(" featured=%t", *f.IsFeatured)
	}
	if f.StartDate != nil {
		out += " from=" + f.StartDate.UTC().Format(time.RFC3339Nano)
	}
	if f.EndDate != nil {
		out += " to=" + f.EndDate.UTC().Format(time.RFC3339Nano)
	}
	return out
}
