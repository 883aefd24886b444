package server

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
)

// pagedPages are the pages that list in pages of their own (their page
// links carry ?page=N), read by the same pageParams as the JSON calls.
var pagedPages = []string{
	"/apps/demo/community", "/apps/demo/events", "/apps/demo/store", "/apps/demo/notifications",
	"/apps/demo/orders", "/apps/demo/manage/orders", "/apps/demo/transactions", "/apps/demo/donations",
	"/apps/demo/studio/members", "/apps/demo/studio/moderation",
}

// The paging rule (api/openapi.yaml, Paging) holds on every list call and
// every paged page (issue 41 item 15): a page that is not a whole number
// from 1 to 1000000, or a limit that is not a whole number, is a 400; the
// list calls are every GET the document gives the Page parameter, reached
// through the role table's requests.
func TestPagingRule(t *testing.T) {
	t.Parallel()
	db := demoDB(t)
	ts := newTestServer(t, db)
	fx, viewers, follower := newRoleFixture(t, ts, db)
	var creator *roleViewer
	for _, v := range viewers {
		if v.email == "creator@demo.test" {
			creator = v
		}
	}

	// Every documented GET with a page parameter.
	paged := map[string]bool{}
	for key, op := range openAPIOperations(t, loadOpenAPI(t)) {
		if !strings.HasPrefix(key, "GET ") {
			continue
		}
		params, _ := op["parameters"].([]any)
		for _, p := range params {
			if m, ok := p.(map[string]any); ok && (m["$ref"] == "#/components/parameters/Page" || m["name"] == "page") {
				paged[strings.TrimPrefix(key, "GET ")] = true
			}
		}
	}
	targets := map[string]string{}
	for _, row := range roleTable(fx, follower) {
		if row.site == "main" && row.method == http.MethodGet && paged[echoPathToOpenAPI(row.path)] {
			target, _ := row.req(creator)
			targets[echoPathToOpenAPI(row.path)] = target
		}
	}
	if len(targets) != len(paged) || len(paged) < 10 {
		t.Fatalf("paged calls %v, reached %v", paged, targets)
	}
	all := make([]string, 0, len(targets)+len(pagedPages))
	for _, target := range targets {
		all = append(all, target)
	}
	sort.Strings(all)
	all = append(all, pagedPages...)

	with := func(target, name, value string) string {
		u, err := url.Parse(target)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set(name, value)
		u.RawQuery = q.Encode()
		return u.String()
	}
	h := creator.headers()
	for _, target := range all {
		for _, ok := range []string{"1", "2", "1000000"} {
			if r := ts.do(t, "GET", with(target, "page", ok), nil, h); r.Status != http.StatusOK {
				t.Errorf("%s page=%s: %d, want 200: %.200s", target, ok, r.Status, r.Body)
			}
		}
		for _, bad := range []string{"abc", "1.5", "9223372036854775807", "-1", "0", "1000001", "1e3"} {
			r := ts.do(t, "GET", with(target, "page", bad), nil, h)
			if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, msgBadPage) {
				t.Errorf("%s page=%s: %d, want 400 %q: %.200s", target, bad, r.Status, msgBadPage, r.Body)
			}
		}
		if strings.HasPrefix(target, "/api/") {
			for _, bad := range []string{"abc", "1.5", "99999999999999999999"} {
				r := ts.do(t, "GET", with(target, "limit", bad), nil, h)
				if r.Status != http.StatusBadRequest || !strings.Contains(r.Body, msgBadLimit) {
					t.Errorf("%s limit=%s: %d, want 400 %q: %.200s", target, bad, r.Status, msgBadLimit, r.Body)
				}
			}
		}
	}
}
