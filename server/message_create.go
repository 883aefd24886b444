package server

import (
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

const maxMessageChars = 5000

const msgHeldForApproval = "Your post waits for a moderator's approval: posts with links from new accounts are checked first"

// linkPattern finds what reads as a link in a post: a URL, a www. address
// or a bare domain with a common top-level domain.
var linkPattern = regexp.MustCompile(`(?i)(https?://|www\.|\b[a-z0-9-]+\.(com|net|org|io|co|ru|xyz|info|biz|top|ly|me|app|shop)\b)`)

func hasLink(s string) bool { return linkPattern.MatchString(s) }

type messageRequest struct {
	Content         string   `json:"content"`
	Type            string   `json:"type"`
	AttachmentIDs   []string `json:"attachmentIds"`
	CommunityID     string   `json:"communityId"`
	IsFeatured      bool     `json:"isFeatured"`
	ParentMessageID string   `json:"parentMessageId"`
	TagIDs          []string `json:"tagIds"`
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
	if access.HoldsForApproval(sc.App.Settings.Moderation, sc.Role, user.CreatedAt, user.EmailVerified, time.Now(), req.Type == store.MessagePost, hasLink(req.Content)) {
		n.Hidden = store.HiddenForApproval
	}
	msg, err := s.store.CreateMessage(ctx, n)
	if err != nil {
		return nil, answer(err, nil)
	}
	return msg, nil
}
