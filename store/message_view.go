package store

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// MessageView is a post, story or reply in the shape of SPEC.md section 3.
type MessageView struct {
	ID              string           `json:"id"`
	Content         string           `json:"content"`
	Type            string           `json:"type" tstype:"'POST' | 'STORY' | 'REPLY'"`
	SenderID        string           `json:"senderId"`
	Sender          UserSummary      `json:"sender"`
	Attachments     []AttachmentView `json:"attachments"`
	Reactions       []ReactionView   `json:"reactions"`
	Tags            []TagView        `json:"tags"`
	Replies         []MessageView    `json:"replies"`
	CreatedAt       time.Time        `json:"createdAt"`
	Count           MessageCount     `json:"_count"`
	ParentMessageID *string          `json:"parentMessageId"`
	CommunityID     string           `json:"communityId"`
	IsFeatured      bool             `json:"isFeatured"`
	// Hidden is why the message is hidden ("" when shown): only its author
	// and moderators ever receive a hidden message, marked.
	Hidden string `json:"hidden,omitempty" tstype:"'' | 'REPORTS' | 'MODERATOR' | 'PENDING' | 'DRAFT' | 'SCHEDULED'"`
	// PublishAt is when a scheduled post goes out; Newsletter whether it
	// is (or was) mailed to the app's members.
	PublishAt  *time.Time `json:"publishAt,omitempty"`
	Newsletter bool       `json:"newsletter,omitempty"`
	// Access is who may read it (message_access.go); Locked is true when
	// this viewer may not (then Content is the teaser, Attachments are
	// gone and LockedMedia counts them); AccessTier is the lowest tier it
	// is for, when it names one.
	Access      MessageAccess `json:"access"`
	Locked      bool          `json:"locked"`
	Teaser      string        `json:"teaser,omitempty"`
	LockedMedia int           `json:"lockedMedia,omitempty"`
	AccessTier  *AccessTier   `json:"accessTier,omitempty"`
}

type AttachmentView struct {
	ID      string    `json:"id"`
	MediaID string    `json:"mediaId"`
	Media   MediaView `json:"media"`
}

type ReactionView struct {
	ID       string       `json:"id"`
	Reaction string       `json:"reaction"`
	MediaID  *string      `json:"mediaId"`
	Sender   ReactionUser `json:"sender"`
}

type ReactionUser struct {
	ID string `json:"id"`
}

type TagView struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type MessageCount struct {
	Reactions int `json:"reactions"`
	Replies   int `json:"replies"`
}

