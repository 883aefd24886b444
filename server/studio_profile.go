package server

import (
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// StudioProfile is the Profile and look form.
type StudioProfile struct {
	DisplayName     string       `json:"displayName"`
	MetaDescription string       `json:"metaDescription"`
	Keywords        string       `json:"keywords"`
	Bio             string       `json:"bio"`
	Lang            string       `json:"lang"`
	Status          string       `json:"status"`
	Version         string       `json:"version"`
	FooterOrder     []string     `json:"footerOrder"`
	ShowLinkInBio   bool         `json:"showLinkInBio"`
	LinksEnabled    bool         `json:"linksEnabled"`
	Links           []store.Link `json:"links"`
	TitleURL        string       `json:"titleUrl"`
	BannerURL       string       `json:"bannerUrl"`
}

func (s *Server) studioProfile(c echo.Context, sc *Scope) (*StudioProfile, error) {
	app := sc.App
	st := app.Settings
	lang := st.Basic.Lang
	if lang == "" {
		lang = "en"
	}
	links, err := s.store.LinksOfApp(c.Request().Context(), app.ID)
	if err != nil {
		return nil, err
	}
	p := &StudioProfile{DisplayName: st.Basic.DisplayName, MetaDescription: st.Basic.MetaDescription, Keywords: st.Basic.Keywords,
		Bio: app.Bio, Lang: lang, Status: app.Status, Version: app.Version, FooterOrder: st.UI.FooterOrder,
		ShowLinkInBio: st.LandingPage.ShowLinkInBio, LinksEnabled: st.Features.Links.Enabled, Links: links}
	if len(p.FooterOrder) == 0 {
		p.FooterOrder = store.DefaultFooterOrder
	}
	if app.Title != nil {
		p.TitleURL = app.Title.SignedURL
	}
	if app.Banner != nil {
		p.BannerURL = app.Banner.SignedURL
	}
	return p, nil
}

// GET /apps/:app/studio
func (s *Server) pageStudio(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	p, err := s.studioProfile(c, sc)
	if err != nil {
		return err
	}
	return s.renderStudio(c, sc, StudioData{Section: sectionProfile, Profile: p}, http.StatusOK)
}

// profileInput reads the Profile and look form. The footer order comes as
// the list's rows (footerOrder, once per tab, in order; a comma list is
// read too); a Move up/down button (move=up:STORE) moves one tab and
// saves the form, so reordering works without JavaScript.
func profileInput(c echo.Context) store.ProfileInput {
	order := []string{}
	for _, v := range formValues(c, "footerOrder") {
		for _, f := range strings.Split(v, ",") {
			if f = strings.ToUpper(strings.TrimSpace(f)); f != "" {
				order = append(order, f)
			}
		}
	}
	if dir, tab, ok := strings.Cut(c.FormValue("move"), ":"); ok {
		order = moveTab(order, strings.ToUpper(tab), dir == "up")
	}
	return store.ProfileInput{DisplayName: c.FormValue("displayName"), MetaDescription: c.FormValue("metaDescription"),
		Keywords: c.FormValue("keywords"), Bio: c.FormValue("bio"), Lang: strings.TrimSpace(c.FormValue("lang")),
		Version: strings.TrimSpace(c.FormValue("version")), FooterOrder: order}
}

// moveTab moves tab one place up (earlier) or down in order.
func moveTab(order []string, tab string, up bool) []string {
	for i, t := range order {
		if t != tab {
			continue
		}
		j := i + 1
		if up {
			j = i - 1
		}
		if j >= 0 && j < len(order) {
			order[i], order[j] = order[j], order[i]
		}
		break
	}
	return order
}

// POST /apps/:app/studio/profile
func (s *Server) formStudioProfile(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	in := profileInput(c)
	err = s.store.SaveProfile(c.Request().Context(), sc.App.ID, sc.User.ID, in)
	if e := refusal(err, nil); e != nil {
		p, lerr := s.studioProfile(c, sc)
		if lerr != nil {
			return lerr
		}
		p.DisplayName, p.MetaDescription, p.Keywords, p.Bio, p.Lang, p.Version = in.DisplayName, in.MetaDescription, in.Keywords, in.Bio, in.Lang, in.Version
		p.FooterOrder = in.FooterOrder
		return s.renderStudio(c, sc, StudioData{Section: sectionProfile, Profile: p, Form: "profile", Error: e.Message, Fields: e.Fields}, e.Status)
	}
	if err != nil {
		return err
	}
	return studioBack(c, sc, "", "saved")
}

// linksInput reads the link rows of the links form: title, url, position
// and enabled per row (enabled lists the rows' indexes); a row without a
// title and url is dropped, and rows are ordered by position.
func linksInput(c echo.Context) []store.LinkInput {
	titles, urls, positions := formValues(c, "linkTitle"), formValues(c, "linkUrl"), formValues(c, "linkPosition")
	enabled := map[string]bool{}
	for _, i := range formValues(c, "linkEnabled") {
		enabled[i] = true
	}
	type row struct {
		pos  int
		link store.LinkInput
	}
	rows := []row{}
	for i := range titles {
		u := ""
		if i < len(urls) {
			u = strings.TrimSpace(urls[i])
		}
		t := strings.TrimSpace(titles[i])
		if t == "" && u == "" {
			continue
		}
		pos := i + 1
		if i < len(positions) {
			if n, err := strconv.Atoi(strings.TrimSpace(positions[i])); err == nil {
				pos = n
			}
		}
		rows = append(rows, row{pos, store.LinkInput{Title: t, URL: u, Enabled: enabled[strconv.Itoa(i)]}})
	}
	sort.SliceStable(rows, func(a, b int) bool { return rows[a].pos < rows[b].pos })
	out := make([]store.LinkInput, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.link)
	}
	return out
}

