package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// ErrInvalid marks a write the data itself rules out (a foreign id, a media
// that is not ready); its text is safe to show.
type ErrInvalid struct {
	Msg string
	// Field names the input at fault when one is ("variantId"), so a form
	// can say it beside that input.
	Field string
}

func (e *ErrInvalid) Error() string { return e.Msg }

func invalid(msg string) error { return &ErrInvalid{Msg: msg} }

// NewMessage is what CreateMessage needs; the server has already decided the
// sender may post and whether IsFeatured is allowed.
type NewMessage struct {
	AppID, CommunityID, SenderID, Type, Content string
	ParentMessageID                             *string
	IsFeatured                                  bool
	AttachmentIDs, TagIDs                       []string
	// Announce tells the app's members about a new post (the creator's and
	// admins' posts: access.AnnouncesToMembers).
	Announce bool
	// Hidden holds the message back (HiddenForApproval: a new account's
	// post with links; HiddenDraft, HiddenScheduled: published later by
	// PublishMessage); a held message announces nothing.
	Hidden string
	// PublishAt is when a scheduled post is published (HiddenScheduled).
	PublishAt *time.Time
	// Newsletter mails the post to the app's members once it is published.
	Newsletter bool
	// Access and Teaser: who may read it, what the others see.
	Access MessageAccess
	Teaser string
}

// CreateMessage inserts a message with its attachments and tags in one
// transaction. Attachments must be uploaded media of the sender in the same
// app; tags must belong to the app. Nothing of another app is ever linked.
func (s *Storage) CreateMessage(ctx context.Context, n NewMessage) (*MessageView, error) {
	now := time.Now().UTC()
	m := &Message{ID: NewID(), AppID: n.AppID, CommunityID: n.CommunityID, SenderID: n.SenderID, Type: n.Type,
		Content: n.Content, ParentMessageID: n.ParentMessageID, IsFeatured: n.IsFeatured, Hidden: n.Hidden, CreatedAt: now, UpdatedAt: now,
		PublishAt: n.PublishAt, Newsletter: n.Newsletter, AccessAudience: n.Access.Audience, AccessMinTierID: n.Access.MinTierID, Teaser: n.Teaser}
	if m.AccessAudience == "" {
		m.AccessAudience = AccessPublic
	}
	attachments, tags := uniq(n.AttachmentIDs), uniq(n.TagIDs)
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if m.Type == MessageReply {
			// Bumped with the commit, where a bump after it was a second
			// commit (on SQLite a second sync of the log): the parent's
			// page shows the reply at once, elsewhere only its reply count
			// changed.
			s.InvalidatePost(ctx, n.AppID, *n.ParentMessageID)
		}
		if len(attachments) > 0 {
			var media []Media
			if err := tx.NewSelect().Model(&media).Where("id IN (?)", bun.List(attachments)).Scan(ctx); err != nil {
				return fmt.Errorf("load attachments: %w", err)
			}
			byID := map[string]Media{}
			for _, md := range media {
				byID[md.ID] = md
			}
			for _, id := range attachments {
				md, ok := byID[id]
				if !ok || md.AppID == nil || *md.AppID != n.AppID || md.OwnerID != n.SenderID {
					return invalid("Attachment not found")
				}
				if md.Status != MediaUploaded {
					return invalid("Media upload is not complete")
				}
			}
		}
		if len(tags) > 0 {
			n, err := tx.NewSelect().Model((*Tag)(nil)).Where("id IN (?) AND app_id = ?", bun.List(tags), n.AppID).Count(ctx)
			if err != nil {
				return fmt.Errorf("check tags: %w", err)
			}
			if int(n) != len(tags) {
				return invalid("Tag not found")
			}
		}
		if _, err := tx.NewInsert().Model(m).Exec(ctx); err != nil {
			return fmt.Errorf("insert message: %w", err)
		}
		for i, id := range attachments {
			a := &MessageAttachment{MessageID: m.ID, MediaID: id, AppID: n.AppID, Position: i}
			if _, err := tx.NewInsert().Model(a).Exec(ctx); err != nil {
				return fmt.Errorf("attach media %s: %w", id, err)
			}
		}
		for _, id := range tags {
			if _, err := tx.NewInsert().Model(&MessageTag{MessageID: m.ID, TagID: id, AppID: n.AppID}).Exec(ctx); err != nil {
				return fmt.Errorf("tag message: %w", err)
			}
		}
		if Unpublished(m.Hidden) {
			return nil // PublishMessage announces it
		}
		if m.Hidden != "" {
			return logAction(ctx, tx, ModerationEntry{AppID: m.AppID, Action: ActionHold, TargetType: TargetPost, TargetID: m.ID,
				TargetUserID: m.SenderID, Reason: "links from a new account"})
		}
		return publishedNotices(ctx, tx, m, n.Announce)
	})
	if err != nil {
		return nil, err
	}
	if m.Type != MessageReply {
		// The feed's total is forgotten before the bump: a page of the new
		// version counts again.
		s.forgetFeedTotal(ctx, m.CommunityID, m.Type)
		s.InvalidateLanding(ctx, n.AppID)
	}
	return s.MessageView(ctx, m, 0)
}