// messageViews hydrates messages with senders, attachments, reactions, tags
// and counts using one query per relation, whatever the number of messages.
func (s *Storage) messageViews(ctx context.Context, db bun.IDB, msgs []Message) ([]MessageView, error) {
	views := make([]MessageView, len(msgs))
	if len(msgs) == 0 {
		return views, nil
	}
	ids := make([]string, len(msgs))
	senders := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i], senders[i] = m.ID, m.SenderID
	}

	users, err := s.userSummaries(ctx, db, senders)
	if err != nil {
		return nil, err
	}

	var attachments []MessageAttachment
	if err := db.NewSelect().Model(&attachments).Where("message_id IN (?)", bun.List(ids)).
		Order("position ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load attachments: %w", err)
	}
	mediaIDs := make([]string, len(attachments))
	for i, a := range attachments {
		mediaIDs[i] = a.MediaID
	}
	media, err := s.mediaViews(ctx, db, mediaIDs)
	if err != nil {
		return nil, err
	}

	var reactions []Reaction
	if err := db.NewSelect().Model(&reactions).Where("message_id IN (?)", bun.List(ids)).
		Order("created_at ASC").Scan(ctx); err != nil {
		return nil, fmt.Errorf("load reactions: %w", err)
	}

	var tags []struct {
		MessageID string `bun:"message_id"`
		ID        string `bun:"id"`
		Name      string `bun:"name"`
	}
	if err := db.NewSelect().TableExpr("message_tags AS mt").Join("JOIN tags AS t ON t.id = mt.tag_id").
		ColumnExpr("mt.message_id, t.id, t.name").Where("mt.message_id IN (?)", bun.List(ids)).
		OrderExpr("t.name ASC").Scan(ctx, &tags); err != nil {
		return nil, fmt.Errorf("load tags: %w", err)
	}

	var replyCounts []struct {
		ParentMessageID string `bun:"parent_message_id"`
		N               int    `bun:"n"`
	}
	if err := db.NewSelect().Model((*Message)(nil)).ColumnExpr("parent_message_id, COUNT(*) AS n").
		Where("parent_message_id IN (?) AND hidden = ''", bun.List(ids)).Group("parent_message_id").
		Scan(ctx, &replyCounts); err != nil {
		return nil, fmt.Errorf("count replies: %w", err)
	}

	// Donor badges, per app (a batch normally holds one app's messages).
	byApp := map[string][]string{}
	for _, m := range msgs {
		byApp[m.AppID] = append(byApp[m.AppID], m.SenderID)
	}
	tierOf := map[string]string{} // appID + "/" + userID
	for appID, ids := range byApp {
		badges, _, err := s.DonorBadges(ctx, appID, ids)
		if err != nil {
			return nil, err
		}
		for uid, t := range badges {
			tierOf[appID+"/"+uid] = t.Name
		}
	}

	var tierIDs []string
	for _, m := range msgs {
		if m.AccessMinTierID != nil {
			tierIDs = append(tierIDs, *m.AccessMinTierID)
		}
	}
	tiers, err := tierNamesAndRanks(ctx, db, tierIDs)
	if err != nil {
		return nil, err
	}

	index := make(map[string]*MessageView, len(msgs))
	for i, m := range msgs {
		views[i] = MessageView{
			ID: m.ID, Content: m.Content, Type: m.Type, SenderID: m.SenderID,
			Sender: users[m.SenderID], Attachments: []AttachmentView{}, Reactions: []ReactionView{},
			Tags: []TagView{}, Replies: []MessageView{}, CreatedAt: m.CreatedAt, ParentMessageID: m.ParentMessageID,
			CommunityID: m.CommunityID, IsFeatured: m.IsFeatured, Hidden: m.Hidden,
			PublishAt: m.PublishAt, Newsletter: m.Newsletter,
		}
		if views[i].Sender.ID == "" {
			views[i].Sender = UserSummary{ID: m.SenderID, Username: "unknown", Media: []MediaView{}}
		}
		views[i].Sender.DonorTier = tierOf[m.AppID+"/"+m.SenderID]
		views[i].Access, views[i].Teaser = accessOf(&m), m.Teaser
		if m.AccessMinTierID != nil {
			if t, ok := tiers[*m.AccessMinTierID]; ok {
				views[i].AccessTier = &AccessTier{ID: *m.AccessMinTierID, Name: t.Name, Rank: t.Rank}
			}
		}
		index[m.ID] = &views[i]
	}
	for _, a := range attachments {
		if mv, ok := media[a.MediaID]; ok {
			v := index[a.MessageID]
			v.Attachments = append(v.Attachments, AttachmentView{ID: a.MediaID, MediaID: a.MediaID, Media: mv})
		}
	}
	for _, r := range reactions {
		v := index[r.MessageID]
		v.Reactions = append(v.Reactions, ReactionView{ID: r.ID, Reaction: r.Reaction, MediaID: r.MediaID, Sender: ReactionUser{ID: r.SenderID}})
		v.Count.Reactions++
	}
	for _, t := range tags {
		v := index[t.MessageID]
		v.Tags = append(v.Tags, TagView{ID: t.ID, Name: t.Name})
	}
	for _, c := range replyCounts {
		index[c.ParentMessageID].Count.Replies = c.N
	}
	return views, nil
}
