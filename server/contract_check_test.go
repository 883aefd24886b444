package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The contract check: every answer a test receives from a JSON call of the
// main site is validated against api/openapi.yaml, so the document cannot
// drift from what the server sends. The document is loaded once per test
// binary.
//
// openapi3filter.ValidateResponse checks the status and the headers. The
// body is checked here with each response schema compiled once: for an
// OpenAPI 3.1 document kin-openapi compiles the JSON Schema again on every
// call (5 to 20 ms an answer), which the whole suite would pay thousands of
// times.
type contract struct {
	router routers.Router

	mu       sync.Mutex // guards compiler and compiled
	compiler *jsonschema.Compiler
	compiled map[*openapi3.SchemaRef]*jsonschema.Schema
}

var (
	contractOnce sync.Once
	theContract  *contract
	contractErr  error
)

// everyCall lists the answers api/openapi.yaml says every call may give
// (info.description, "Answers every call may give") and the response that
// describes each; the check adds them to operations that do not list them.
var everyCall = map[string]string{
	"400": "BadRequest", "405": "MethodNotAllowed", "413": "PayloadTooLarge",
	"500": "InternalError", "503": "ServiceUnavailable",
}

// schemaDefs is where the document's component schemas live for the
// JSON Schema compiler.
const schemaDefs = "mem:///components.json"

func loadContract() (*contract, error) {
	contractOnce.Do(func() {
		theContract, contractErr = newContract()
	})
	return theContract, contractErr
}

func newContract() (*contract, error) {
	doc, err := openapi3.NewLoader().LoadFromFile(openAPIFile)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", openAPIFile, err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("validate %s: %w", openAPIFile, err)
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for code, name := range everyCall {
				if op.Responses.Value(code) == nil {
					op.Responses.Set(code, doc.Components.Responses[name])
				}
			}
		}
	}
	closeObjects(doc)
	// Tests send paths without a host; with no servers the router
	// matches the path alone.
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route %s: %w", openAPIFile, err)
	}

	defs, err := schemaJSON(doc.Components.Schemas)
	if err != nil {
		return nil, fmt.Errorf("component schemas: %w", err)
	}
	compiler := jsonschema.NewCompiler()
	compiler.DefaultDraft(jsonschema.Draft2020)
	compiler.AssertFormat()
	if err := compiler.AddResource(schemaDefs, map[string]any{"$defs": defs}); err != nil {
		return nil, fmt.Errorf("component schemas: %w", err)
	}
	return &contract{router: router, compiler: compiler, compiled: map[*openapi3.SchemaRef]*jsonschema.Schema{}}, nil
}

// schemaJSON turns part of the document into JSON Schema for the compiler:
// references to component schemas point into schemaDefs.
func schemaJSON(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	b = bytes.ReplaceAll(b, []byte(`"#/components/schemas/`), []byte(`"`+schemaDefs+`#/$defs/`))
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

// schema compiles a response schema the first time it is needed.
func (c *contract) schema(ref *openapi3.SchemaRef) (*jsonschema.Schema, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.compiled[ref]; s != nil {
		return s, nil
	}
	doc, err := schemaJSON(ref)
	if err != nil {
		return nil, err
	}
	url := fmt.Sprintf("mem:///response-%d.json", len(c.compiled))
	if err := c.compiler.AddResource(url, doc); err != nil {
		return nil, err
	}
	s, err := c.compiler.Compile(url)
	if err != nil {
		return nil, err
	}
	c.compiled[ref] = s
	return s, nil
}

// isContractPath says whether a main-site target is a documented JSON call.
func isContractPath(target string) bool {
	return strings.HasPrefix(target, "/api/") || strings.HasPrefix(target, "/media-upload/")
}

// checkContract fails t when an answer to a documented call does not match
// api/openapi.yaml: a status the operation does not list, a content type or
// body that does not fit, or a field the document does not declare.
func checkContract(t testing.TB, method, target string, status int, header http.Header, body []byte) {
	t.Helper()
	if !isContractPath(target) {
		return
	}
	c, err := loadContract()
	if err != nil {
		t.Fatalf("contract: %v", err)
	}
	if err := c.check(method, target, status, header, body); err != nil {
		t.Errorf("contract: %s %s answered %d, which %s does not allow: %v\nbody: %s",
			method, target, status, openAPIFile, err, truncate(string(body), 600))
	}
}

func (c *contract) check(method, target string, status int, header http.Header, body []byte) error {
	req := newRequest(method, target, nil)
	route, params, err := c.router.FindRoute(req)
	if errors.Is(err, routers.ErrPathNotFound) || errors.Is(err, routers.ErrMethodNotAllowed) {
		// Unknown paths (404) and methods (405) are answers every call
		// may give; TestOpenAPIMatchesRoutes keeps routes and operations
		// in step.
		return nil
	}
	if err != nil {
		return fmt.Errorf("find route: %w", err)
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(nil)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, ExcludeResponseBody: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), input); err != nil {
		return err
	}
	resp := route.Operation.Responses.Status(status)
	if method == http.MethodHead || resp == nil || resp.Value == nil || len(resp.Value.Content) == 0 {
		return nil
	}
	ct := header.Get("Content-Type")
	mt := resp.Value.Content.Get(ct)
	if mt == nil {
		return fmt.Errorf("content type %q is not documented", ct)
	}
	if mt.Schema == nil {
		return nil
	}
	plain, err := decodeBody(header.Get("Content-Encoding"), body)
	if err != nil {
		return err
	}
	value, err := jsonschema.UnmarshalJSON(bytes.NewReader(plain))
	if err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	schema, err := c.schema(mt.Schema)
	if err != nil {
		return fmt.Errorf("compile the response schema: %w", err)
	}
	if err := schema.Validate(value); err != nil {
		return fmt.Errorf("body does not match the schema: %w", err)
	}
	return nil
}

