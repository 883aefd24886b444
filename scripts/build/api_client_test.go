package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dop251/goja"
	"github.com/evanw/esbuild/pkg/api"

	"marquee/render"
)

// apiClientHarness bundles islands/lib/api.ts for goja with a fake fetch
// and window: respond decides each answer, calls and assigned record what
// the client asked for and where it sent the browser.
const apiClientHarness = `
import { api, request, ApiError, offline } from "./islands/lib/api";
globalThis.calls = [];
globalThis.assigned = [];
globalThis.window = { location: { pathname: "/apps/demo/store/cart", assign: (u) => assigned.push(u), reload: () => assigned.push("reload") } };
globalThis.fetch = (url, init) => {
  calls.push({ url, method: init.method, credentials: init.credentials, headers: init.headers, body: init.body ?? null });
  const answer = globalThis.respond(url, init);
  if (answer === "network") return Promise.reject(new TypeError("Failed to fetch"));
  return Promise.resolve({ status: answer.status, ok: answer.status >= 200 && answer.status < 300, json: () => answer.body === undefined ? Promise.reject(new SyntaxError("no JSON")) : Promise.resolve(answer.body) });
};
// run calls fn and leaves what it resolved or rejected with in out.
globalThis.run = (fn) => fn().then(
  (v) => { globalThis.out = { ok: v }; },
  (e) => { globalThis.out = { err: { name: e.name, message: e.message, status: e.status, fields: e.fields, offline: offline(e), isApiError: e instanceof ApiError } }; },
);
globalThis.client = { api, request };
`

func loadAPIClient(t *testing.T) *goja.Runtime {
	t.Helper()
	root, err := render.ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	res := api.Build(api.BuildOptions{
		Stdin:  &api.StdinOptions{Contents: apiClientHarness, ResolveDir: root, Loader: api.LoaderTS, Sourcefile: "harness.ts"},
		Bundle: true, Format: api.FormatIIFE, Target: api.ES2017, Write: false,
	})
	if err := render.BuildError(res.Errors); err != nil {
		t.Fatal(err)
	}
	vm := goja.New()
	if _, err := vm.RunString(string(res.OutputFiles[0].Contents)); err != nil {
		t.Fatal(err)
	}
	return vm
}

