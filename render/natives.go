package render

import (
	"fmt"
	"strings"

	"github.com/dop251/goja"
	"github.com/valyala/fastjson"
)

// installNatives gives a runtime two functions the server bundle uses
// when they exist (under Node it falls back to its own JavaScript): what
// an interpreter does slowly and Go does the same way, byte for byte.
//
//   - __marqueeParse(json) is JSON.parse of the page's props: goja's reads
//     the text token by token through encoding/json, a tenth of a landing
//     render; fastjson and building the objects here take a third of that.
//   - __marqueeEscape(text) is React's escape of text and attribute values
//     (the rewrite in bundle.go): a regular expression test and five
//     replaces per string in goja.
func installNatives(rt *goja.Runtime) {
	rt.Set("__marqueeParse", func(call goja.FunctionCall) goja.Value {
		var p fastjson.Parser
		v, err := p.Parse(call.Argument(0).String())
		if err != nil {
			panic(rt.NewGoError(fmt.Errorf("parse props: %w", err)))
		}
		return jsValue(rt, v)
	})
	rt.Set("__marqueeEscape", func(call goja.FunctionCall) goja.Value {
		text := call.Argument(0)
		s := text.String()
		if !strings.ContainsAny(s, "&\"'<>") {
			return text
		}
		return rt.ToValue(htmlEscaper.Replace(s))
	})
}

// htmlEscaper escapes as React's server renderer does.
var htmlEscaper = strings.NewReplacer("&", "&amp;", `"`, "&quot;", "'", "&#x27;", "<", "&lt;", ">", "&gt;")

// jsValue builds the JavaScript value of a parsed JSON value, keys in
// their order, as JSON.parse would.
func jsValue(rt *goja.Runtime, v *fastjson.Value) goja.Value {
	switch v.Type() {
	case fastjson.TypeObject:
		o := rt.NewObject()
		obj, _ := v.Object()
		// Defined, not set: a "__proto__" key is an own property, as
		// JSON.parse makes it, never the object's prototype.
		obj.Visit(func(k []byte, e *fastjson.Value) {
			_ = o.DefineDataProperty(string(k), jsValue(rt, e), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
		})
		return o
	case fastjson.TypeArray:
		items, _ := v.Array()
		vals := make([]any, len(items))
		for i, e := range items {
			vals[i] = jsValue(rt, e)
		}
		return rt.NewArray(vals...)
	case fastjson.TypeString:
		b, _ := v.StringBytes()
		return rt.ToValue(string(b))
	case fastjson.TypeNumber:
		return rt.ToValue(v.GetFloat64())
	case fastjson.TypeTrue:
		return rt.ToValue(true)
	case fastjson.TypeFalse:
		return rt.ToValue(false)
	default:
		return goja.Null()
	}
}
