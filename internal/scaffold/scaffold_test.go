package scaffold

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestH2_ScaffoldNamesTheProjectEverywhere: the generated files carry the
// plugin's name and package, no template placeholder and no internal
// feature reference survives, in both languages.
func TestH2_ScaffoldNamesTheProjectEverywhere(t *testing.T) {
	for _, lang := range []string{LangGo, LangRust, LangC, LangAssemblyScript} {
		dir := filepath.Join(t.TempDir(), "p")
		files, err := Generate(Options{Name: "shop-totals", Lang: lang, Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		named := 0
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			s := string(b)
			if strings.Contains(s, "__NAME__") || strings.Contains(s, "__PACKAGE__") || strings.Contains(s, "__REPLACE__") {
				t.Errorf("%s %s: a placeholder is left", lang, f)
			}
			if strings.Contains(s, "SPEC ") {
				t.Errorf("%s %s: an internal reference is left", lang, f)
			}
			if strings.Contains(s, "shop-totals") {
				named++
			}
		}
		if named < 3 {
			t.Errorf("%s: only %d files name the plugin", lang, named)
		}
	}
	if _, err := Generate(Options{Name: "x", Lang: "cobol", Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "use go, rust, c or assemblyscript") {
		t.Errorf("an unknown language: %v", err)
	}
	for _, lang := range []string{LangGo, LangRust, LangC} {
		if _, err := Generate(Options{Name: "x", Lang: lang, Dir: t.TempDir(), SDK: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "not a dynafold checkout") {
			t.Errorf("%s: an --sdk that is no checkout: %v", lang, err)
		}
	}
}
