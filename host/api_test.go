package host_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestAPI_PublicSignaturesNameNoInternalPackage reads every public package
// of the module (host and its public sub-packages, ddblocal, abi, sdk-guest)
// and fails on an exported name whose signature, fields or definition use a
// type from an internal package: what a library user would see in go doc
// but could not import.
func TestAPI_PublicSignaturesNameNoInternalPackage(t *testing.T) {
	root := filepath.Join("..")
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		switch d.Name() {
		case "internal", "testdata", "cmd", "plugins", ".git", "node_modules", ".cache", "build":
			return filepath.SkipDir
		}
		dirs = append(dirs, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, dir := range dirs {
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, pkg := range pkgs {
			if pkg.Name == "main" {
				continue
			}
			for name, f := range pkg.Files {
				checked++
				for _, leak := range internalUses(f) {
					t.Errorf("%s: exported %s uses %s, from an internal package", name, leak.decl, leak.ref)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d files checked: the walk missed the module", checked)
	}
}

type leak struct{ decl, ref string }

// internalUses returns the exported declarations of f that mention a
// package imported from an .../internal/... path.
func internalUses(f *ast.File) []leak {
	internal := map[string]string{}
	for _, im := range f.Imports {
		path, _ := strconv.Unquote(im.Path.Value)
		if !strings.Contains(path, "/internal/") && !strings.HasSuffix(path, "/internal") {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if im.Name != nil {
			name = im.Name.Name
		}
		internal[name] = path
	}
	if len(internal) == 0 {
		return nil
	}
	var out []leak
	scan := func(decl string, n ast.Node) {
		if n == nil {
			return
		}
		ast.Inspect(n, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && internal[id.Name] != "" {
					out = append(out, leak{decl, internal[id.Name] + "." + sel.Sel.Name})
				}
			}
			return true
		})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || (d.Recv != nil && !exportedRecv(d.Recv)) {
				continue
			}
			scan(d.Name.Name, d.Type)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				ts, ok := s.(*ast.TypeSpec)
				if !ok || !ts.Name.IsExported() {
					continue
				}
				if st, ok := ts.Type.(*ast.StructType); ok {
					for _, fld := range st.Fields.List {
						if len(fld.Names) == 0 || fld.Names[0].IsExported() {
							scan(ts.Name.Name+" field", fld.Type)
						}
					}
					continue
				}
				if it, ok := ts.Type.(*ast.InterfaceType); ok {
					scan(ts.Name.Name, it)
					continue
				}
				scan(ts.Name.Name, ts.Type)
			}
		}
	}
	return out
}

func exportedRecv(r *ast.FieldList) bool {
	t := r.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}
