package main

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
)

// The TypeScript types of the JSON the server sends are generated from the
// Go structs that encoding/json marshals, by reflection: the generator sees
// exactly what the encoder sees (json tags, omitempty, embedded structs,
// pointers), so the two cannot disagree. The rules:
//
//   - a named struct becomes an interface with its Go name (or its root's
//     Name), an anonymous struct an inline object type;
//   - `json:"-"` and unexported fields are left out; an embedded struct
//     without a json name has its fields promoted, as encoding/json does;
//   - omitempty makes the field optional (`name?: T`): it may be absent;
//   - a pointer is `T | null` (encoding/json writes null for nil);
//   - a slice or array is `T[]`: the server sends [] for empty lists
//     (a nil slice would be null, which the loaders avoid);
//   - time.Time is string (RFC 3339), a map is Record<K, V>, any is unknown;
//   - a `tstype:"..."` tag replaces the field's type where TypeScript knows
//     more than Go (a union of the strings a field can hold).
//
// A type with its own MarshalJSON cannot be read this way: the generator
// refuses it unless a tstype tag says what it sends.

// tsUnion is a union of string literals: a Go string that only ever holds
// the listed values (a role, a status).
type tsUnion struct {
	Name   string
	Values []string
}

// tsRoot is a type the generator starts from: Name, when set, is the
// interface's name in TypeScript (Go's name otherwise).
type tsRoot struct {
	Name  string
	Value any
}

type tsGen struct {
	names   map[reflect.Type]string // TypeScript name of each named struct
	byName  map[string]reflect.Type
	pending []reflect.Type
	decls   map[string]string
}

