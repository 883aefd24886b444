package server

import (
	"context"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

const maxMessageChars = 5000

const msgHeldForApproval = "Your post waits for a moderator's approval: posts with links from new accounts are checked first"

type messageRequest struct {
	Content         string   `json:"content"`
	Type            string   `json:"type"`
	AttachmentIDs   []string `json:"attachmentIds"`
	CommunityID     string   `json:"communityId"`
	IsFeatured      bool     `json:"isFeatured"`
	ParentMessageID string   `json:"parentMessageId"`
	TagIDs          []string `json:"tagIds"`
	// Draft saves a post unpublished; PublishAt schedules it (RFC 3339, or
	// a datetime-local value such as 2026-12-01T09:30 read in the app's
	// time zone). Newsletter mails it to the app's members once published.
	Draft      bool   `json:"draft"`
	PublishAt  string `json:"publishAt"`
	Newsletter bool   `json:"newsletter"`
	// Access is who may read a post or story (store/message_access.go);
	// omitted: MEMBERS when the app-wide gate is on, else PUBLIC. Teaser is
	// what those it is locked for see instead.
	Access *store.MessageAccess `json:"access"`
	Teaser string               `json:"teaser"`
}

// POST /api/messages creates a post, a story or a reply.
func (s *Server) apiCreateMessage(c echo.Context) error {
	user, err := requireUser(c)
	if err != nil {
		return err
	}
	var req messageRequest
	if err := c.Bind(&req); err != nil {
		return badRequest("Invalid request body")
	}
	msg, err := s.createMessage(c, user, req, nil)
	if err != nil {
		return err
	}
	if msg.Hidden == store.HiddenForApproval {
		return respondMessage(c, http.StatusCreated, msg, msgHeldForApproval)
	}
	return respond(c, http.StatusCreated, msg)
}

// createMessage is the one way a post, a story or a reply is written, for
// the API and for the forms that work without JavaScript. upload, when
// given, stores a file sent with the form (after every check that does not
// need it) and returns its media id to attach.
func (s *Server) createMessage(c echo.Context, user *store.User, req messageRequest, upload func(sc *Scope) (string, error)) (*store.MessageView, error) {
	var err error
	req.Content = strings.TrimSpace(req.Content)
	if req.Type == "" {
		req.Type = store.MessagePost
		if req.ParentMessageID != "" {
			req.Type = store.MessageReply
		}
	}
	if utf8.RuneCountInString(req.Content) > maxMessageChars {
		return nil, badRequest("Message is too long (5000 characters at most)")
	}
	ctx := c.Request().Context()

	var sc *Scope
	var parent *store.Message
	switch req.Type {
	case store.MessagePost, store.MessageStory:
		if req.CommunityID == "" {
			return nil, badRequest("Community not loaded")
		}
		if sc, err = s.scopeOfCommunity(c, req.CommunityID); err != nil {
			return nil, err
		}
	case store.MessageReply:
		if req.ParentMessageID == "" {
			return nil, badRequest("parentMessageId is required")
		}
		if parent, err = s.store.MessageByID(ctx, req.ParentMessageID); err != nil {
			return nil, wrapLoad(err, "Post not found")
		}
		// A reply lives in its parent's community; a mismatching id is
		// treated as missing so apps never learn of each other's posts.
		if parent.Type == store.MessageReply || (req.CommunityID != "" && req.CommunityID != parent.CommunityID) {
			return nil, notFound("Post not found")
		}
		if sc, err = s.scopeOfCommunity(c, parent.CommunityID); err != nil {
			return nil, err
		}
		if !sc.sees(parent.Hidden, parent.SenderID) {
			return nil, notFound("Post not found")
		}
		if store.Unpublished(parent.Hidden) {
			return nil, badRequest("Comments open once the post is published")
		}
		if ok, err := s.store.MayRead(ctx, parent, sc.Reader); err != nil {
			return nil, err
		} else if !ok {
			return nil, forbidden(msgLockedPost)
		}
	default:
		return nil, badRequest("type must be POST, STORY or REPLY")
	}
	if sc.Ban != nil {
		// A ban and a silence both stop writing: say which, until when and
		// why, whatever path the write came by (the API, a form).
		return nil, forbidden(banMessage(sc.Ban))
	}

	perms := sc.Can
	// A form's file is stored once the viewer may post here at all.
	if upload != nil && (req.Type == store.MessagePost && perms.CanPost || req.Type == store.MessageStory && perms.CanCreateStories) {
		id, err := upload(sc)
		if err != nil {
			return nil, err
		}
		if id != "" {
			req.AttachmentIDs = append(req.AttachmentIDs, id)
		}
	}
	switch req.Type {
	case store.MessagePost:
		if !perms.CanPost {
			return nil, forbidden("Cannot create post: insufficient permissions or community not loaded")
		}
		if req.Content == "" && len(req.AttachmentIDs) == 0 {
			return nil, badRequest("Please add some content or media to your post")
		}
	case store.MessageStory:
		if !perms.CanCreateStories {
			return nil, forbidden("Cannot create story: insufficient permissions or community not loaded")
		}
		if len(req.AttachmentIDs) == 0 {
			return nil, badRequest("No uploaded media")
		}
	case store.MessageReply:
		if !perms.CanComment {
			if !sc.App.Settings.Features.Community.Settings.AllowComments {
				return nil, forbidden("Comments are turned off in this app")
			}
			return nil, forbidden("Follow this app to comment")
		}
		if req.Content == "" {
			return nil, badRequest("Comment cannot be empty")
		}
		if len(req.AttachmentIDs) > 0 {
			return nil, badRequest("Comments cannot have attachments")
		}
	}
	later, publishAt, err := publishLater(req, sc)
	if err != nil {
		return nil, err
	}
	if len(req.AttachmentIDs) > 10 {
		return nil, badRequest("At most 10 attachments")
	}
	kind := "post" // stories count with posts
	if req.Type == store.MessageReply {
		kind = "comment"
	}
	if err := s.limitWrite(c, kind, user.ID); err != nil {
		return nil, err
	}
	// S3 uploads bypass the server: their bytes are checked now, before they
	// can appear in anyone's feed.
	for _, id := range req.AttachmentIDs {
		m, err := s.store.MediaRecord(ctx, id)
		if err != nil && !isNotFound(err) {
			return nil, err
		}
		if err != nil || m.OwnerID != user.ID || m.AppID == nil || !sc.contains(*m.AppID) {
			return nil, badRequest("Attachment not found")
		}
		if m.Type != store.MediaImage && m.Type != store.MediaVideo {
			return nil, badRequest("Only image and video files are supported")
		}
		if err := s.verifyUpload(ctx, m); err != nil {
			return nil, err
		}
	}

	n := store.NewMessage{AppID: sc.App.ID, CommunityID: sc.App.Community.ID, SenderID: user.ID, Type: req.Type,
		Content: req.Content, AttachmentIDs: req.AttachmentIDs, TagIDs: req.TagIDs,
		// Featuring is a creator/admin decision; from anyone else it is ignored.
		IsFeatured: req.IsFeatured && perms.CanFeature && req.Type == store.MessagePost,
		Announce:   access.AnnouncesToMembers(sc.Role)}
	if parent != nil {
		n.ParentMessageID = &parent.ID
	}
	n.Hidden, n.PublishAt, n.Newsletter = later, publishAt, req.Newsletter
	if req.Type != store.MessageReply {
		a := store.MessageAccess{Audience: store.AccessPublic}
		if g := sc.App.Settings.Features.SubscriptionGating; g.Enabled && (g.Settings.Required || g.Settings.LandingPageOnly) {
			a.Audience = store.AccessMembers // the app-wide gate is the default
		}
		if req.Access != nil {
			a = *req.Access
		}
		if err := s.checkAuthorAccess(ctx, sc, &a, req.Access != nil); err != nil {
			return nil, err
		}
		if len([]rune(req.Teaser)) > 500 {
			return nil, fieldError("teaser", "A teaser is at most 500 characters")
		}
		n.Access, n.Teaser = a, strings.TrimSpace(req.Teaser)
	}
	if later == "" && access.HoldsForApproval(sc.App.Settings.Moderation, sc.Role, user.CreatedAt, user.EmailVerified, time.Now(), req.Type == store.MessagePost, hasLink(req.Content)) {
		n.Hidden = store.HiddenForApproval
	}
	msg, err := s.store.CreateMessage(ctx, n)
	if err != nil {
		return nil, answer(err, nil)
	}
	return msg, nil
}

// publishLater reads a post's draft, schedule and newsletter choices: the
// hidden state it is saved in ("" publishes now) and when it goes out.
// Only the creator and admins save for later or mail a post.
func publishLater(req messageRequest, sc *Scope) (string, *time.Time, error) {
	if !req.Draft && req.PublishAt == "" && !req.Newsletter {
		return "", nil, nil
	}
	if req.Type != store.MessagePost {
		return "", nil, badRequest("Only posts can be drafts, scheduled or mailed")
	}
	if req.Newsletter && !access.CanSendNewsletter(sc.Role) {
		return "", nil, forbidden("Only the app's creator and admins can mail a post")
	}
	if (req.Draft || req.PublishAt != "") && !access.CanSchedulePosts(sc.Role) {
		return "", nil, forbidden("Only the app's creator and admins can save drafts or schedule posts")
	}
	if req.PublishAt == "" {
		if req.Draft {
			return store.HiddenDraft, nil, nil
		}
		return "", nil, nil
	}
	at, err := parsePublishAt(req.PublishAt, sc.App.Settings.Basic.Location())
	if err != nil {
		return "", nil, err
	}
	return store.HiddenScheduled, &at, nil
}

// maxScheduleAhead bounds how far ahead a post may be scheduled.
const maxScheduleAhead = 366 * 24 * time.Hour

// parsePublishAt reads a schedule: RFC 3339, or a form's datetime-local
// value in the app's time zone. It must be in the future, within a year.
func parsePublishAt(v string, loc *time.Location) (time.Time, error) {
	v = strings.TrimSpace(v)
	at, err := time.Parse(time.RFC3339, v)
	if err != nil {
		for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04"} {
			if at, err = time.ParseInLocation(layout, v, loc); err == nil {
				break
			}
		}
	}
	if err != nil {
		return time.Time{}, fieldError("publishAt", "Choose a date and time to publish the post")
	}
	now := time.Now()
	if !at.After(now) {
		return time.Time{}, fieldError("publishAt", "Choose a time in the future to schedule the post")
	}
	if at.After(now.Add(maxScheduleAhead)) {
		return time.Time{}, fieldError("publishAt", "Posts can be scheduled up to a year ahead")
	}
	return at.UTC(), nil
}

