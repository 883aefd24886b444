package server

import (
	"context"
	"net"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/uptrace/bun"

	"marquee/server/domains"
	"marquee/server/jobs"
	"marquee/store"
)

// sectionDomain is the studio's custom domain screen (issue 42 item 3): the
// creator adds a domain, is shown the DNS records to create, and the
// domain serves the app once its TXT record proves ownership (checked by
// the verify_domain job, and by Check now).
const sectionDomain = "domain"

// StudioDomain is the domain screen, and GET .../domain's answer.
type StudioDomain struct {
	// Domain is the app's domain, or nil before one is added.
	Domain *DomainView `json:"domain"`
	// Typed is a refused form's input, as typed.
	Typed string `json:"typed,omitempty"`
}

// DomainView is an app's domain with the records its owner creates.
type DomainView struct {
	store.AppDomain
	// Records are the DNS records to create: the TXT record that proves
	// ownership, and a CNAME to the operator's target or A/AAAA records.
	Records []DNSRecord `json:"records"`
	// URL is where the app lives once verified.
	URL string `json:"url"`
}

// DNSRecord is one record to create at the domain's DNS provider. Either
// is true when records of one kind are alternatives (CNAME or A/AAAA).
type DNSRecord struct {
	Type   string `json:"type" tstype:"'TXT' | 'CNAME' | 'A' | 'AAAA'"`
	Name   string `json:"name"`
	Value  string `json:"value"`
	Either bool   `json:"either"`
}

func (s *Server) domainView(d *store.AppDomain) *DomainView {
	if d == nil {
		return nil
	}
	v := &DomainView{AppDomain: *d, URL: s.domainOrigin(d.Domain) + "/"}
	target := s.cfg.CustomDomainTarget
	if target == "" {
		target = s.mainHost
	}
	v.Records = append(v.Records, DNSRecord{Type: "TXT", Name: d.TXTName(), Value: d.TXTValue()})
	if net.ParseIP(target) == nil && target != "" {
		v.Records = append(v.Records, DNSRecord{Type: "CNAME", Name: d.Domain, Value: target, Either: len(s.cfg.CustomDomainIPs) > 0})
	}
	for _, ip := range s.cfg.CustomDomainIPs {
		kind := "A"
		if strings.Contains(ip, ":") {
			kind = "AAAA"
		}
		v.Records = append(v.Records, DNSRecord{Type: kind, Name: d.Domain, Value: ip, Either: true})
	}
	return v
}

func (s *Server) studioDomain(ctx context.Context, sc *Scope) (*StudioDomain, error) {
	d, err := s.store.DomainOfApp(ctx, sc.App.ID)
	if isNotFound(err) {
		return &StudioDomain{}, nil
	}
	if err != nil {
		return nil, err
	}
	return &StudioDomain{Domain: s.domainView(d)}, nil
}

// addDomain gives the app the domain typed (AddAppDomain), served here at
// once when verified.
func (s *Server) addDomain(ctx context.Context, appID, actorID, typed string, verified bool) (*store.AppDomain, error) {
	d, err := AddAppDomain(ctx, s.cfg, s.store, appID, actorID, typed, verified)
	if err != nil {
		return nil, err
	}
	s.domains.changed(ctx)
	return d, nil
}

// AddAppDomain gives the app the domain typed, and enqueues its
// verification with the write (unless verified: the operator vouches for
// it). The operator's own hosts are refused. The studio and
// `marquee app domain add` both add domains through it; the app's audit
// log says actorID added it ("" is the operator).
func AddAppDomain(ctx context.Context, cfg Config, st *store.Storage, appID, actorID, typed string, verified bool) (*store.AppDomain, error) {
	domain, err := store.NormalizeDomain(typed)
	if err != nil {
		return nil, err
	}
	if siteHostOf(domain, urlHost(cfg.PublicURL), urlHost(cfg.AuthURL)) || domain == cfg.CustomDomainTarget {
		return nil, &store.ErrInvalid{Msg: "This is the platform's own address: enter a domain of yours", Field: "domain"}
	}
	return st.AddDomain(ctx, appID, actorID, domain, verified, func(ctx context.Context, tx bun.Tx, d *store.AppDomain, fresh bool) error {
		if !fresh {
			return nil
		}
		return jobs.Enqueue(ctx, tx, jobs.VerifyDomainArgs{AppID: d.AppID, Domain: d.Domain})
	})
}

// checkDomain asks DNS now (Check now) and records the answer.
func (s *Server) checkDomain(ctx context.Context, appID, actorID string) (*store.AppDomain, error) {
	d, err := s.store.DomainOfApp(ctx, appID)
	if err != nil {
		return nil, err
	}
	if d.Verified() {
		return d, nil
	}
	checker := domains.Checker{Resolver: s.cfg.DNSResolver, Timeout: s.cfg.DNSTimeout}
	d, err = s.store.RecordDomainCheck(ctx, appID, actorID, d.Domain, checker.Check(ctx, d.Domain, d.Token))
	if err != nil {
		return nil, err
	}
	if d.Verified() {
		s.domains.changed(ctx)
	}
	return d, nil
}

