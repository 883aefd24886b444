package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"golang.org/x/net/idna"
)

// Custom domains (issue 42 item 3). An app has at most one domain and a
// domain belongs to one app (the unique key of app_domains). A domain
// serves its app only once verified: its owner published the TXT record
// DomainTXTName = DomainTXTValue, or the operator said so
// (`marquee app domain add NAME DOMAIN --verified`).

// Domain states.
const (
	DomainPending  = "pending"
	DomainVerified = "verified"
	DomainFailed   = "failed"
)

// The app's audit log lines of its domain.
const (
	ActionDomainAdd    = "domain.add"
	ActionDomainVerify = "domain.verify"
	ActionDomainRemove = "domain.remove"
)

// ErrDomainTaken: another app has this domain.
var ErrDomainTaken = errors.New("this domain is used by another app")

// AppDomain is an app's custom domain and how its verification stands.
type AppDomain struct {
	bun.BaseModel `bun:"table:app_domains"`

	AppID      string     `bun:",pk" json:"-"`
	Domain     string     `bun:",notnull" json:"domain"`
	Token      string     `bun:",notnull" json:"-"`
	State      string     `bun:",notnull" json:"state" tstype:"'pending' | 'verified' | 'failed'"`
	LastError  string     `bun:",notnull" json:"lastError"`
	CheckedAt  *time.Time `json:"checkedAt"`
	VerifiedAt *time.Time `json:"verifiedAt"`
	CreatedAt  time.Time  `bun:",notnull,default:current_timestamp" json:"createdAt"`
}

// TXTName is the name of the TXT record that proves ownership.
func (d *AppDomain) TXTName() string { return DomainTXTName(d.Domain) }

// TXTValue is what that record must say.
func (d *AppDomain) TXTValue() string { return DomainTXTValue(d.Token) }

func DomainTXTName(domain string) string { return "_marquee-verify." + domain }
func DomainTXTValue(token string) string { return "marquee-verify=" + token }

// Verified reports whether the domain serves its app.
func (d *AppDomain) Verified() bool { return d != nil && d.State == DomainVerified }

// NormalizeDomain turns what a creator typed into the domain's ASCII form
// (lower case, punycode, no trailing dot), or refuses it: a host name of at
// least two labels, no scheme, port, path or IP address.
func NormalizeDomain(in string) (string, error) {
	bad := &ErrInvalid{Msg: "Enter a domain name such as fans.example.com (no https://, no path)", Field: "domain"}
	d := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(in)), ".")
	if d == "" || strings.ContainsAny(d, "/:@ ?#*") {
		return "", bad
	}
	ascii, err := idna.Lookup.ToASCII(d)
	if err != nil || len(ascii) > 253 {
		return "", bad
	}
	labels := strings.Split(ascii, ".")
	if len(labels) < 2 {
		return "", bad
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return "", bad
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return "", bad
			}
		}
	}
	// The top-level label of a host name is never all digits: this refuses
	// IPv4 addresses.
	if tld := labels[len(labels)-1]; strings.Trim(tld, "0123456789") == "" {
		return "", bad
	}
	return ascii, nil
}

func newDomainToken() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b[:])
}

// AddDomainTx gives the app the domain (already normalised), replacing the
// app's previous one. Adding the app's own domain again keeps its token and
// state (verified marks it verified). Another app's domain is ErrDomainTaken:
// the unique key decides, so of concurrent adds exactly one wins. fresh
// reports a new pending domain (the caller enqueues its verification in db).
// A domain added, or verified by the operator, is written to the app's
// audit log as actorID's doing ("" is the operator).
func AddDomainTx(ctx context.Context, db bun.IDB, appID, actorID, domain string, verified bool) (d *AppDomain, fresh bool, err error) {
	cur := new(AppDomain)
	err = db.NewSelect().Model(cur).Where("app_id = ?", appID).Limit(1).Scan(ctx)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, false, fmt.Errorf("load domain: %w", err)
	}
	now := time.Now().UTC()
	if err == nil && cur.Domain == domain {
		if verified && cur.State != DomainVerified {
			changePages(ctx, appID) // every URL the app's pages make moves to the domain
			cur.State, cur.VerifiedAt, cur.LastError = DomainVerified, &now, ""
			if _, err := db.NewUpdate().Model(cur).Column("state", "verified_at", "last_error").WherePK().Exec(ctx); err != nil {
				return nil, false, fmt.Errorf("verify domain: %w", err)
			}
			if err := writeAudit(ctx, db, appID, actorID, ActionDomainVerify, "", domain+" (verified by the operator)"); err != nil {
				return nil, false, err
			}
		}
		return cur, false, nil
	}
	taken, err := db.NewSelect().Model((*AppDomain)(nil)).Where("domain = ? AND app_id <> ?", domain, appID).Exists(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("check domain: %w", err)
	}
	if taken {
		return nil, false, ErrDomainTaken
	}
	changePages(ctx, appID) // a verified domain replaced, or one added verified: the app's URLs move
	if _, err := db.NewDelete().Model((*AppDomain)(nil)).Where("app_id = ?", appID).Exec(ctx); err != nil {
		return nil, false, fmt.Errorf("replace domain: %w", err)
	}
	d = &AppDomain{AppID: appID, Domain: domain, Token: newDomainToken(), State: DomainPending, CreatedAt: now}
	if verified {
		d.State, d.VerifiedAt = DomainVerified, &now
	}
	if _, err := db.NewInsert().Model(d).Exec(ctx); err != nil {
		if isUniqueViolation(err) {
			return nil, false, ErrDomainTaken
		}
		return nil, false, fmt.Errorf("add domain: %w", err)
	}
	detail := domain
	if cur.Domain != "" {
		detail += " (replacing " + cur.Domain + ")"
	}
	if verified {
		detail += " (verified by the operator)"
	}
	if err := writeAudit(ctx, db, appID, actorID, ActionDomainAdd, "", detail); err != nil {
		return nil, false, err
	}
	return d, !verified, nil
}

