package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// ErrTicketRequired: the event sells tickets, so joining it for free is
// refused; the buyer becomes an attendee when their ticket order is paid.
var ErrTicketRequired = errors.New("event requires a ticket")

// EventTicket is the live EVENT_TICKET item linked to an event (the newest
// when there are several), or ErrNotFound when the event is free to join.
// An event requires a ticket exactly when this finds one.
func EventTicket(ctx context.Context, db bun.IDB, eventID string) (*StoreItem, error) {
	it := new(StoreItem)
	q := db.NewSelect().Model(it).Where("event_id = ? AND type = ? AND deleted_at IS NULL", eventID, ItemEventTicket).
		Order("created_at DESC", "id DESC").Limit(1)
	if err := selectOne(ctx, q, "ticket of "+eventID); err != nil {
		return nil, err
	}
	return it, nil
}

// EventTicket is EventTicket on the storage's database.
func (s *Storage) EventTicket(ctx context.Context, eventID string) (*StoreItem, error) {
	return EventTicket(ctx, s.db, eventID)
}

// EventOptions lists an app's events for the ticket item form's event
// picker, soonest first.
func (s *Storage) EventOptions(ctx context.Context, appID string) ([]EventOption, error) {
	opts := []EventOption{}
	if err := s.db.NewSelect().Model((*Event)(nil)).Column("id", "name", "start_date").Where("app_id = ?", appID).
		Order("start_date ASC", "id ASC").Limit(500).Scan(ctx, &opts); err != nil {
		return nil, fmt.Errorf("list event options: %w", err)
	}
	return opts, nil
}

// EventOption is one entry of the ticket form's event picker.
type EventOption struct {
	ID        string    `bun:"id" json:"id"`
	Name      string    `bun:"name" json:"name"`
	StartDate time.Time `bun:"start_date" json:"startDate"`
}

// ticketEvent is the event a paid or refunded ticket line admits to, or ""
// when the item is linked to none (or the event is gone).
func ticketEvent(ctx context.Context, tx bun.Tx, it *OrderItem) (string, error) {
	var eventID *string
	err := tx.NewSelect().TableExpr("store_items AS si").ColumnExpr("si.event_id").
		Join("JOIN events AS e ON e.id = si.event_id AND e.app_id = si.app_id").Where("si.id = ?", it.StoreItemID).Limit(1).Scan(ctx, &eventID)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("load ticket event: %w", err)
	}
	if eventID == nil {
		return "", nil
	}
	return *eventID, nil
}

// grantAttendance is the paid effect of EVENT_TICKET: the buyer attends. The
// unique (event_id, user_id) makes it idempotent: a second payment report, a
// second ticket, or a member who already attends changes nothing (and a
// host or moderator keeps their role).
func grantAttendance(ctx context.Context, tx bun.Tx, o *Order, it *OrderItem) error {
	eventID, err := ticketEvent(ctx, tx, it)
	if err != nil || eventID == "" {
		return err
	}
	a := &Attendee{ID: NewID(), AppID: o.AppID, EventID: eventID, UserID: o.UserID, Role: AttendeeAttendee, CreatedAt: time.Now().UTC()}
	if _, err := tx.NewInsert().Model(a).On("CONFLICT DO NOTHING").Exec(ctx); err != nil {
		return fmt.Errorf("grant ticket attendance: %w", err)
	}
	return nil
}

// revokeAttendance is the refund effect: the attendance the ticket bought
// ends, unless the member still holds another paid ticket to the event.
// The host never loses their event.
func revokeAttendance(ctx context.Context, tx bun.Tx, o *Order, it *OrderItem) error {
	eventID, err := ticketEvent(ctx, tx, it)
	if err != nil || eventID == "" {
		return err
	}
	others, err := holdsTicket(ctx, tx, eventID, o.UserID, o.ID)
	if err != nil {
		return err
	}
	if others {
		return nil
	}
	if _, err := tx.NewDelete().Model((*Attendee)(nil)).
		Where("event_id = ? AND user_id = ? AND role <> ?", eventID, o.UserID, AttendeeHost).Exec(ctx); err != nil {
		return fmt.Errorf("revoke ticket attendance: %w", err)
	}
	return nil
}

// ticketHeldStatuses are the order states in which a ticket still admits:
// paid and not refunded or cancelled.
var ticketHeldStatuses = []string{OrderPaid, OrderProcessing, OrderShipped, OrderDelivered}

// holdsTicket reports whether userID holds a paid ticket to eventID in an
// order other than exceptOrderID ("" for any order). A ticket item deleted
// from the store still admits: the order holds it.
func holdsTicket(ctx context.Context, db bun.IDB, eventID, userID, exceptOrderID string) (bool, error) {
	q := db.NewSelect().TableExpr("order_items AS oi").Join("JOIN orders AS o ON o.id = oi.order_id").
		Join("JOIN store_items AS si ON si.id = oi.store_item_id").
		Where("o.user_id = ? AND o.status IN (?)", userID, bun.List(ticketHeldStatuses)).
		Where("si.event_id = ? AND oi.type = ?", eventID, ItemEventTicket)
	if exceptOrderID != "" {
		q = q.Where("o.id <> ?", exceptOrderID)
	}
	n, err := q.Count(ctx)
	if err != nil {
		return false, fmt.Errorf("check tickets of %s: %w", eventID, err)
	}
	return n > 0, nil
}

// HoldsTicket reports whether userID holds a paid ticket to eventID: their
// attendance belongs to the ticket, so they may leave and rejoin without
// paying again while it is valid (refunds are how a ticket is given back).
func (s *Storage) HoldsTicket(ctx context.Context, eventID, userID string) (bool, error) {
	return holdsTicket(ctx, s.db, eventID, userID, "")
}
