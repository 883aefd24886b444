package server

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"
	"go.yaml.in/yaml/v3"
)

// openAPIFile is api/openapi.yaml, relative to this package's folder (where
// `go test` runs).
const openAPIFile = "../api/openapi.yaml"

var openAPIMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

func loadOpenAPI(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(openAPIFile)
	if err != nil {
		t.Fatalf("read %s: %v", openAPIFile, err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("parse %s: %v", openAPIFile, err)
	}
	return doc
}

// openAPIOperations lists "METHOD /path" -> operation of the document.
func openAPIOperations(t *testing.T, doc map[string]any) map[string]map[string]any {
	t.Helper()
	paths, ok := doc["paths"].(map[string]any)
	if !ok {
		t.Fatalf("%s: paths is missing or not a map", openAPIFile)
	}
	ops := map[string]map[string]any{}
	for path, item := range paths {
		pathItem, ok := item.(map[string]any)
		if !ok {
			t.Errorf("path %s: not a map", path)
			continue
		}
		for _, m := range openAPIMethods {
			if v, found := pathItem[m]; found {
				op, ok := v.(map[string]any)
				if !ok {
					t.Errorf("%s %s: operation is not a map", strings.ToUpper(m), path)
					continue
				}
				ops[strings.ToUpper(m)+" "+path] = op
			}
		}
	}
	return ops
}

// echoPathToOpenAPI turns /api/messages/:id into /api/messages/{id} and
// /media-upload/* into /media-upload/{key}.
func echoPathToOpenAPI(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		switch {
		case strings.HasPrefix(s, ":"):
			segs[i] = "{" + s[1:] + "}"
		case s == "*":
			segs[i] = "{key}"
		}
	}
	return strings.Join(segs, "/")
}

// TestOpenAPIMatchesRoutes fails for every JSON route of the main site that
// api/openapi.yaml does not describe, and for every operation it describes
// that has no route.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, demoSQLite(t))
	routes := map[string]bool{}
	for _, r := range ts.main.Routes() {
		// Echo registers catch-alls (the static group's "/static/*", any
		// RouteNotFound) under a method of its own; they are not calls.
		if r.Method == echo.RouteNotFound {
			continue
		}
		if !strings.HasPrefix(r.Path, "/api/") && !strings.HasPrefix(r.Path, "/media-upload/") {
			continue
		}
		routes[r.Method+" "+echoPathToOpenAPI(r.Path)] = true
	}
	if len(routes) == 0 {
		t.Fatal("no /api/ routes found on the main site")
	}
	documented := openAPIOperations(t, loadOpenAPI(t))

	var missing, extra []string
	for r := range routes {
		if documented[r] == nil {
			missing = append(missing, r)
		}
	}
	for op := range documented {
		if !routes[op] {
			extra = append(extra, op)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	for _, r := range missing {
		t.Errorf("route %s (server/routes.go) is not in %s", r, openAPIFile)
	}
	for _, op := range extra {
		t.Errorf("%s describes %s, which server/routes.go does not route", openAPIFile, op)
	}
}

// TestOpenAPIValid loads api/openapi.yaml with kin-openapi and validates it
// against the OpenAPI 3.1 rules (structure, references, schemas, examples),
// and requires every operation to say whether it needs a session: an
// operation without `security` would silently read as public.
func TestOpenAPIValid(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromFile(openAPIFile)
	if err != nil {
		t.Fatalf("load %s: %v", openAPIFile, err)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		t.Fatalf("%s is not a valid OpenAPI document: %v", openAPIFile, err)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Security == nil {
				t.Errorf("%s %s: no security (use `security: []` for a public call)", method, path)
			}
		}
	}
}

