package server

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/server/jobs"
	"marquee/store"
)

// publishNow publishes a draft or a scheduled post of the viewer's app at
// once (the creator's and admins' Publish now); a post already published
// is left as it is, so a second click changes nothing.
func (s *Server) publishNow(c echo.Context, id string) (*store.Message, error) {
	if _, err := requireUser(c); err != nil {
		return nil, err
	}
	m, sc, err := s.scopeOfMessage(c, id)
	if err != nil {
		return nil, err
	}
	if m.Type != store.MessagePost {
		return nil, notFound("Post not found")
	}
	if !access.CanSchedulePosts(sc.Role) {
		return nil, forbidden("Only the app's creator and admins can publish saved posts")
	}
	if store.Unpublished(m.Hidden) {
		if _, err := jobs.PublishPost(c.Request().Context(), s.store, m, time.Now()); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// POST /api/messages/:id/publish publishes a draft or a scheduled post now
// and answers it.
func (s *Server) apiPublishMessage(c echo.Context) error {
	m, err := s.publishNow(c, c.Param("id"))
	if err != nil {
		return err
	}
	fresh, err := s.store.MessageByID(c.Request().Context(), m.ID)
	if err != nil {
		return err
	}
	view, err := s.store.MessageView(c.Request().Context(), fresh, 0)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, view)
}

// POST /apps/:app/posts/:postId/publish: the post page's Publish now
// button without JavaScript; back to the post.
func (s *Server) formPublish(c echo.Context) error {
	sc := scopeFromPage(c)
	if sc.User == nil {
		return s.signInRedirect(c, sc)
	}
	m, _, err := s.formPost(c, sc)
	if err != nil {
		return err
	}
	if _, err := s.publishNow(c, m.ID); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, appBasePath(c.Request(), sc.App.Name)+"/posts/"+m.ID)
}
