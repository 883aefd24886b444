package server

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// scenario is one request and what must come back, in the style of
// PocketBase's ApiScenario: handler tests are tables of these.
type scenario struct {
	name   string
	method string
	path   string
	// as is the e-mail of the demo user making the request; "" is a visitor.
	as      string
	body    string
	headers map[string]string
	status  int
	// json maps dotted paths ("data.posts.0.id", "pagination.hasNext") to
	// the value they must hold, or to one of the matchers below.
	json map[string]any
	// contains and absent are checked against the raw body.
	contains []string
	absent   []string
}

// Matchers for scenario.json values.
type (
	present  struct{}
	missing  struct{}
	arrayLen int
	nonEmpty struct{}
)

// run sends each scenario and reports every mismatch.
func (ts *testServer) run(t *testing.T, scenarios []scenario) {
	t.Helper()
	sessions := map[string]string{}
	for _, sc := range scenarios {
		headers := map[string]string{}
		if sc.body != "" {
			headers["Content-Type"] = "application/json"
		}
		if sc.as != "" {
			token, ok := sessions[sc.as]
			if !ok {
				token = sessionFor(t, ts, sc.as)
				sessions[sc.as] = token
			}
			headers["Cookie"] = sessionCookie + "=" + token
		}
		for k, v := range sc.headers {
			headers[k] = v
		}
		method := sc.method
		if method == "" {
			method = "GET"
		}
		var body io.Reader
		if sc.body != "" {
			body = strings.NewReader(sc.body)
		}
		res := ts.do(t, method, sc.path, body, headers)
		name := sc.name
		if name == "" {
			name = method + " " + sc.path
		}
		if sc.status != 0 && res.Status != sc.status {
			t.Errorf("%s: status %d, want %d: %.300s", name, res.Status, sc.status, res.Body)
			continue
		}
		for _, s := range sc.contains {
			if !strings.Contains(res.Body, s) {
				t.Errorf("%s: body lacks %q: %.300s", name, s, res.Body)
			}
		}
		for _, s := range sc.absent {
			if strings.Contains(res.Body, s) {
				t.Errorf("%s: body has %q", name, s)
			}
		}
		if len(sc.json) == 0 {
			continue
		}
		var doc any
		if err := json.Unmarshal([]byte(res.Body), &doc); err != nil {
			t.Errorf("%s: not JSON: %v: %.300s", name, err, res.Body)
			continue
		}
		for path, want := range sc.json {
			got, ok := jsonAt(doc, path)
			if err := matchJSON(got, ok, want); err != nil {
				t.Errorf("%s: %s: %v: %.300s", name, path, err, res.Body)
			}
		}
	}
}

// jsonAt walks a decoded JSON document by a dotted path; numeric segments
// index arrays.
func jsonAt(doc any, path string) (any, bool) {
	cur := doc
	for _, seg := range strings.Split(path, ".") {
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[seg]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

func matchJSON(got any, ok bool, want any) error {
	switch w := want.(type) {
	case present:
		if !ok {
			return fmt.Errorf("missing")
		}
		return nil
	case missing:
		if ok {
			return fmt.Errorf("present (%v), want absent", got)
		}
		return nil
	case arrayLen:
		a, isArr := got.([]any)
		if !ok || !isArr || len(a) != int(w) {
			return fmt.Errorf("got %v, want an array of %d", got, int(w))
		}
		return nil
	case nonEmpty:
		a, isArr := got.([]any)
		if !ok || !isArr || len(a) == 0 {
			return fmt.Errorf("got %v, want a non-empty array", got)
		}
		return nil
	}
	if !ok {
		return fmt.Errorf("missing, want %v", want)
	}
	// Compare through JSON so ints match float64 and so on.
	wb, _ := json.Marshal(want)
	var wv any
	_ = json.Unmarshal(wb, &wv)
	if !reflect.DeepEqual(got, wv) {
		return fmt.Errorf("got %v, want %v", got, wv)
	}
	return nil
}