// AddDomain is AddDomainTx in a transaction of its own, with then run in it
// (to enqueue the verification with the write), unless then is nil.
func (s *Storage) AddDomain(ctx context.Context, appID, actorID, domain string, verified bool, then func(ctx context.Context, tx bun.Tx, d *AppDomain, fresh bool) error) (*AppDomain, error) {
	var out *AppDomain
	err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		d, fresh, err := AddDomainTx(ctx, tx, appID, actorID, domain, verified)
		if err != nil {
			return err
		}
		out = d
		if then != nil {
			return then(ctx, tx, d, fresh)
		}
		return nil
	})
	if err != nil && isUniqueViolation(err) {
		return nil, ErrDomainTaken
	}
	return out, err
}

// DomainOfApp answers the app's domain in any state, or ErrNotFound.
func (s *Storage) DomainOfApp(ctx context.Context, appID string) (*AppDomain, error) {
	d := new(AppDomain)
	if err := selectOne(ctx, s.db.NewSelect().Model(d).Where("app_id = ?", appID), "domain"); err != nil {
		return nil, err
	}
	return d, nil
}

// RemoveDomain takes the app's domain away (none is no error): the app is
// back at /apps/{name} alone. The removal is written to the app's audit
// log as actorID's doing ("" is the operator).
func (s *Storage) RemoveDomain(ctx context.Context, appID, actorID string) error {
	return s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		var gone []AppDomain
		if err := tx.NewDelete().Model(&gone).Where("app_id = ?", appID).Returning("domain").Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("remove domain: %w", err)
		}
		for _, d := range gone {
			changePages(ctx, appID) // the app's URLs return to /apps/{app}
			if err := writeAudit(ctx, tx, appID, actorID, ActionDomainRemove, "", d.Domain); err != nil {
				return err
			}
		}
		return nil
	})
}

