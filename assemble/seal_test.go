package assemble

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"marquee/render"
	"marquee/store"
)

// The store is sealed: what New was given is all it ever holds, so no
// caller can change a field under the server (the server used to write
// the platform fee and the media URL into the store it was handed, and
// tests swapped its Redis after the server had chosen its rate limiter).
func TestStorageHasNoExportedFields(t *testing.T) {
	typ := reflect.TypeOf((*store.Storage)(nil)).Elem()
	for i := 0; i < typ.NumField(); i++ {
		if f := typ.Field(i); f.IsExported() {
			t.Errorf("store.Storage.%s is exported: give it to store.New in store.Options and read it through a method", f.Name)
		}
	}
}

// builders are the constructors of the product's parts that only this
// package calls outside tests (and outside the part's own package), each
// named as package path, then function or type.
var builders = [][2]string{
	{"marquee/store", "New"},
	{"marquee/server", "New"},
	{"marquee/server/jobs", "New"},
	{"marquee/server/push", "Sender"},
	{"marquee/render", "New"},
}

// buildersElsewhere are the calls of builders outside this package that
// are not the product being put together, each with why.
var buildersElsewhere = map[string]string{
	// The benchmark's "before" column runs another checkout's binary on
	// its own database, which this checkout must not migrate: the session
	// its visitor uses is made on that database as it is.
	"scripts/benchmark/main.go store.New": "another checkout's database",
	// A server or a job queue built in a test of its own package, without
	// a sender, makes one for itself; the assembly always passes its one.
	"server/server.go push.Sender":        "a server built without the assembly's sender (tests)",
	"server/jobs/registry.go push.Sender": "a job queue built without the assembly's sender (tests)",
}

// The assembly is the one place the product is put together: serve, the
// CLI, the scripts and the benchmarks open it here rather than building a
// store, a server, a job queue, a push sender or a renderer by hand, so
// there is one way the parts are wired (one push sender, the store's
// options from the configuration).
func TestOnlyTheAssemblyBuildsTheParts(t *testing.T) {
	root, err := render.ProjectRoot()
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if name := d.Name(); name == "node_modules" || name == "testdata" || (strings.HasPrefix(name, ".") && rel != ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		dir := path.Dir(rel)
		if dir == "assemble" {
			return nil
		}
		file, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		names := map[string]string{} // local import name -> package path
		for _, imp := range file.Imports {
			pkg, _ := strconv.Unquote(imp.Path.Value)
			name := path.Base(pkg)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			names[name] = pkg
		}
		ast.Inspect(file, func(n ast.Node) bool {
			// A call of a constructor, or a literal of a type.
			var built ast.Expr
			switch n := n.(type) {
			case *ast.CallExpr:
				built = n.Fun
			case *ast.CompositeLit:
				built = n.Type
			}
			sel, ok := built.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			id, ok := sel.X.(*ast.Ident)
			if !ok {
				return true
			}
			pkg := names[id.Name]
			for _, b := range builders {
				if pkg == b[0] && sel.Sel.Name == b[1] && "marquee/"+dir != pkg {
					key := rel + " " + id.Name + "." + sel.Sel.Name
					if _, ok := buildersElsewhere[key]; !ok {
						found = append(found, key+" ("+fset.Position(sel.Pos()).String()+")")
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(found)
	for _, f := range found {
		t.Errorf("%s: the product's parts are built in package assemble (Open, Renderer, Server, Jobs)", f)
	}
}