// TestOpenAPIDocument checks what a broken edit of api/openapi.yaml most
// likely breaks: the version, operation ids, success responses, path
// parameters and references.
func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	if v, _ := doc["openapi"].(string); v != "3.1.0" {
		t.Errorf("openapi is %v, want 3.1.0", doc["openapi"])
	}
	info, _ := doc["info"].(map[string]any)
	if info["title"] == nil || info["version"] == nil {
		t.Errorf("info needs a title and a version")
	}

	ops := openAPIOperations(t, doc)
	if len(ops) == 0 {
		t.Fatal("no operations")
	}
	names := make([]string, 0, len(ops))
	for name := range ops {
		names = append(names, name)
	}
	sort.Strings(names)
	paths := doc["paths"].(map[string]any)
	ids := map[string]string{}
	for _, name := range names {
		op := ops[name]
		id, _ := op["operationId"].(string)
		switch {
		case id == "":
			t.Errorf("%s: no operationId", name)
		case ids[id] != "":
			t.Errorf("%s: operationId %q is also used by %s", name, id, ids[id])
		default:
			ids[id] = name
		}
		responses, ok := op["responses"].(map[string]any)
		if !ok || len(responses) == 0 {
			t.Errorf("%s: no responses", name)
			continue
		}
		// A call answers at least one success; one that only redirects
		// (GET /api/media/{id}/content) answers a 3xx instead.
		success := false
		for code := range responses {
			if n, err := strconv.Atoi(code); err == nil && n >= 200 && n < 400 || code == "2XX" || code == "3XX" {
				success = true
			}
		}
		if !success {
			t.Errorf("%s: no 2xx (or, for a redirect, 3xx) response", name)
		}
		path := name[strings.Index(name, " ")+1:]
		checkPathParams(t, doc, name, path, paths[path].(map[string]any), op)
	}

	checkRefs(t, doc, doc, "#")
}

var pathParamPattern = regexp.MustCompile(`\{([^}]+)\}`)

// checkPathParams: every {name} in the path is declared as a path parameter
// (on the operation or the path item), and nothing else is.
func checkPathParams(t *testing.T, doc map[string]any, name, path string, item, op map[string]any) {
	t.Helper()
	declared := map[string]bool{}
	for _, list := range []any{item["parameters"], op["parameters"]} {
		params, _ := list.([]any)
		for _, p := range params {
			pm, _ := p.(map[string]any)
			if ref, ok := pm["$ref"].(string); ok {
				resolved, err := resolveRef(doc, ref)
				if err != nil {
					continue // reported by checkRefs
				}
				pm, _ = resolved.(map[string]any)
			}
			if pm["in"] == "path" {
				n, _ := pm["name"].(string)
				declared[n] = true
				if pm["required"] != true {
					t.Errorf("%s: path parameter %q must be required", name, n)
				}
			}
		}
	}
	inPath := map[string]bool{}
	for _, m := range pathParamPattern.FindAllStringSubmatch(path, -1) {
		inPath[m[1]] = true
		if !declared[m[1]] {
			t.Errorf("%s: path parameter {%s} is not declared", name, m[1])
		}
	}
	for n := range declared {
		if !inPath[n] {
			t.Errorf("%s: path parameter %q is not in the path", name, n)
		}
	}
}

// checkRefs walks the document and resolves every $ref; only references
// inside the document are allowed.
func checkRefs(t *testing.T, doc map[string]any, node any, at string) {
	t.Helper()
	switch v := node.(type) {
	case map[string]any:
		if ref, ok := v["$ref"]; ok {
			s, isString := ref.(string)
			if !isString {
				t.Errorf("%s: $ref is not a string", at)
			} else if _, err := resolveRef(doc, s); err != nil {
				t.Errorf("%s: %v", at, err)
			}
		}
		for k, child := range v {
			checkRefs(t, doc, child, at+"/"+k)
		}
	case []any:
		for i, child := range v {
			checkRefs(t, doc, child, fmt.Sprintf("%s/%d", at, i))
		}
	case map[any]any:
		t.Errorf("%s: a map with a non-string key (quote status codes: '200')", at)
	}
}

// resolveRef follows a local JSON pointer ("#/components/schemas/Media").
func resolveRef(doc map[string]any, ref string) (any, error) {
	if !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("$ref %q: only references inside the document (#/...) are allowed", ref)
	}
	var node any = doc
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := node.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, fmt.Errorf("$ref %q does not resolve: no %q", ref, tok)
			}
			node = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil, fmt.Errorf("$ref %q does not resolve: no item %q", ref, tok)
			}
			node = v[i]
		default:
			return nil, fmt.Errorf("$ref %q does not resolve at %q", ref, tok)
		}
	}
	return node, nil
}