// POST /apps/:app/studio/links
func (s *Server) formStudioLinks(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	app, err := s.store.AppByIDOrName(c.Request().Context(), sc.App.ID)
	if err != nil {
		return err
	}
	err = s.store.SaveLinks(c.Request().Context(), app, sc.User.ID, linksInput(c))
	if err == nil {
		err = s.store.SaveLinkSwitches(c.Request().Context(), app.ID, sc.User.ID, c.FormValue("linksEnabled") != "", c.FormValue("showLinkInBio") != "")
	}
	if e := refusal(err, nil); e != nil {
		p, lerr := s.studioProfile(c, sc)
		if lerr != nil {
			return lerr
		}
		return s.renderStudio(c, sc, StudioData{Section: sectionProfile, Profile: p, Form: "links", Error: e.Message, Fields: e.Fields}, e.Status)
	}
	if err != nil {
		return err
	}
	return studioBack(c, sc, "", "saved")
}

// POST /apps/:app/studio/images with which (title or banner) and mediaId,
// an uploaded image of the app; an empty mediaId removes the image. The
// upload itself is the media flow (an island); removing works without
// JavaScript.
func (s *Server) formStudioImage(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	mediaID := c.FormValue("mediaId")
	if which := c.FormValue("which"); mediaID == "" && (which == "title" || which == "banner") {
		// Without JavaScript the image comes with the form (multipart).
		m, err := s.saveFormFile(c, "file", which, &sc.App.ID, sc.User.ID)
		if err != nil {
			return err
		}
		if m != nil {
			mediaID = m.ID
		}
	}
	err = s.store.SetAppImage(c.Request().Context(), sc.App.ID, sc.User.ID, c.FormValue("which"), mediaID)
	if e := refusal(err, nil); e != nil {
		p, lerr := s.studioProfile(c, sc)
		if lerr != nil {
			return lerr
		}
		return s.renderStudio(c, sc, StudioData{Section: sectionProfile, Profile: p, Form: "images", Error: e.Message, Fields: e.Fields}, e.Status)
	}
	if err != nil {
		return err
	}
	return studioBack(c, sc, "", "saved")
}