// RecordDomainCheck stores the outcome of a DNS check of the app's domain
// (checkErr nil: verified). It changes nothing when the app's domain is
// no longer this one, and never takes a verified domain back. It answers
// the domain as it now stands. The check that verifies it is written to
// the app's audit log as actorID's doing ("" is the verify_domain job).
func (s *Storage) RecordDomainCheck(ctx context.Context, appID, actorID, domain string, checkErr error) (*AppDomain, error) {
	now := time.Now().UTC()
	if checkErr == nil {
		err := s.writeTx(ctx, func(ctx context.Context, tx bun.Tx) error {
			// Only a domain not verified yet is updated, so a verification
			// is written once however many checks race: the update answers
			// whether this one made it.
			res, err := tx.NewUpdate().Model((*AppDomain)(nil)).Set("checked_at = ?", now).
				Set("state = ?", DomainVerified).Set("verified_at = ?", now).Set("last_error = ''").
				Where("app_id = ? AND domain = ? AND state <> ?", appID, domain, DomainVerified).Exec(ctx)
			if err != nil {
				return fmt.Errorf("record domain check: %w", err)
			}
			if n, _ := res.RowsAffected(); n == 1 {
				changePages(ctx, appID) // every URL the app's pages make moves to the domain
				return writeAudit(ctx, tx, appID, actorID, ActionDomainVerify, "", domain+": its TXT record was found")
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return s.DomainOfApp(ctx, appID)
	}
	msg := checkErr.Error()
	if len(msg) > 300 {
		msg = msg[:300]
	}
	_, err := s.db.NewUpdate().Model((*AppDomain)(nil)).Set("checked_at = ?", now).
		Set("state = CASE WHEN state = ? THEN state ELSE ? END", DomainVerified, DomainFailed).
		Set("last_error = CASE WHEN state = ? THEN last_error ELSE ? END", DomainVerified, msg).
		Where("app_id = ? AND domain = ?", appID, domain).Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("record domain check: %w", err)
	}
	return s.DomainOfApp(ctx, appID)
}

// DomainRoute is a verified domain and the app it serves.
type DomainRoute struct {
	Domain  string `bun:"domain"`
	AppID   string `bun:"app_id"`
	AppName string `bun:"app_name"`
}

// VerifiedDomains lists every verified domain with its app: the table the
// server routes hosts by (and an ACME on-demand policy may ask).
func (s *Storage) VerifiedDomains(ctx context.Context) ([]DomainRoute, error) {
	var out []DomainRoute
	err := s.db.NewSelect().TableExpr("app_domains AS d").Join("JOIN apps AS a ON a.id = d.app_id").
		ColumnExpr("d.domain, d.app_id, a.name AS app_name").Where("d.state = ?", DomainVerified).
		OrderExpr("d.domain").Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("list verified domains: %w", err)
	}
	return out, nil
}

// DomainListing is a row of `marquee app domain list`.
type DomainListing struct {
	AppDomain `bun:",extend"`
	AppName   string `bun:"app_name"`
}

// ListDomains lists every app's domain, verified or not.
func (s *Storage) ListDomains(ctx context.Context) ([]DomainListing, error) {
	var out []DomainListing
	err := s.db.NewSelect().Model(&out).ColumnExpr("app_domain.*, a.name AS app_name").
		Join("JOIN apps AS a ON a.id = app_domain.app_id").OrderExpr("app_domain.domain").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("list domains: %w", err)
	}
	return out, nil
}

// DomainSignIn is a one-time code that carries a sign-in from the auth host
// to one custom domain: it works once, for that domain, for a minute.
type DomainSignIn struct {
	bun.BaseModel `bun:"table:domain_sign_ins"`

	Code      string    `bun:",pk"` // SHA-256 of the code, as sessions keep tokens
	Domain    string    `bun:",notnull"`
	SessionID string    `bun:",notnull"`
	UserID    string    `bun:",notnull"`
	ExpiresAt time.Time `bun:",notnull"`
}

// DomainSignInTTL is how long a code may wait for its exchange.
const DomainSignInTTL = time.Minute

// CreateDomainSignIn makes a code for the signed-in session of token, to be
// exchanged by domain.
func (s *Storage) CreateDomainSignIn(ctx context.Context, token, domain string) (string, error) {
	user, err := s.SessionUser(ctx, token)
	if err != nil {
		return "", err
	}
	code := NewSessionToken()
	row := &DomainSignIn{Code: sessionID(code), Domain: domain, SessionID: sessionID(token), UserID: user.ID,
		ExpiresAt: time.Now().UTC().Add(DomainSignInTTL)}
	if _, err := s.db.NewInsert().Model(row).Exec(ctx); err != nil {
		return "", fmt.Errorf("create sign-in code: %w", err)
	}
	// Codes nobody exchanged are dropped by the next one made.
	if _, err := s.db.NewDelete().Model((*DomainSignIn)(nil)).Where("expires_at < ?", time.Now().UTC().Add(-time.Hour)).Exec(ctx); err != nil {
		s.logger.Debug("drop old sign-in codes", "err", err)
	}
	return code, nil
}

// ExchangeDomainSignIn spends a code on domain: a new session of the code's
// user, linked to the auth host's session (ending either ends both), whose
// token it answers. The code is gone after the first try, whatever its
// outcome; another domain's, an expired or a spent code is ErrTokenInvalid.
func (s *Storage) ExchangeDomainSignIn(ctx context.Context, code, domain, userAgent string) (string, error) {
	if code == "" {
		return "", ErrTokenInvalid
	}
	var rows []DomainSignIn
	if err := s.db.NewDelete().Model(&rows).Where("code = ?", sessionID(code)).Returning("*").Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("spend sign-in code: %w", err)
	}
	if len(rows) != 1 || rows[0].Domain != domain || time.Now().After(rows[0].ExpiresAt) {
		return "", ErrTokenInvalid
	}
	row := rows[0]
	// The auth host's session must still be live: a code made before a
	// sign-out signs nobody in.
	live, err := s.db.NewSelect().Model((*Session)(nil)).Where("id = ? AND expires_at > ?", row.SessionID, time.Now()).Exists(ctx)
	if err != nil {
		return "", fmt.Errorf("check session: %w", err)
	}
	if !live {
		return "", ErrTokenInvalid
	}
	return s.createSession(ctx, row.UserID, userAgent, row.SessionID)
}
