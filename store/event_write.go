package store

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// EventInput is an event's editable fields. The server has validated them
// and decided who may set IsFeatured and IsOfficial; media ids are uploaded
// media of this app, checked by the caller.
type EventInput struct {
	Name, Description, Location, Type string
	StartDate, EndDate                time.Time
	IsFeatured, IsOfficial            bool
	Settings                          string
	BannerMediaID                     *string
	MediaIDs                          []string // additional media, in order
	// Access is who may read the details, checked by the caller
	// (CheckAccess); the zero value is PUBLIC.
	Access MessageAccess
	// Announce tells the app's members about a new event (the creator's and
	// admins' events: access.AnnouncesToMembers).
	Announce bool
	// EditorID is who updates the event; attendees other than them hear of
	// a change of name, time or place.
	EditorID string
}

// CreateEvent inserts the event, its media and its creator as HOST in one
// transaction: an event never exists without its host.
func (s *Storage) CreateEvent(ctx context.Context, appID, creatorID string, in EventInput) (*Event, error) {
	now := time.Now().UTC()
	if in.Settings == "" {
		in.Settings = "{}"
	}
	e := &Event{ID: NewID(), AppID: appID, CreatorID: creatorID, Name: in.Name, Description: in.Description,
		Location: in.Location, StartDate: in.StartDate.UTC(), EndDate: in.EndDate.UTC(), Type: in.Type,
		IsFeatured: in.IsFeatured, IsOfficial: in.IsOfficial, BannerMediaID: in.BannerMediaID, Settings: in.Settings,
		AccessAudience: in.Access.Audience, AccessMinTierID: in.Access.MinTierID, CreatedAt: now, UpdatedAt: now}
	if e.AccessAudience == "" {
		e.AccessAudience = AccessPublic
	}
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		changePages(ctx, appID)
		if _, err := tx.NewInsert().Model(e).Exec(ctx); err != nil {
			return fmt.Errorf("insert event: %w", err)
		}
		if err := insertEventMedia(ctx, tx, e, in.MediaIDs); err != nil {
			return err
		}
		host := &Attendee{ID: NewID(), AppID: appID, EventID: e.ID, UserID: creatorID, Role: AttendeeHost, CreatedAt: now}
		if _, err := tx.NewInsert().Model(host).Exec(ctx); err != nil {
			return fmt.Errorf("insert host: %w", err)
		}
		if !in.Announce {
			return nil
		}
		_, err := Notify(ctx, tx, Notice{AppID: appID, Kind: KindNewEvent, Audience: AudienceMembers, SenderID: creatorID,
			Text: "New event: " + Snippet(e.Name, 80), Link: "/events/" + e.ID, Source: "event:" + e.ID})
		return err
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// UpdateEvent writes in over e. A nil in.MediaIDs keeps the media as they
// are; a non-nil one replaces them.
func (s *Storage) UpdateEvent(ctx context.Context, e *Event, in EventInput, replaceMedia bool) error {
	changed := e.Name != in.Name || e.Location != in.Location || !e.StartDate.Equal(in.StartDate) || !e.EndDate.Equal(in.EndDate)
	e.Name, e.Description, e.Location, e.Type = in.Name, in.Description, in.Location, in.Type
	e.StartDate, e.EndDate = in.StartDate.UTC(), in.EndDate.UTC()
	e.IsFeatured, e.IsOfficial = in.IsFeatured, in.IsOfficial
	if in.Access.Audience != "" {
		e.AccessAudience, e.AccessMinTierID = in.Access.Audience, in.Access.MinTierID
	}
	e.UpdatedAt = time.Now().UTC()
	if replaceMedia {
		e.BannerMediaID = in.BannerMediaID
	}
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		changePages(ctx, e.AppID)
		if _, err := tx.NewUpdate().Model(e).
			Column("name", "description", "location", "type", "start_date", "end_date", "is_featured", "is_official",
				"banner_media_id", "access_audience", "access_min_tier_id", "updated_at").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("update event: %w", err)
		}
		if changed {
			if err := notifyAttendees(ctx, tx, e, in.EditorID, "Event updated: "+Snippet(e.Name, 80), "/events/"+e.ID); err != nil {
				return err
			}
		}
		if !replaceMedia {
			return nil
		}
		if _, err := tx.NewDelete().Model((*EventMedia)(nil)).Where("event_id = ?", e.ID).Exec(ctx); err != nil {
			return fmt.Errorf("clear event media: %w", err)
		}
		return insertEventMedia(ctx, tx, e, in.MediaIDs)
	})
	if err != nil {
		return fmt.Errorf("update event %s: %w", e.ID, err)
	}
	return nil
}

