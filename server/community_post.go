package server

import (
	"github.com/labstack/echo/v4"

	"marquee/server/access"
	"marquee/store"
)

// CreateData tells the create pages where to post.
type CreateData struct {
	CommunityID string `json:"communityId"`
	// After a refused form post (no JavaScript): why, and what was typed.
	Error   string `json:"error,omitempty"`
	Content string `json:"content,omitempty"`
	// The post's publishing choices, offered to the creator and admins:
	// now, a draft, or scheduled at a time in the app's time zone; and
	// whether it is mailed to the members (the app's default first).
	CanSchedule   bool   `json:"canSchedule"`
	CanNewsletter bool   `json:"canNewsletter"`
	TimeZone      string `json:"timeZone"`
	When          string `json:"when,omitempty" tstype:"'' | 'now' | 'draft' | 'schedule'"`
	PublishAt     string `json:"publishAt,omitempty"`
	Newsletter    bool   `json:"newsletter"`
	// The access selector (issue 40 item 2): who may read the post, as
	// the form's "access" value (PUBLIC, FOLLOWERS, MEMBERS or TIER:<id>),
	// the app-wide gate's default first chosen.
	AccessOptions []AccessOption `json:"accessOptions"`
	Access        string         `json:"access"`
}

// AccessOption is one choice of the composer's access selector.
type AccessOption struct {
	Value string `json:"value"`
	Label string `json:"label"`
}

// createData is what a create page shows before anything is typed.
func (s *Server) createData(c echo.Context, sc *Scope) CreateData {
	data := CreateData{CanSchedule: access.CanSchedulePosts(sc.Role), CanNewsletter: access.CanSendNewsletter(sc.Role),
		TimeZone: sc.App.Settings.Basic.Location().String(), Newsletter: sc.App.Settings.Newsletter.DefaultOn,
		Access: store.AccessPublic}
	if g := sc.App.Settings.Features.SubscriptionGating; g.Enabled && (g.Settings.Required || g.Settings.LandingPageOnly) {
		data.Access = store.AccessMembers
	}
	data.AccessOptions = s.accessOptions(c, sc)
	if sc.requireFeature(featureCommunity) == nil {
		data.CommunityID = sc.App.Community.ID
	}
	return data
}

// GET /apps/:app/create-post and /apps/:app/create-story. The form itself
// checks permissions for display; the API enforces them.
func (s *Server) pageCreate(page string) echo.HandlerFunc {
	return func(c echo.Context) error {
		sc := scopeFromPage(c)
		props := s.pageProps(c, sc)
		data := s.createData(c, sc)
		if sc.Ban != nil {
			// A banned or silenced member is told why before they write.
			data.Error = banMessage(sc.Ban)
		}
		props.Data = data
		return s.renderPage(c, page, props)
	}
}

// accessOptions are the access selector's choices: everyone, followers,
// members and each tier on sale. An author below the staff is offered only
// the readers they are among (checkAuthorAccess): a follower cannot post
// for members.
func (s *Server) accessOptions(c echo.Context, sc *Scope) []AccessOption {
	all := []AccessOption{{store.AccessPublic, "Everyone"}, {store.AccessFollowers, "Followers"}, {store.AccessMembers, "Members (any tier)"}}
	tiers, err := s.store.Tiers(c.Request().Context(), sc.App.ID)
	if err != nil {
		s.logger.Warn("load tiers for the access selector", "app", sc.App.ID, "err", err)
	}
	ranks := map[string]int{}
	for _, t := range tiers {
		all = append(all, AccessOption{"TIER:" + t.ID, t.Name + " and above"})
		ranks[t.ID] = t.Rank
	}
	offered := all[:0]
	for _, o := range all {
		a, rank := accessFromForm(o.Value), 0
		if a.MinTierID != nil {
			rank = ranks[*a.MinTierID]
		}
		if store.CanRead(*a, rank, sc.Reader) {
			offered = append(offered, o)
		}
	}
	return offered
}
