package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"marquee/render"
)

// The committed pages/lib/generated.ts must be what the Go structs give
// today: a struct changed without `go run ./scripts/build` fails here, before
// a page reads a field the server no longer sends.
func TestGeneratedTypesAreCurrent(t *testing.T) {
	root, err := render.ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join(root, generatedTypes))
	if err != nil {
		t.Fatalf("read %s: %v", generatedTypes, err)
	}
	want, err := typeScript()
	if err != nil {
		t.Fatal(err)
	}
	if string(committed) != want {
		t.Fatalf("%s is stale: run `go run ./scripts/build` and commit it\n%s", generatedTypes, firstDifference(string(committed), want))
	}
}

// The committed pages/lib/openapi.ts must be what openapi-typescript makes
// of api/openapi.yaml today: a path, parameter or answer changed there
// without a rebuild fails here, before an island is compiled against the
// document as it was.
func TestOpenAPITypesAreCurrent(t *testing.T) {
	root, err := render.ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join(root, openapiTypes))
	if err != nil {
		t.Fatalf("read %s: %v", openapiTypes, err)
	}
	want, err := openapiTypeScript(root)
	if err != nil {
		t.Fatal(err)
	}
	if string(committed) != want {
		t.Fatalf("%s is stale: run `go run ./scripts/build` and commit it\n%s", openapiTypes, firstDifference(string(committed), want))
	}
}

// firstDifference shows the first line where the committed file and the
// generated one part.
func firstDifference(have, want string) string {
	h, w := strings.Split(have, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(h) || i < len(w); i++ {
		var hl, wl string
		if i < len(h) {
			hl = h[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if hl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n  committed: " + hl + "\n  generated: " + wl
		}
	}
	return ""
}

type tsInner struct {
	Name string `json:"name"`
}

type tsEmbedded struct {
	Shadowed string `json:"id"`
	Promoted int    `json:"promoted"`
}

type tsSample struct {
	tsEmbedded
	ID        string            `json:"id"`
	Hidden    string            `json:"-"`
	private   string            // unexported: never marshalled
	When      time.Time         `json:"when"`
	Maybe     *time.Time        `json:"maybe"`
	Inner     *tsInner          `json:"inner"`
	Gone      *tsInner          `json:"gone,omitempty"`
	List      []tsInner         `json:"list"`
	Labels    map[string]string `json:"labels"`
	Any       any               `json:"any"`
	Kind      string            `json:"kind" tstype:"'A' | 'B'"`
	Count     int64             `json:"count,string"`
	Anonymous struct {
		On bool `json:"on"`
	} `json:"anonymous"`
}

// The rules the generated file relies on, on a struct that has one of each.
func TestTypeScriptRules(t *testing.T) {
	_ = tsSample{}.private
	got, err := generateTypeScript("", []tsUnion{{Name: "Mode", Values: []string{"on", "off"}}},
		[]tsRoot{{Name: "Sample", Value: tsSample{}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `
export type Mode = "on" | "off";

// Sample is main.tsSample.
export interface Sample {
  promoted: number;
  id: string;
  when: string;
  maybe: string | null;
  inner: tsInner | null;
  gone?: tsInner;
  list: tsInner[];
  labels: Record<string, string>;
  any: unknown;
  kind: 'A' | 'B';
  count: string;
  anonymous: {
    on: boolean;
  };
}

// tsInner is main.tsInner.
export interface tsInner {
  name: string;
}
`
	if got != want {
		t.Fatalf("generated:\n%s\nwant:\n%s", got, want)
	}
}

type tsSelfMarshalled struct {
	When selfMarshaler `json:"when"`
}

type selfMarshaler struct{}

func (selfMarshaler) MarshalJSON() ([]byte, error) { return []byte(`1`), nil }

// A type with its own MarshalJSON is refused: reflection cannot know what
// it writes, and a guess would be a type that lies.
func TestTypeScriptRefusesSelfMarshalledTypes(t *testing.T) {
	_, err := generateTypeScript("", nil, []tsRoot{{Value: tsSelfMarshalled{}}})
	if err == nil || !strings.Contains(err.Error(), "tstype") {
		t.Fatalf("err = %v, want a request for a tstype tag", err)
	}
}
