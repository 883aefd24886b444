package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// AttendeeView is an attendee as SPEC.md section 3 names it.
type AttendeeView struct {
	ID        string      `json:"id"`
	UserID    string      `json:"userId"`
	EventID   string      `json:"eventId"`
	Role      string      `json:"role" tstype:"'HOST' | 'MODERATOR' | 'ATTENDEE'"`
	User      UserSummary `json:"user"`
	CreatedAt time.Time   `json:"createdAt"`
}

// AttendeePage is one page of attendees with its pagination.
type AttendeePage struct {
	Attendees  []AttendeeView
	Pagination Pagination
}

// Attendees lists an event's attendees, the host first, then moderators,
// then attendees in the order they joined. role ("" for all) filters.
func (s *Storage) Attendees(ctx context.Context, eventID, role string, page, limit int) (*AttendeePage, error) {
	page, limit = ClampPage(page, limit)
	var rows []Attendee
	q := s.db.NewSelect().Model(&rows).Where("event_id = ?", eventID)
	if role != "" {
		q = q.Where("role = ?", role)
	}
	total, err := q.OrderExpr("CASE role WHEN 'HOST' THEN 0 WHEN 'MODERATOR' THEN 1 ELSE 2 END ASC, created_at ASC, id ASC").
		Limit(int64(limit)).Offset(int64((page - 1) * limit)).ScanAndCount(ctx)
	if err != nil {
		return nil, fmt.Errorf("list attendees of %s: %w", eventID, err)
	}
	userIDs := make([]string, len(rows))
	for i, r := range rows {
		userIDs[i] = r.UserID
	}
	users, err := s.userSummaries(ctx, s.db, userIDs)
	if err != nil {
		return nil, err
	}
	views := make([]AttendeeView, len(rows))
	for i, r := range rows {
		views[i] = AttendeeView{ID: r.ID, UserID: r.UserID, EventID: r.EventID, Role: r.Role, User: users[r.UserID], CreatedAt: r.CreatedAt}
		if views[i].User.ID == "" {
			views[i].User = UserSummary{ID: r.UserID, Media: []MediaView{}}
		}
	}
	return &AttendeePage{Attendees: views, Pagination: NewPagination(page, limit, int(total))}, nil
}

// AttendeeView loads one attendee in the list's shape.
func (s *Storage) AttendeeView(ctx context.Context, eventID, userID string) (*AttendeeView, error) {
	a, err := s.AttendeeOf(ctx, eventID, userID)
	if err != nil {
		return nil, err
	}
	users, err := s.userSummaries(ctx, s.db, []string{userID})
	if err != nil {
		return nil, err
	}
	return &AttendeeView{ID: a.ID, UserID: a.UserID, EventID: a.EventID, Role: a.Role, User: users[userID], CreatedAt: a.CreatedAt}, nil
}

// AttendeeOf loads one user's attendance of an event, or ErrNotFound.
func (s *Storage) AttendeeOf(ctx context.Context, eventID, userID string) (*Attendee, error) {
	a := new(Attendee)
	if err := selectOne(ctx, s.db.NewSelect().Model(a).Where("event_id = ? AND user_id = ?", eventID, userID),
		"attendee"); err != nil {
		return nil, err
	}
	return a, nil
}

// JoinEvent makes userID an ATTENDEE. Joining twice changes nothing: the
// unique (event_id, user_id) constraint decides, so concurrent joins never
// count anyone twice. It reports whether a row was added.
//
// An event with a ticket for sale (EventTicket) is joined by paying for the
// ticket, never for free: ErrTicketRequired, unless the member already
// attends (joining again is the same no-op as for a free event) or holds a
// paid ticket (they left and come back: the ticket still admits).
func (s *Storage) JoinEvent(ctx context.Context, e *Event, userID string) (bool, error) {
	if _, err := s.EventTicket(ctx, e.ID); err == nil {
		if _, err := s.AttendeeOf(ctx, e.ID, userID); err == nil {
			return false, nil
		} else if !errors.Is(err, ErrNotFound) {
			return false, err
		}
		held, err := s.HoldsTicket(ctx, e.ID, userID)
		if err != nil {
			return false, err
		}
		if !held {
			return false, ErrTicketRequired
		}
	} else if !errors.Is(err, ErrNotFound) {
		return false, err
	}
	a := &Attendee{ID: NewID(), AppID: e.AppID, EventID: e.ID, UserID: userID, Role: AttendeeAttendee, CreatedAt: time.Now().UTC()}
	res, err := s.db.NewInsert().Model(a).On("CONFLICT DO NOTHING").Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("join event %s: %w", e.ID, err)
	}
	n, _ := res.RowsAffected()
	if n > 0 {
		s.InvalidateLanding(ctx, e.AppID) // landing events carry attendeeCount
	}
	return n > 0, nil
}

// LeaveEvent removes userID's attendance unless they host the event (the
// caller refuses that first; the condition keeps a race from orphaning an
// event). It reports whether a row was removed.
func (s *Storage) LeaveEvent(ctx context.Context, e *Event, userID string) (bool, error) {
	return s.RemoveAttendee(ctx, e, userID)
}

// RemoveAttendee deletes a non-host attendee.
func (s *Storage) RemoveAttendee(ctx context.Context, e *Event, userID string) (bool, error) {
	res, err := s.db.NewDelete().Model((*Attendee)(nil)).
		Where("event_id = ? AND user_id = ? AND role <> ?", e.ID, userID, AttendeeHost).Exec(ctx)
	if err != nil {
		return false, fmt.Errorf("remove attendee of %s: %w", e.ID, err)
	}
	n, _ := res.RowsAffected()
	if n > 0 {
		s.InvalidateLanding(ctx, e.AppID)
	}
	return n > 0, nil
}

// SetAttendeeRole moves a non-host attendee between ATTENDEE and MODERATOR;
// the change is written to the app's moderation audit log (a role action)
// in the same transaction.
func (s *Storage) SetAttendeeRole(ctx context.Context, e *Event, actorID, userID, role string) error {
	if role != AttendeeAttendee && role != AttendeeModerator {
		return invalid("role must be ATTENDEE or MODERATOR")
	}
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		changePages(ctx, e.AppID) // the attendee list shows roles
		res, err := tx.NewUpdate().Model((*Attendee)(nil)).Set("role = ?", role).
			Where("event_id = ? AND user_id = ? AND role <> ?", e.ID, userID, AttendeeHost).Exec(ctx)
		if err != nil {
			return fmt.Errorf("set attendee role in %s: %w", e.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return logAction(ctx, tx, ModerationEntry{AppID: e.AppID, ActorID: actorID, Action: ActionRole, TargetType: TargetMember,
			TargetID: userID, TargetUserID: userID, Reason: "event " + Snippet(e.Name, 60) + ": " + role})
	})
	if err != nil {
		return err
	}
	return nil
}