// accessNotYours refuses an access setting its author could not read.
const accessNotYours = "You can only post for readers you are among: choose an audience you belong to"

// checkAuthorAccess validates the access setting of a post, story or
// event for the app, and, when the author chose it, that they are among
// its readers: authors below the staff post only for readers they are
// among (a follower cannot lock a post for members, a member cannot pick a
// tier above their own), for what its author cannot read is no one's.
func (s *Server) checkAuthorAccess(ctx context.Context, sc *Scope, a *store.MessageAccess, chosen bool) error {
	if err := s.store.CheckAccess(ctx, sc.App.ID, a); err != nil {
		return answer(err, nil)
	}
	if !chosen {
		return nil
	}
	ok, err := s.store.MayReadAccess(ctx, *a, sc.Reader)
	if err != nil {
		return err
	}
	if !ok {
		return &Error{Status: http.StatusForbidden, Message: accessNotYours, Fields: map[string]string{"access": accessNotYours}}
	}
	return nil
}

// accessFromForm reads the access selector of a form without JavaScript:
// "PUBLIC", "FOLLOWERS", "MEMBERS" or "TIER:<tier id>" (that tier and
// above); nil (the default) when absent.
func accessFromForm(v string) *store.MessageAccess {
	if v == "" {
		return nil
	}
	a := store.MessageAccess{Audience: v}
	if id, ok := strings.CutPrefix(v, "TIER:"); ok {
		a = store.MessageAccess{Audience: store.AccessMembers, MinTierID: &id}
	}
	return &a
}
