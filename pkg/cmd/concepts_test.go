package cmd_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The CLI concepts every command shares have one home, pkg/cmdutil: the
// exit-code table (exit.go, docs/exit-codes.md), the y/N prompt with its
// terminal check (prompt.go) and the --dry-run flag (dryrun.go). A second
// copy elsewhere drifts (3 meant different things in three tables; a pipe
// answered migrate's own prompt but never fix's), so this test fails on one:
// an exit code given as a number or a second name for one of cmdutil's, a
// "[y/N]" question, or a --dry-run flag registered by hand, in any package
// but cmdutil.
func TestCLIConceptsLiveInCmdutil(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "cmdutil" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if !strings.HasPrefix(strings.ToLower(name.Name), "exit") || i >= len(n.Values) {
						continue
					}
					switch v := n.Values[i].(type) {
					case *ast.BasicLit:
						if v.Kind == token.INT {
							t.Errorf("%s: exit code %s = %s: name cmdutil's code instead", fset.Position(name.Pos()), name.Name, v.Value)
						}
					case *ast.SelectorExpr:
						if id, ok := v.X.(*ast.Ident); ok && id.Name == "cmdutil" && strings.HasPrefix(v.Sel.Name, "Exit") {
							t.Errorf("%s: %s, a second name for cmdutil.%s: use cmdutil's", fset.Position(name.Pos()), name.Name, v.Sel.Name)
						}
					}
				}
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && strings.Contains(s, "[y/N]") {
					t.Errorf("%s: a y/N question of its own: use cmdutil.Prompt", fset.Position(n.Pos()))
				}
			case *ast.CallExpr:
				for _, a := range n.Args {
					if lit, ok := a.(*ast.BasicLit); ok && lit.Value == `"dry-run"` {
						if sel, ok := n.Fun.(*ast.SelectorExpr); ok && strings.HasSuffix(sel.Sel.Name, "Var") {
							t.Errorf("%s: --dry-run registered by hand: use cmdutil.AddDryRunFlag", fset.Position(n.Pos()))
						}
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
}