func (s *Server) removeDomain(ctx context.Context, appID, actorID string) error {
	if err := s.store.RemoveDomain(ctx, appID, actorID); err != nil {
		return err
	}
	s.domains.changed(ctx)
	return nil
}

var domainWording = wording{store.ErrNotFound: "Add a domain first"}

// GET /apps/:app/studio/domain
func (s *Server) pageStudioDomain(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	d, err := s.studioDomain(c.Request().Context(), sc)
	if err != nil {
		return err
	}
	return s.renderStudio(c, sc, StudioData{Section: sectionDomain, Domain: d}, http.StatusOK)
}

// POST /apps/:app/studio/domain (domain): add or replace the domain.
func (s *Server) formStudioDomain(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	typed := c.FormValue("domain")
	_, err = s.addDomain(c.Request().Context(), sc.App.ID, sc.User.ID, typed, false)
	if e := refusal(err, domainWording); e != nil {
		d, lerr := s.studioDomain(c.Request().Context(), sc)
		if lerr != nil {
			return lerr
		}
		d.Typed = typed
		if len(e.Fields) == 0 {
			e.Fields = map[string]string{"domain": e.Message}
		}
		return s.renderStudio(c, sc, StudioData{Section: sectionDomain, Domain: d, Form: "domain", Error: e.Message, Fields: e.Fields}, e.Status)
	}
	if err != nil {
		return err
	}
	return studioBack(c, sc, "/domain", "domain-added")
}

// POST /apps/:app/studio/domain/check: Check now.
func (s *Server) formStudioDomainCheck(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	d, err := s.checkDomain(c.Request().Context(), sc.App.ID, sc.User.ID)
	if isNotFound(err) {
		return studioBack(c, sc, "/domain", "domain-none")
	}
	if err != nil {
		return err
	}
	if d.Verified() {
		return studioBack(c, sc, "/domain", "domain-verified")
	}
	return studioBack(c, sc, "/domain", "domain-unverified")
}

// POST /apps/:app/studio/domain/remove
func (s *Server) formStudioDomainRemove(c echo.Context) error {
	sc, err := studioScope(c)
	if err != nil {
		return err
	}
	if err := s.removeDomain(c.Request().Context(), sc.App.ID, sc.User.ID); err != nil {
		return err
	}
	// The app is back under the main site: the screen is there now.
	return c.Redirect(http.StatusSeeOther, s.cfg.PublicURL+"/apps/"+sc.App.Name+"/studio/domain?notice=domain-removed")
}

// GET /api/studio/apps/:appId/domain
func (s *Server) apiStudioDomain(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	d, err := s.studioDomain(c.Request().Context(), sc)
	if err != nil {
		return err
	}
	return respond(c, http.StatusOK, d.Domain)
}

// PUT /api/studio/apps/:appId/domain {domain}: 200 with the domain.
func (s *Server) apiStudioSetDomain(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	var in struct {
		Domain string `json:"domain"`
	}
	if err := c.Bind(&in); err != nil {
		return badRequest("Invalid request body")
	}
	d, err := s.addDomain(c.Request().Context(), sc.App.ID, sc.User.ID, in.Domain, false)
	if err != nil {
		return answer(err, domainWording)
	}
	return respond(c, http.StatusOK, s.domainView(d))
}

// POST /api/studio/apps/:appId/domain/check: ask DNS now.
func (s *Server) apiStudioCheckDomain(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	d, err := s.checkDomain(c.Request().Context(), sc.App.ID, sc.User.ID)
	if err != nil {
		return answer(err, domainWording)
	}
	return respond(c, http.StatusOK, s.domainView(d))
}

// DELETE /api/studio/apps/:appId/domain
func (s *Server) apiStudioRemoveDomain(c echo.Context) error {
	sc, err := s.apiStudioScope(c)
	if err != nil {
		return err
	}
	if err := s.removeDomain(c.Request().Context(), sc.App.ID, sc.User.ID); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// GET /internal/domains/allowed?domain= answers 200 for a verified domain
// and 404 for any other: a proxy that obtains certificates on demand
// (Caddy's on_demand_tls ask) asks it before issuing one.
func (s *Server) internalDomainAllowed(c echo.Context) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	if _, ok := s.VerifiedDomain(c.Request().Context(), c.QueryParam("domain")); ok {
		return c.String(http.StatusOK, "allowed\n")
	}
	return c.String(http.StatusNotFound, "not a verified domain\n")
}