// generateTypeScript returns the declarations of unions and of every struct
// reachable from roots, sorted by name so the output is stable.
func generateTypeScript(header string, unions []tsUnion, roots []tsRoot) (string, error) {
	g := &tsGen{names: map[reflect.Type]string{}, byName: map[string]reflect.Type{}, decls: map[string]string{}}
	for _, r := range roots {
		t := reflect.TypeOf(r.Value)
		if t.Kind() != reflect.Struct {
			return "", fmt.Errorf("root %v is not a struct", t)
		}
		name := r.Name
		if name == "" {
			name = t.Name()
		}
		if err := g.name(t, name); err != nil {
			return "", err
		}
	}
	for len(g.pending) > 0 {
		t := g.pending[0]
		g.pending = g.pending[1:]
		body, err := g.object(t, "")
		if err != nil {
			return "", fmt.Errorf("%s: %w", g.names[t], err)
		}
		g.decls[g.names[t]] = fmt.Sprintf("// %s is %s.\nexport interface %s %s\n", g.names[t], t.String(), g.names[t], body)
	}
	for _, u := range unions {
		if _, taken := g.decls[u.Name]; taken {
			return "", fmt.Errorf("union %s has the name of a struct", u.Name)
		}
		quoted := make([]string, len(u.Values))
		for i, v := range u.Values {
			quoted[i] = jsonString(v)
		}
		g.decls[u.Name] = fmt.Sprintf("export type %s = %s;\n", u.Name, strings.Join(quoted, " | "))
	}
	names := make([]string, 0, len(g.decls))
	for n := range g.decls {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(header)
	for _, n := range names {
		b.WriteString("\n")
		b.WriteString(g.decls[n])
	}
	return b.String(), nil
}

// name gives the named struct t its TypeScript name and queues its
// declaration; two Go types may not share a name.
func (g *tsGen) name(t reflect.Type, name string) error {
	if have, ok := g.names[t]; ok {
		if have != name {
			return fmt.Errorf("%v is named both %s and %s", t, have, name)
		}
		return nil
	}
	if other, ok := g.byName[name]; ok {
		return fmt.Errorf("%v and %v would both be %s: give one a name in the roots", t, other, name)
	}
	g.names[t], g.byName[name] = name, t
	g.pending = append(g.pending, t)
	return nil
}

var (
	timeType      = reflect.TypeOf(time.Time{})
	marshalerType = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
	textType      = reflect.TypeOf((*encoding.TextMarshaler)(nil)).Elem()
)

type tsField struct {
	name, typ string
	optional  bool
}

// object is the `{ ... }` body of struct t; indent is the depth of nesting.
func (g *tsGen) object(t reflect.Type, indent string) (string, error) {
	fields, err := g.fields(t)
	if err != nil {
		return "", err
	}
	if len(fields) == 0 {
		return "{}", nil
	}
	var b strings.Builder
	b.WriteString("{\n")
	for _, f := range fields {
		opt := ""
		if f.optional {
			opt = "?"
		}
		key := f.name
		if !isIdentifier(key) {
			key = jsonString(key)
		}
		fmt.Fprintf(&b, "%s  %s%s: %s;\n", indent, key, opt, strings.ReplaceAll(f.typ, "\n", "\n  "))
	}
	b.WriteString(indent + "}")
	return b.String(), nil
}

// fields lists the JSON members of struct t in encoding/json's order, with
// embedded structs promoted in place; a shallower field wins a name, as in
// Go (encoding/json drops a name two fields share at the same depth).
func (g *tsGen) fields(t reflect.Type) ([]tsField, error) {
	type candidate struct {
		tsField
		depth int
	}
	var all []candidate
	var walk func(t reflect.Type, depth int) error
	walk = func(t reflect.Type, depth int) error {
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			ft := sf.Type
			if sf.Anonymous && name == "" {
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					if err := walk(ft, depth+1); err != nil {
						return err
					}
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			f := tsField{name: name, optional: hasOption(opts, "omitempty") || hasOption(opts, "omitzero")}
			if override, ok := sf.Tag.Lookup("tstype"); ok {
				f.typ = override
			} else if hasOption(opts, "string") {
				f.typ = "string"
			} else {
				typ, err := g.typeOf(ft, f.optional)
				if err != nil {
					return fmt.Errorf("field %s: %w", sf.Name, err)
				}
				f.typ = typ
			}
			all = append(all, candidate{f, depth})
		}
		return nil
	}
	if err := walk(t, 0); err != nil {
		return nil, err
	}
	shallowest := map[string]int{}
	count := map[[2]any]int{}
	for _, c := range all {
		if d, ok := shallowest[c.name]; !ok || c.depth < d {
			shallowest[c.name] = c.depth
		}
		count[[2]any{c.name, c.depth}]++
	}
	var out []tsField
	for _, c := range all {
		if c.depth == shallowest[c.name] && count[[2]any{c.name, c.depth}] == 1 {
			out = append(out, c.tsField)
		}
	}
	return out, nil
}

// typeOf is the TypeScript type of Go type t. optional says the field is
// left out when empty, so a nil pointer never reaches the JSON as null.
func (g *tsGen) typeOf(t reflect.Type, optional bool) (string, error) {
	if t == timeType {
		return "string", nil
	}
	if t.Kind() == reflect.Pointer {
		if t.Elem() == timeType {
			return nullable("string", optional), nil
		}
		inner, err := g.typeOf(t.Elem(), false)
		if err != nil {
			return "", err
		}
		return nullable(inner, optional), nil
	}
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) ||
		t.Implements(textType) || reflect.PointerTo(t).Implements(textType) {
		return "", fmt.Errorf("%v marshals itself: give the field a tstype tag", t)
	}
	switch t.Kind() {
	case reflect.String:
		return "string", nil
	case reflect.Bool:
		return "boolean", nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number", nil
	case reflect.Interface:
		return "unknown", nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "string", nil // base64
		}
		inner, err := g.typeOf(t.Elem(), false)
		if err != nil {
			return "", err
		}
		if strings.ContainsAny(inner, " |") {
			inner = "(" + inner + ")"
		}
		return inner + "[]", nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return "", fmt.Errorf("map key %v: only string keys", t.Key())
		}
		inner, err := g.typeOf(t.Elem(), false)
		if err != nil {
			return "", err
		}
		return "Record<string, " + inner + ">", nil
	case reflect.Struct:
		if t.Name() == "" {
			return g.object(t, "")
		}
		name, ok := g.names[t]
		if !ok {
			name = t.Name()
			if err := g.name(t, name); err != nil {
				return "", err
			}
		}
		return name, nil
	}
	return "", fmt.Errorf("no TypeScript type for %v", t)
}

func nullable(typ string, optional bool) string {
	if optional {
		return typ
	}
	return typ + " | null"
}

func hasOption(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

func isIdentifier(s string) bool {
	for i, r := range s {
		if !(r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
