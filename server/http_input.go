package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"marquee/store"
)

// maxBodyBytes bounds every request body except file uploads, which carry
// their own declared size (media_api.go).
const maxBodyBytes = 1 << 20

// canonicalPath runs before routing. A GET of a path with a trailing slash is
// redirected to the path without it (one URL per page for crawlers); any
// other method is served as if the slash were absent, since browsers turn a
// redirected POST into a GET and the write would be lost. An app's root
// with its slash (/apps/demo/) is served as the landing itself: it is the
// installed app's start URL, inside its manifest's scope (/apps/demo/, so
// that one app's installed app never claims /apps/demo2), and a redirect
// would leave the scope; the page's canonical link names /apps/demo.
func canonicalPath(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		p := r.URL.Path
		if len(p) <= 1 || !strings.HasSuffix(p, "/") {
			return next(c)
		}
		trimmed := strings.TrimRight(p, "/")
		if trimmed == "" {
			trimmed = "/"
		}
		if (r.Method == http.MethodGet || r.Method == http.MethodHead) && !isAppRoot(p) {
			target := sameSitePath(trimmed)
			if r.URL.RawQuery != "" {
				target += "?" + r.URL.RawQuery
			}
			return c.Redirect(http.StatusMovedPermanently, target)
		}
		r.URL.Path, r.URL.RawPath = trimmed, ""
		return next(c)
	}
}

// isAppRoot reports whether p is an app's root with one slash after it
// (/apps/demo/).
func isAppRoot(p string) bool {
	name, ok := strings.CutPrefix(p, "/apps/")
	return ok && strings.Count(name, "/") == 1 && strings.HasSuffix(name, "/") && len(name) > 1
}

// sameSitePath makes a path safe to send back in a Location header: it is
// percent-encoded, so a backslash or a control character cannot make a
// browser read "/\evil.example" or "/\tevil.example" as the scheme-relative
// "//evil.example", and leading slashes collapse to one.
func sameSitePath(p string) string {
	escaped := (&url.URL{Path: p}).EscapedPath()
	return "/" + strings.TrimLeft(escaped, "/")
}

var errBadText = badRequest("Request contains invalid characters (NUL bytes or invalid UTF-8)")

// cleanText reports whether s is valid UTF-8 without NUL bytes: neither can
// be stored in PostgreSQL text, and neither belongs in anything a person
// types.
func cleanText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// checkInput runs before routing and refuses, with a clear 400, paths,
// queries and bodies that carry NUL bytes or invalid UTF-8, and with 413
// bodies over 1 MB. Handlers then never see text the database would choke
// on, whatever endpoint it is sent to.
func checkInput(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if !cleanText(r.URL.Path) || !cleanText(r.URL.RawPath) {
			return errBadText
		}
		if r.URL.RawQuery != "" {
			q, err := url.ParseQuery(r.URL.RawQuery)
			if err != nil {
				return badRequest("Malformed query string")
			}
			for k, vs := range q {
				if !cleanText(k) {
					return errBadText
				}
				for _, v := range vs {
					if !cleanText(v) {
						return errBadText
					}
				}
			}
		}
		if r.Body == nil || r.Body == http.NoBody || strings.HasPrefix(r.URL.Path, "/media-upload/") || itemUploadPart(r) {
			return next(c)
		}
		// A page form with a file (upload_form.go): its own limit, its
		// text checked once parsed, its temporary files removed after.
		if formUpload(r) {
			if err := parseFormUpload(c.Response(), r); err != nil {
				return err
			}
			defer r.MultipartForm.RemoveAll()
			return next(c)
		}
		if r.ContentLength > maxBodyBytes {
			return echo.ErrStatusRequestEntityTooLarge
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
		if err != nil {
			return badRequest("Request body could not be read")
		}
		if len(body) > maxBodyBytes {
			return echo.ErrStatusRequestEntityTooLarge
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err := checkBodyText(r.Header.Get(echo.HeaderContentType), body); err != nil {
			return err
		}
		return next(c)
	}
}

// checkBodyText validates a JSON or form body's text. JSON can smuggle a NUL
// as "\u0000" and invalid UTF-8 is silently replaced by encoding/json, so
// the raw bytes and every decoded string are checked.
func checkBodyText(contentType string, body []byte) error {
	if len(body) == 0 {
		return nil
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case mt == echo.MIMEApplicationJSON || strings.HasSuffix(mt, "+json"):
		if !utf8.Valid(body) || bytes.IndexByte(body, 0) >= 0 {
			return errBadText
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			var syn *json.SyntaxError
			if errors.As(err, &syn) || errors.Is(err, io.ErrUnexpectedEOF) {
				return badRequest("Invalid request body")
			}
			return badRequest("Invalid request body")
		}
		if !jsonClean(v) {
			return errBadText
		}
	case mt == echo.MIMEApplicationForm:
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return badRequest("Malformed form body")
		}
		for k, vs := range form {
			if !cleanText(k) {
				return errBadText
			}
			for _, v := range vs {
				if !cleanText(v) {
					return errBadText
				}
			}
		}
	}
	return nil
}

func jsonClean(v any) bool {
	switch x := v.(type) {
	case string:
		// A lone surrogate ("\ud800") decodes to U+FFFD: refuse it too.
		return cleanText(x) && !strings.ContainsRune(x, utf8.RuneError)
	case []any:
		for _, e := range x {
			if !jsonClean(e) {
				return false
			}
		}
	case map[string]any:
		for k, e := range x {
			if !jsonClean(k) || !jsonClean(e) {
				return false
			}
		}
	}
	return true
}

// maxPage is the highest page number a list call takes: past it the
// offset means nothing (and 9223372036854775807 pages of 20 overflow it).
const maxPage = 1_000_000

const (
	msgBadPage  = "page must be a whole number from 1 to 1000000"
	msgBadLimit = "limit must be a whole number"
)

// pageParams is the one reader of every list's page and limit (the paging
// rule of api/openapi.yaml): page is a whole number from 1 to maxPage,
// absent means 1, anything else (abc, 1.5, 0, -1, 9223372036854775807) is
// a 400; limit is a whole number, absent means defaultLimit, not a whole
// number is a 400, and one out of range is clamped (store.ClampPage).
func pageParams(c echo.Context, defaultLimit int) (int, int, error) {
	page, limit := 1, defaultLimit
	if v := c.QueryParam("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPage {
			return 0, 0, badRequest(msgBadPage)
		}
		page = n
	}
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return 0, 0, badRequest(msgBadLimit)
		}
		limit = n
	}
	page, limit = store.ClampPage(page, limit)
	return page, limit, nil
}
