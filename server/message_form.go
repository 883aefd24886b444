package server

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// The community's forms for browsers without JavaScript: like, comment,
// new post and new story post here and are sent back (POST, then GET).
// They write through the same rules as the JSON API (createMessage,
// mayReact); the islands that enhance them call the API instead.

func (s *Server) signInRedirect(c echo.Context, sc *Scope) error {
	return c.Redirect(http.StatusSeeOther, s.cfg.AuthURL+"/authenticate/signin?app="+url.QueryEscape(sc.App.Name))
}

// formPost loads the post a form names, in the page's app only.
func (s *Server) formPost(c echo.Context, sc *Scope) (*store.Message, *Scope, error) {
	m, msc, err := s.scopeOfMessage(c, c.Param("postId"))
	if err != nil {
		return nil, nil, err
	}
	if msc.App.ID != sc.App.ID || m.Type == store.MessageReply {
		return nil, nil, notFound("Post not found")
	}
	return m, msc, nil
}

// POST /apps/:app/posts/:postId/like toggles the viewer's heart: the page
// may not know whether this viewer liked the post (a shared render), the
// server does.
func (s *Server) formLike(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return s.signInRedirect(c, sc)
	}
	m, msc, err := s.formPost(c, sc)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	reactions, err := s.store.ReactionsOf(ctx, m.ID)
	if err != nil {
		return err
	}
	heart, _ := store.NormalizeReaction("heart")
	mine := ""
	for _, r := range reactions {
		if r.Sender.ID == sc.User.ID && r.Reaction == heart {
			mine = r.ID
		}
	}
	if mine == "" {
		if err := mayReact(msc); err != nil {
			return err
		}
	}
	if err := s.limitWrite(c, "reaction", sc.User.ID); err != nil {
		return err
	}
	if mine != "" {
		err = s.store.RemoveReaction(ctx, m, mine, sc.User.ID)
	} else {
		_, err = s.store.AddReaction(ctx, m, sc.User.ID, heart, nil)
	}
	if err != nil && !isNotFound(err) {
		return err
	}
	return c.Redirect(http.StatusSeeOther, appBasePath(c.Request(), sc.App.Name)+"/posts/"+m.ID)
}

// POST /apps/:app/posts/:postId/comments adds a comment; back to the post,
// at the comments.
func (s *Server) formComment(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return s.signInRedirect(c, sc)
	}
	m, _, err := s.formPost(c, sc)
	if err != nil {
		return err
	}
	if _, err := s.createMessage(c, sc.User, messageRequest{Type: store.MessageReply, ParentMessageID: m.ID,
		Content: c.FormValue("content")}, nil); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, appBasePath(c.Request(), sc.App.Name)+"/posts/"+m.ID+"#comments")
}

// POST /apps/:app/create-post and /apps/:app/create-story: the create
// screens' forms, multipart with the chosen photo or video (field media).
// A refusal shows the form again with the message and what was typed.
func (s *Server) formCreate(page, msgType string) echo.HandlerFunc {
	return func(c echo.Context) error {
		sc := scopeFromPage(c)
		if sc.User == nil {
			return s.signInRedirect(c, sc)
		}
		if err := sc.requireFeature(featureCommunity); err != nil {
			return err
		}
		req := messageRequest{Type: msgType, Content: c.FormValue("content"), CommunityID: sc.App.Community.ID,
			IsFeatured: c.FormValue("isFeatured") != "", Newsletter: c.FormValue("newsletter") != "", Teaser: c.FormValue("teaser")}
		req.Access = accessFromForm(c.FormValue("access"))
		// When: "now" (the default), "draft", or "schedule" at publishAt.
		switch c.FormValue("when") {
		case "draft":
			req.Draft = true
		case "schedule":
			req.PublishAt = c.FormValue("publishAt")
			if req.PublishAt == "" {
				req.PublishAt = " " // asked to schedule without a time: say so
			}
		}
		msg, err := s.createMessage(c, sc.User, req, func(msc *Scope) (string, error) {
			m, err := s.saveFormFile(c, "media", map[string]string{store.MessagePost: "post", store.MessageStory: "story"}[msgType], &msc.App.ID, sc.User.ID)
			if err != nil || m == nil {
				return "", err
			}
			return m.ID, nil
		})
		if e, ok := err.(*Error); ok && e.Status < 500 && e.Status != http.StatusTooManyRequests {
			props := s.pageProps(c, sc)
			props.Status = e.Status
			data := s.createData(c, sc)
			data.Error, data.Content = e.Message, req.Content
			if v := c.FormValue("access"); v != "" {
				data.Access = v
			}
			data.When, data.PublishAt, data.Newsletter = c.FormValue("when"), c.FormValue("publishAt"), req.Newsletter
			props.Data = data
			return s.renderPage(c, page, props)
		}
		if err != nil {
			return err
		}
		if store.Unpublished(msg.Hidden) {
			// A saved post is seen where it is marked as such.
			return c.Redirect(http.StatusSeeOther, appBasePath(c.Request(), sc.App.Name)+"/posts/"+msg.ID)
		}
		return c.Redirect(http.StatusSeeOther, appBasePath(c.Request(), sc.App.Name)+"/community")
	}
}
