package store

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// EventView is an event in the shape of SPEC.md section 3. IsAttending and
// UserRole depend on the viewer and stay empty in shared (cached) data.
type EventView struct {
	ID            string      `json:"id"`
	AppID         string      `json:"appId"`
	Name          string      `json:"name"`
	Description   string      `json:"description"`
	Location      string      `json:"location"`
	StartDate     time.Time   `json:"startDate"`
	EndDate       time.Time   `json:"endDate"`
	Type          string      `json:"type" tstype:"EventType"`
	IsFeatured    bool        `json:"isFeatured"`
	IsOfficial    bool        `json:"isOfficial"`
	Banner        *MediaView  `json:"banner"`
	Media         []MediaView `json:"media"`
	AttendeeCount int         `json:"attendeeCount"`
	IsAttending   bool        `json:"isAttending"`
	UserRole      *string     `json:"userRole" tstype:"'HOST' | 'MODERATOR' | 'ATTENDEE' | null"`
	CreatorID     string      `json:"creatorId"`
	CreatedAt     time.Time   `json:"createdAt"`
	// Access is who may read the details (description, place, media);
	// Locked is set for a viewer who may not (LockEvents), with
	// AccessTier the tier to join.
	Access     MessageAccess `json:"access"`
	AccessTier *AccessTier   `json:"accessTier"`
	Locked     bool          `json:"locked"`
}

func (s *Storage) eventViews(ctx context.Context, db bun.IDB, events []Event) ([]EventView, error) {
	views := make([]EventView, len(events))
	if len(events) == 0 {
		return views, nil
	}
	ids := make([]string, len(events))
	var mediaIDs []string
	for i, e := range events {
		ids[i] = e.ID
		mediaIDs = append(mediaIDs, derefIDs(e.BannerMediaID)...)
	}
	var extra []EventMedia
	if err := db.NewSelect().Model(&extra).Where("event_id IN (?)", bun.List(ids)).Order("position ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load event media: %w", err)
	}
	for _, m := range extra {
		mediaIDs = append(mediaIDs, m.MediaID)
	}
	media, err := s.mediaViews(ctx, db, mediaIDs)
	if err != nil {
		return nil, err
	}
	var tierIDs []string
	for _, e := range events {
		tierIDs = append(tierIDs, derefIDs(e.AccessMinTierID)...)
	}
	tiers, err := tierNamesAndRanks(ctx, db, tierIDs)
	if err != nil {
		return nil, err
	}
	var counts []struct {
		EventID string `bun:"event_id"`
		N       int    `bun:"n"`
	}
	if err := db.NewSelect().Model((*Attendee)(nil)).ColumnExpr("event_id, COUNT(*) AS n").
		Where("event_id IN (?)", bun.List(ids)).Group("event_id").Scan(ctx, &counts); err != nil {
		return nil, fmt.Errorf("count attendees: %w", err)
	}
	index := make(map[string]*EventView, len(events))
	for i, e := range events {
		views[i] = EventView{
			ID: e.ID, AppID: e.AppID, Name: e.Name, Description: e.Description, Location: e.Location,
			StartDate: e.StartDate, EndDate: e.EndDate, Type: e.Type, IsFeatured: e.IsFeatured,
			IsOfficial: e.IsOfficial, Banner: pick(media, e.BannerMediaID), Media: []MediaView{},
			CreatorID: e.CreatorID, CreatedAt: e.CreatedAt,
			Access: MessageAccess{Audience: e.AccessAudience, MinTierID: e.AccessMinTierID},
		}
		if views[i].Access.Audience == "" {
			views[i].Access.Audience = AccessPublic
		}
		if e.AccessMinTierID != nil {
			if t, ok := tiers[*e.AccessMinTierID]; ok {
				views[i].AccessTier = &AccessTier{ID: *e.AccessMinTierID, Name: t.Name, Rank: t.Rank}
			}
		}
		// The banner leads the media list, as the detail carousel shows it first.
		if views[i].Banner != nil {
			views[i].Media = append(views[i].Media, *views[i].Banner)
		}
		index[e.ID] = &views[i]
	}
	for _, m := range extra {
		if mv, ok := media[m.MediaID]; ok {
			v := index[m.EventID]
			if v.Banner == nil || v.Banner.ID != mv.ID {
				v.Media = append(v.Media, mv)
			}
		}
	}
	for _, c := range counts {
		index[c.EventID].AttendeeCount = c.N
	}
	return views, nil
}

// LockEvents answers events as reader may see them: an event whose details
// it may not read keeps its name, time, type, banner and counts, but not
// its description, place or other media, and Locked is set. views is never
// changed in place (it may be a cached, shared value).
func LockEvents(views []EventView, r Reader) []EventView {
	out := make([]EventView, len(views))
	for i, v := range views {
		out[i] = LockEvent(v, r)
	}
	return out
}

// LockEvent is LockEvents for one view.
func LockEvent(v EventView, r Reader) EventView {
	v.Locked = !CanRead(v.Access, minRankOf(v.Access, v.AccessTier), r)
	if v.Locked {
		v.Description, v.Location = "", ""
		v.Media = []MediaView{}
		if v.Banner != nil {
			v.Media = []MediaView{*v.Banner}
		}
	}
	return v
}