// decodeBody undoes the Content-Encoding the page cache and the gzip
// middleware apply.
func decodeBody(encoding string, body []byte) ([]byte, error) {
	switch encoding {
	case "":
		return body, nil
	case "gzip":
		r, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("gunzip body: %w", err)
		}
		return io.ReadAll(r)
	case "br":
		return io.ReadAll(brotli.NewReader(bytes.NewReader(body)))
	default:
		return nil, fmt.Errorf("unknown Content-Encoding %q", encoding)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// closeObjects makes every object the document describes closed for the
// check, as if it said `unevaluatedProperties: false`: a field the server
// sends but the document does not declare is a mismatch, not a silent
// extra. The document itself stays open, as clients must ignore new fields.
//
// The keyword goes on a wrapper at each place a value appears (a response
// body, a property, an array item), not on the schemas themselves: a schema
// that is a member of an allOf (the Envelope) must not reject the fields
// its siblings declare, and unevaluatedProperties on the wrapper sees
// through allOf, oneOf and $ref.
func closeObjects(doc *openapi3.T) {
	seen := map[*openapi3.Schema]bool{}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, resp := range op.Responses.Map() {
				if resp.Value == nil {
					continue
				}
				for _, mt := range resp.Value.Content {
					mt.Schema = closedRef(mt.Schema, seen)
				}
			}
		}
	}
}

// closedRef wraps ref so that its object value takes no undeclared fields,
// and closes the values inside it.
func closedRef(ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) *openapi3.SchemaRef {
	if ref == nil || ref.Value == nil {
		return ref
	}
	closeInside(ref.Value, seen)
	if !describesObject(ref.Value, map[*openapi3.Schema]bool{}) {
		return ref
	}
	no := false
	return &openapi3.SchemaRef{Value: &openapi3.Schema{
		AllOf:                 openapi3.SchemaRefs{ref},
		UnevaluatedProperties: openapi3.BoolSchema{Has: &no},
	}}
}

// closeInside closes the values a schema holds (properties, items), and
// those of the schemas it is composed of, without closing the schema itself.
func closeInside(s *openapi3.Schema, seen map[*openapi3.Schema]bool) {
	if s == nil || seen[s] {
		return
	}
	seen[s] = true
	for name, p := range s.Properties {
		s.Properties[name] = closedRef(p, seen)
	}
	s.Items = closedRef(s.Items, seen)
	for _, list := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
		for _, member := range list {
			if member != nil {
				closeInside(member.Value, seen)
			}
		}
	}
}

// describesObject: the schema names properties (itself or through the
// schemas it is composed of) and does not say what other fields may be.
func describesObject(s *openapi3.Schema, visiting map[*openapi3.Schema]bool) bool {
	if s == nil || visiting[s] {
		return false
	}
	visiting[s] = true
	if s.AdditionalProperties.Has != nil || s.AdditionalProperties.Schema != nil ||
		s.UnevaluatedProperties.Has != nil || s.UnevaluatedProperties.Schema != nil {
		return false
	}
	if len(s.Properties) > 0 {
		return true
	}
	for _, list := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
		for _, member := range list {
			if member != nil && describesObject(member.Value, visiting) {
				return true
			}
		}
	}
	return false
}

// TestContractCheckCatchesDrift proves the check fails on what it is for:
// an undocumented status, a wrong type and an undeclared field.
func TestContractCheckCatchesDrift(t *testing.T) {
	t.Parallel()
	jsonHeader := http.Header{"Content-Type": []string{"application/json"}}
	good := `{"success":true,"data":{"publicKey":"abc"},"publicKey":"abc"}`
	for _, c := range []struct {
		name   string
		status int
		body   string
		ok     bool
	}{
		{"documented answer", 200, good, true},
		{"undocumented status", 418, `{"success":false,"message":"x","error":"x"}`, false},
		{"wrong type", 200, `{"success":true,"data":{"publicKey":5},"publicKey":"abc"}`, false},
		{"undeclared top-level field", 200, `{"success":true,"data":{"publicKey":"abc"},"publicKey":"abc","extra":1}`, false},
		{"undeclared nested field", 200, `{"success":true,"data":{"publicKey":"abc","extra":1},"publicKey":"abc"}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &recordingTB{TB: t}
			checkContract(rec, "GET", "/api/notifications/vapid-key", c.status, jsonHeader, []byte(c.body))
			if rec.failed == c.ok {
				t.Errorf("check failed=%v, want %v (%s)", rec.failed, !c.ok, rec.msg)
			}
		})
	}
}

// recordingTB records a failure instead of failing the test.
type recordingTB struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.failed = true
	r.msg = fmt.Sprintf(format, args...)
}

func (r *recordingTB) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.TB.Fatalf(format, args...)
}

func (r *recordingTB) Helper() {}