// The one client of islands/lib/api.ts, run as the browser would run it:
// what it sends, what it resolves with, how it rejects, and when a 401
// sends the visitor back to the app.
func TestAPIClient(t *testing.T) {
	cases := []struct {
		name, respond, call string
		want                string // JSON of out
		wantCall            string // JSON of calls[0]
		wantAssigned        string // JSON of assigned
	}{
		{
			name:     "a write sends JSON with the cookie and resolves with the data",
			respond:  `{ status: 201, body: { success: true, data: { id: "r1" }, message: "Created" } }`,
			call:     `client.api("POST", "/api/messages/{id}/reactions", { params: { id: "m1" }, body: { reaction: "heart" } })`,
			want:     `{"ok":{"id":"r1"}}`,
			wantCall: `{"url":"/api/messages/m1/reactions","method":"POST","credentials":"same-origin","headers":{"Accept":"application/json","Content-Type":"application/json"},"body":"{\"reaction\":\"heart\"}"}`,
		},
		{
			name:     "a read has no body and request keeps the pagination",
			respond:  `{ status: 200, body: { success: true, data: [1, 2], pagination: { page: 1, total: 2, hasNext: false } } }`,
			call:     `client.request("GET", "/api/events/apps/{appId}/events", { params: { appId: "a" }, query: { page: 2, search: undefined } })`,
			want:     `{"ok":{"data":[1,2],"pagination":{"page":1,"total":2,"hasNext":false}}}`,
			wantCall: `{"url":"/api/events/apps/a/events?page=2","method":"GET","credentials":"same-origin","headers":{"Accept":"application/json"},"body":null}`,
		},
		{
			name:    "a refusal rejects with the status, the message and the field errors",
			respond: `{ status: 400, body: { success: false, message: "Please enter an event name", error: "Please enter an event name", fields: { name: "Please enter an event name" } } }`,
			call:    `client.api("POST", "/api/events/apps/{appId}/events", { params: { appId: "a" }, body: { name: "" }, fallback: "Failed to create event" })`,
			want:    `{"err":{"name":"ApiError","message":"Please enter an event name","status":400,"fields":{"name":"Please enter an event name"},"offline":false,"isApiError":true}}`,
		},
		{
			name:    "an answer without a message falls back to the caller's wording",
			respond: `{ status: 502 }`,
			call:    `client.api("DELETE", "/api/events/{id}", { params: { id: "e1" }, fallback: "Failed to delete event" })`,
			want:    `{"err":{"name":"ApiError","message":"Failed to delete event","status":502,"fields":{},"offline":true,"isApiError":true}}`,
		},
		{
			name:    "success false is an error even with status 200",
			respond: `{ status: 200, body: { success: false, message: "Nope" } }`,
			call:    `client.api("GET", "/api/x")`,
			want:    `{"err":{"name":"ApiError","message":"Nope","status":200,"fields":{},"offline":false,"isApiError":true}}`,
		},
		{
			name:    "no network is status 0, offline",
			respond: `"network"`,
			call:    `client.api("POST", "/api/store/{storeId}/cart/items", { params: { storeId: "s" }, body: { quantity: 1 } })`,
			want:    `{"err":{"name":"ApiError","message":"Network error","status":0,"fields":{},"offline":true,"isApiError":true}}`,
		},
		{
			name:         "a 401 means the session ended: back to the app's landing page",
			respond:      `{ status: 401, body: { success: false, message: "Authentication required" } }`,
			call:         `client.api("GET", "/api/store/{storeId}/cart", { params: { storeId: "s" } })`,
			want:         `{"err":{"name":"ApiError","message":"Authentication required","status":401,"fields":{},"offline":false,"isApiError":true}}`,
			wantAssigned: `["/apps/demo"]`,
		},
		{
			name:     "path parameters and the query are encoded; an undefined one is left out",
			respond:  `{ status: 200, body: { success: true, data: { apps: [] } } }`,
			call:     `client.request("GET", "/api/search/apps/{appId}", { params: { appId: "my app/x" }, query: { q: "a&b=c", page: undefined, tags: ["x", "y z"] } })`,
			want:     `{"ok":{"data":{"apps":[]}}}`,
			wantCall: `{"url":"/api/search/apps/my%20app%2Fx?q=a%26b%3Dc&tags=x&tags=y%20z","method":"GET","credentials":"same-origin","headers":{"Accept":"application/json"},"body":null}`,
		},
		{
			name:    "a path parameter left out is a bug: the call rejects before any request",
			respond: `{ status: 200, body: { success: true } }`,
			call:    `client.api("GET", "/api/events/{id}", { params: {} })`,
			want:    `{"err":{"name":"Error","message":"missing parameter id of /api/events/{id}","offline":true,"isApiError":false}}`,
		},
		{
			name:         "a call that expects 401 as an answer stays on the page",
			respond:      `{ status: 401, body: { success: false, message: "Authentication required" } }`,
			call:         `client.request("GET", "/api/auth/me", { keepSession: true })`,
			want:         `{"err":{"name":"ApiError","message":"Authentication required","status":401,"fields":{},"offline":false,"isApiError":true}}`,
			wantAssigned: `[]`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vm := loadAPIClient(t)
			if _, err := vm.RunString("globalThis.respond = () => (" + tc.respond + "); run(() => " + tc.call + ");"); err != nil {
				t.Fatal(err)
			}
			// goja has run the promise jobs once RunString returned.
			check := func(expr, want string) {
				t.Helper()
				if want == "" {
					return
				}
				v, err := vm.RunString("JSON.stringify(" + expr + ")")
				if err != nil {
					t.Fatal(err)
				}
				if !sameJSON(t, v.String(), want) {
					t.Errorf("%s = %s\nwant %s", expr, v.String(), want)
				}
			}
			check("globalThis.out", tc.want)
			check("calls[0]", tc.wantCall)
			check("assigned", tc.wantAssigned)
		})
	}
}

func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("want %s: %v", b, err)
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return string(xs) == string(ys)
}

// Every browser request goes through islands/lib/api.ts: a fetch anywhere
// else in islands/ or pages/ skips the envelope, the field errors and the
// 401 handling, as the four hand-made clients before it did.
func TestOnlyTheAPIClientFetches(t *testing.T) {
	root, err := render.ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	call := regexp.MustCompile(`\bfetch\(`)
	for _, dir := range []string{"islands", "pages"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			if rel == filepath.Join("islands", "lib", "api.ts") || !(strings.HasSuffix(path, ".ts") || strings.HasSuffix(path, ".tsx")) {
				return nil
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if call.Match(src) {
				t.Errorf("%s calls fetch: use request or api from islands/lib/api.ts", rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