// notifyAttendees tells an event's attendees (but the one who acted) that
// it changed.
func notifyAttendees(ctx context.Context, tx bun.Tx, e *Event, by, text, link string) error {
	var ids []string
	if err := tx.NewSelect().Model((*Attendee)(nil)).Column("user_id").Where("event_id = ?", e.ID).Scan(ctx, &ids); err != nil {
		return fmt.Errorf("load attendees for notice: %w", err)
	}
	rows, err := Notify(ctx, tx, Notice{AppID: e.AppID, Kind: KindEventUpdate, RecipientIDs: ids, SenderID: by, Text: text, Link: link,
		Source: "event:" + e.ID})
	if err != nil {
		return err
	}
	// By e-mail too, to those the notice reached (their in-app switches
	// apply), unless they switched event e-mail off.
	var app string
	if err := tx.NewSelect().Table("apps").Column("name").Where("id = ?", e.AppID).Scan(ctx, &app); err != nil {
		return fmt.Errorf("event notice: load app: %w", err)
	}
	for _, n := range rows {
		if _, err := MailMember(ctx, tx, OutgoingMail{Key: "event:" + n.ID, Kind: KindEventUpdate, AppID: e.AppID, UserID: n.UserID,
			Content: MailContent{Subject: "Change to " + e.Name, Heading: e.Name, Paragraphs: []string{text},
				Action: &MailLink{Label: "See it in the app", Path: "/apps/" + app + link}}}); err != nil {
			return err
		}
	}
	return nil
}

func insertEventMedia(ctx context.Context, tx bun.Tx, e *Event, ids []string) error {
	for i, id := range uniq(ids) {
		if e.BannerMediaID != nil && *e.BannerMediaID == id {
			continue
		}
		if _, err := tx.NewInsert().Model(&EventMedia{EventID: e.ID, MediaID: id, AppID: e.AppID, Position: i}).
			Exec(ctx); err != nil {
			return fmt.Errorf("attach event media %s: %w", id, err)
		}
	}
	return nil
}

// DeleteEvent removes an event with its media links and attendees, telling
// the attendees (but by, who deleted it) it is cancelled. Children go
// explicitly so the result does not depend on ON DELETE CASCADE.
func (s *Storage) DeleteEvent(ctx context.Context, e *Event, by string) error {
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		changePages(ctx, e.AppID)
		if err := notifyAttendees(ctx, tx, e, by, "Event cancelled: "+Snippet(e.Name, 80), "/events"); err != nil {
			return err
		}
		for _, model := range []any{(*Attendee)(nil), (*EventMedia)(nil)} {
			if _, err := tx.NewDelete().Model(model).Where("event_id = ?", e.ID).Exec(ctx); err != nil {
				return fmt.Errorf("delete event children: %w", err)
			}
		}
		// Its tickets stay in the store (orders hold them) but admit to
		// nothing any more.
		if _, err := tx.NewUpdate().Model((*StoreItem)(nil)).Set("event_id = NULL").Where("event_id = ?", e.ID).Exec(ctx); err != nil {
			return fmt.Errorf("unlink event tickets: %w", err)
		}
		if _, err := tx.NewDelete().Model((*Event)(nil)).Where("id = ?", e.ID).Exec(ctx); err != nil {
			return fmt.Errorf("delete event: %w", err)
		}
		return relinkDeletedEvent(ctx, tx, e)
	})
	if err != nil {
		return fmt.Errorf("delete event %s: %w", e.ID, err)
	}
	return nil
}

// relinkDeletedEvent points the notifications that led to a deleted event
// ("New event: ...", updates) at the app's events list instead of a page
// that is gone.
func relinkDeletedEvent(ctx context.Context, db bun.IDB, e *Event) error {
	var appName string
	if err := db.NewSelect().Table("apps").Column("name").Where("id = ?", e.AppID).Scan(ctx, &appName); err != nil {
		return fmt.Errorf("relink notifications: load app: %w", err)
	}
	list := "/apps/" + appName + "/events"
	dead := list + "/" + e.ID
	if _, err := db.NewUpdate().Model((*Notification)(nil)).Set("link = ?", list).
		Where("app_id = ? AND (link = ? OR link LIKE ? OR link LIKE ?)", e.AppID, dead, dead+"/%", dead+"?%").Exec(ctx); err != nil {
		return fmt.Errorf("relink notifications of event %s: %w", e.ID, err)
	}
	return nil
}
