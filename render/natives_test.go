package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// The native parse gives what JSON.parse gives: the same values, keys in
// the same order (integer-like keys first, as JavaScript orders them), the
// last of duplicate keys, "__proto__" as an own property, and an error for
// what is not JSON.
func TestNativeParseIsJSONParse(t *testing.T) {
	root, err := ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	landing, err := os.ReadFile(filepath.Join(root, "render/testdata/bench", "Landing.json"))
	if err != nil {
		t.Fatal(err)
	}
	rt := goja.New()
	installNatives(rt)
	check, err := rt.RunString(`(function (s) {
		var a = JSON.parse(s), b = __marqueeParse(s);
		var proto = b !== null && typeof b === "object" && !Array.isArray(b) ? Object.getPrototypeOf(b) === Object.prototype : true;
		return JSON.stringify(a) === JSON.stringify(b) && proto ? "" : JSON.stringify(a) + " | " + JSON.stringify(b);
	})`)
	if err != nil {
		t.Fatal(err)
	}
	same, _ := goja.AssertFunction(check)
	for _, in := range []string{
		string(landing),
		`{"b":1,"a":[1,2.5,-3e2,true,false,null],"2":"two","1":"one","c":{"d":{}}}`,
		`{"dup":1,"dup":2}`,
		`{"__proto__":{"polluted":true},"x":1}`,
		`"caf\u00e9 \ud83d\ude00 ❤️ \"quoted\" \\ / \n"`,
		`[9007199254740993, 0.1, 1e308, -0]`,
		`[]`, `{}`, `null`, `"<script>&amp;</script>"`,
	} {
		diff, err := same(goja.Undefined(), rt.ToValue(in))
		if err != nil {
			t.Fatalf("%.60s: %v", in, err)
		}
		if d := diff.String(); d != "" {
			t.Errorf("%.60s: JSON.parse and the native parse differ: %.400s", in, d)
		}
	}
	proto, err := rt.RunString(`Object.getPrototypeOf(__marqueeParse('{"__proto__":{"polluted":true}}')) === Object.prototype && ({}).polluted === undefined`)
	if err != nil || !proto.ToBoolean() {
		t.Errorf("a __proto__ key changed a prototype: %v", err)
	}
	for _, bad := range []string{``, `{`, `{"a":}`, `[1,]`, `{'a':1}`} {
		if _, err := rt.RunString(`__marqueeParse(` + jsString(bad) + `)`); err == nil {
			t.Errorf("%q parsed without an error", bad)
		}
	}
}

// The native escape gives what React's escape does (the JavaScript the
// bundle falls back to; TestRewritesKeepReactsOutput compares real pages
// with React's own).
func TestNativeEscapeIsReacts(t *testing.T) {
	rt := goja.New()
	installNatives(rt)
	for _, in := range []string{"", "plain text", `<a href="x">Tom & Jerry's</a>`, "caf\u00e9 ❤️ <b>", "&amp;&lt;", `'"'"`} {
		got, err := rt.RunString(`__marqueeEscape(` + jsString(in) + `)`)
		if err != nil {
			t.Fatal(err)
		}
		want, err := rt.RunString(jsString(in) + `.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/'/g, "&#x27;").replace(/</g, "&lt;").replace(/>/g, "&gt;")`)
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("escape(%q) = %q, want %q", in, got.String(), want.String())
		}
	}
}

func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