// DeleteMessage removes a message, its replies and everything hanging off
// them. Children are deleted explicitly so the result does not depend on the
// database enforcing ON DELETE CASCADE.
func (s *Storage) DeleteMessage(ctx context.Context, m *Message) error {
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		changePages(ctx, m.AppID)
		ids := []string{m.ID}
		var replyIDs []string
		if err := tx.NewSelect().Model((*Message)(nil)).Column("id").Where("parent_message_id = ?", m.ID).
			Scan(ctx, &replyIDs); err != nil {
			return fmt.Errorf("list replies: %w", err)
		}
		ids = append(ids, replyIDs...)
		for _, model := range []any{(*Reaction)(nil), (*MessageAttachment)(nil), (*MessageTag)(nil)} {
			if _, err := tx.NewDelete().Model(model).Where("message_id IN (?)", bun.List(ids)).Exec(ctx); err != nil {
				return fmt.Errorf("delete message children: %w", err)
			}
		}
		if len(replyIDs) > 0 {
			if _, err := tx.NewDelete().Model((*Message)(nil)).Where("id IN (?)", bun.List(replyIDs)).Exec(ctx); err != nil {
				return fmt.Errorf("delete replies: %w", err)
			}
		}
		if _, err := tx.NewDelete().Model((*Message)(nil)).Where("id = ?", m.ID).Exec(ctx); err != nil {
			return fmt.Errorf("delete message: %w", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete message %s: %w", m.ID, err)
	}
	if m.ParentMessageID == nil {
		s.forgetFeedTotal(ctx, m.CommunityID, m.Type)
	}
	return nil
}

// NormalizeReaction accepts the heart emoji or the word heart (SPEC.md
// section 3) and stores the emoji, so both spellings count as one heart.
func NormalizeReaction(r string) (string, bool) {
	switch strings.TrimSpace(strings.ToLower(r)) {
	case "❤️", "❤", "heart":
		return "❤️", true
	}
	return "", false
}

// AddReaction records a reaction once: adding the same reaction twice
// returns the existing one instead of a duplicate.
func (s *Storage) AddReaction(ctx context.Context, m *Message, senderID, reaction string, mediaID *string) (*ReactionView, error) {
	r := &Reaction{ID: NewID(), AppID: m.AppID, MessageID: m.ID, SenderID: senderID, Reaction: reaction,
		MediaID: mediaID, CreatedAt: time.Now().UTC()}
	// One statement for the usual case: a like is sixty a second on a
	// popular app, and reading back the row it just wrote was a second
	// round trip each time. Only a repeated like reads the one kept.
	inserted, err := s.writeWithEngagement(ctx, m.AppID, `INSERT INTO reactions (id, app_id, message_id, sender_id, reaction, media_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
		r.ID, r.AppID, r.MessageID, r.SenderID, r.Reaction, r.MediaID, r.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("add reaction: %w", err)
	}
	if !inserted {
		r = new(Reaction)
		if err := s.db.NewSelect().Model(r).Where("message_id = ? AND sender_id = ? AND reaction = ?", m.ID, senderID, reaction).
			Scan(ctx); err != nil {
			return nil, fmt.Errorf("load reaction: %w", err)
		}
	}
	return &ReactionView{ID: r.ID, Reaction: r.Reaction, MediaID: r.MediaID, Sender: ReactionUser{ID: r.SenderID}}, nil
}

// writeWithEngagement runs a write that returns the one row it changed (or
// none) and, in the same commit, moves the app's engagement version when it
// changed one (on PostgreSQL in the same statement); changed says whether it
// did. The new version is announced as bumpPageVersions announces it.
func (s *Storage) writeWithEngagement(ctx context.Context, appID, write string, args ...any) (changed bool, err error) {
	scope := EngagementScope(appID)
	if s.db.Dialect().Name() != dialect.PG {
		// SQLite takes no write inside WITH: the write and the bump are one
		// transaction, so one commit and one sync of the log, where the
		// write and the bump as statements of their own were two (a like
		// took a third more CPU).
		err = s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
			var ids []string
			if err := tx.NewRaw(write, args...).Scan(ctx, &ids); err != nil {
				return err
			}
			if changed = len(ids) == 1; changed {
				changePages(ctx, scope)
			}
			return nil
		})
		return changed, err
	}
	var bumped []PageVersion
	err = s.db.NewRaw(`WITH w AS (`+write+`), v AS (
			INSERT INTO page_versions AS pv (scope, version) SELECT ?, 1 FROM w
			ON CONFLICT (scope) DO UPDATE SET version = pv.version + 1 RETURNING scope, version
		) SELECT scope, version FROM v`, append(args, scope)...).Scan(ctx, &bumped)
	if err != nil {
		return false, err
	}
	if len(bumped) == 0 {
		return false, nil
	}
	s.announceBumps(ctx, []string{scope}, bumped, nil)
	return true, nil
}

// RemoveReaction deletes the sender's own reaction; anyone else's, or one on
// another message, is ErrNotFound.
func (s *Storage) RemoveReaction(ctx context.Context, m *Message, reactionID, senderID string) error {
	// One statement for the usual case (an unlike); only a reaction that
	// is not the sender's, or is gone, is looked up to say which.
	deleted, err := s.writeWithEngagement(ctx, m.AppID,
		`DELETE FROM reactions WHERE id = ? AND message_id = ? AND sender_id = ? RETURNING id`, reactionID, m.ID, senderID)
	if err != nil {
		return fmt.Errorf("delete reaction %s: %w", reactionID, err)
	}
	if !deleted {
		r := new(Reaction)
		if err := selectOne(ctx, s.db.NewSelect().Model(r).Where("id = ? AND message_id = ?", reactionID, m.ID), "reaction "+reactionID); err != nil {
			return err
		}
		return ErrForbidden
	}
	return nil
}

// ErrForbidden is returned when a row exists but belongs to someone else.
var ErrForbidden = errors.New("forbidden")

// messageNotices tells the author of the parent about a reply (to a post or
// to a comment), and the app's members about an announced post.
func messageNotices(ctx context.Context, tx bun.Tx, m *Message, announce bool) error {
	switch {
	case m.Type == MessageReply && m.ParentMessageID != nil:
		var parent Message
		if err := tx.NewSelect().Model(&parent).Where("id = ? AND app_id = ?", *m.ParentMessageID, m.AppID).Scan(ctx); err != nil {
			return fmt.Errorf("load parent for notice: %w", err)
		}
		postID, what := parent.ID, "post"
		if parent.Type == MessageReply && parent.ParentMessageID != nil {
			postID, what = *parent.ParentMessageID, "comment"
		}
		_, err := Notify(ctx, tx, Notice{AppID: m.AppID, Kind: KindReply, RecipientIDs: []string{parent.SenderID},
			SenderID: m.SenderID, Text: "Replied to your " + what + ": " + Snippet(m.Content, 80), Link: "/posts/" + postID,
			Source: "message:" + m.ID})
		return err
	case m.Type == MessagePost && announce:
		text := "New post"
		body := m.Content
		// One text goes to every follower (in the app and by web push).
		// The app-wide gate words it per reader when it is read or pushed
		// (access.NoticeText); a post narrower than that (a tier, or
		// members of an app without the gate) is announced by its teaser.
		narrow := m.AccessMinTierID != nil
		if !narrow && m.AccessAudience == AccessMembers {
			app := new(App)
			if err := tx.NewSelect().Model(app).Where("id = ?", m.AppID).Scan(ctx); err != nil {
				return fmt.Errorf("load app of post: %w", err)
			}
			narrow = !GatesVisitors(app.Settings)
		}
		if narrow {
			text, body = "New post for members", m.Teaser
		}
		if c := Snippet(body, 80); c != "" {
			text += ": " + c
		}
		_, err := Notify(ctx, tx, Notice{AppID: m.AppID, Kind: KindNewPost, Audience: AudienceMembers,
			SenderID: m.SenderID, Text: text, Link: "/posts/" + m.ID, Source: "message:" + m.ID})
		return err
	}
	return nil
}
