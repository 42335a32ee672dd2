package scaffold

import (
	"os"
	"path/filepath"
	"regexp"
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

// TestH6_PluginNewIsNamedForItsName: `plugin new inventory` folds an
// Inventory stream (it generated the account-balance domain whatever the
// name), its comments name files that exist, and its configuration has the
// sidecar section `host run` needs.
func TestH6_PluginNewIsNamedForItsName(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "inventory")
	files, err := Generate(Options{Name: "inventory", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	read := func(f string) string {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for f, wants := range map[string][]string{
		"projection.go": {"type Inventory struct", `Stream:     "Inventory"`, `"InventoryOpened", "InventoryIncreased", "InventoryDecreased"`, `ddb:"inventoryId"`},
		"cases.go":      {`guesttest.Event("Inventory", "i-1", 1, "InventoryOpened"`, "(projection_test.go)"},
		"dynafold.json": {`"name": "Inventory"`, `"composite": ["inventoryId"]`, `"sidecar": { "leaseTable": "inventory-leases" }`,
			`"hotSwap": { "watch": true, "archive": "build/archive" }`},
		"testdata/events.json": {`"stream": "Inventory", "streamId": "i-1"`},
		"README.md":            {"host run --config dynafold.json", "--stream Inventory --id i-1 --type InventoryOpened"},
	} {
		s := read(f)
		for _, want := range wants {
			if !strings.Contains(s, want) {
				t.Errorf("%s lacks %q", f, want)
			}
		}
	}
	have := map[string]bool{}
	for _, f := range files {
		have[f] = true
		if s := read(f); strings.Contains(s, "Account") || strings.Contains(s, "account") {
			t.Errorf("%s still names the account-balance domain", f)
		}
	}
	// Every Go file a generated file mentions exists.
	goFile := regexp.MustCompile(`[a-z_]+(?:_test)?\.go\b`)
	for _, f := range files {
		for _, m := range goFile.FindAllString(read(f), -1) {
			if m != "main.go" && !have[m] && !have["wasm/"+m] {
				t.Errorf("%s names %s, which the project does not have", f, m)
			}
		}
	}
	for name, want := range map[string]Names{
		"account-balance": {Stream: "AccountBalance", State: "AccountBalance", IDField: "accountBalanceId", IDPrefix: "a"},
		"projection":      {Stream: "Projection", State: "ProjectionState", IDField: "projectionId", IDPrefix: "p"},
		"x2":              {Stream: "X2", State: "X2", IDField: "x2Id", IDPrefix: "x"},
	} {
		if got := NamesOf(name); got != want {
			t.Errorf("NamesOf(%q) = %+v, want %+v", name, got, want)
		}
	}
}

// The Go scaffold's comments take the article their stream name needs.
func TestH6_ScaffoldCommentsUseTheRightArticle(t *testing.T) {
	for name, want := range map[string][]string{
		"inventory": {"the data of an InventoryOpened event", "the key of an Inventory's row"},
		"bank":      {"the data of a BankOpened event", "the key of a Bank's row"},
	} {
		dir := filepath.Join(t.TempDir(), name)
		if _, err := Generate(Options{Name: name, Lang: LangGo, Dir: dir}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "projection.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s: projection.go lacks %q", name, w)
			}
		}
	}
}

// TestH2_AssemblyScriptScaffoldChecksItsBuild: the AssemblyScript project
// has what the Go one has as far as AssemblyScript allows: a self test
// export and its cases, a fixture whose last event is rejected, a
// dynafold.json that watches and archives the module with the fixture as
// its smoke test, a release build into build/next/ that make checks before
// it moves it to the watched file; its names are encoded from strings,
// and evolve asks isTerminal.
func TestH2_AssemblyScriptScaffoldChecksItsBuild(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tally")
	if _, err := Generate(Options{Name: "tally", Lang: LangAssemblyScript, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	read := func(f string) string {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for f, wants := range map[string][]string{
		"assembly/index.ts": {"export function self_test(): i32", `out.strAscii("self_test");`, "if (isTerminal(errTag))",
			"writeError(out, REJECTED, errTag, errMsg)", "isTerminal(String.UTF8.decodeUnsafe(tp, tl))"},
		"assembly/fold.ts":  {`export const NAME = "tally";`, `attr("orderId", KIND_S)`, "export function isTerminal(tag: string): bool"},
		"assembly/cases.ts": {"export function selfTest(): string[]", `"applied, applied, rejected: AlreadyShipped"`},
		"assembly/names.ts": {"export function attr(name: string, kind: u8 = 0): Bytes"},
		"dynafold.json": {`"plugin": "build/tally.wasm"`, `"watch": true`, `"archive": "build/archive"`,
			`"fixture": { "events": "testdata/events.json", "rows": "testdata/rows.json" }`, `"sidecar": { "leaseTable": "tally-leases" }`},
		"asconfig.json":        {`"outFile": "build/next/tally.wasm"`},
		"Makefile":             {"$(HOST) plugin validate $(NEXT)", "mv -f $(NEXT) $(WASM)", "--decisions"},
		"testdata/events.json": {`"version": 6, "type": "ItemAdded"`},
		"README.md":            {"isTerminal", "self test", "host run --config dynafold.json"},
	} {
		s := read(f)
		for _, want := range wants {
			if !strings.Contains(s, want) {
				t.Errorf("%s lacks %q", f, want)
			}
		}
	}
	if strings.Contains(read("assembly/sdk.ts"), "tally.ts") {
		t.Error("assembly/sdk.ts points at the example's test plugin, which the project lacks")
	}
	// No attribute name is encoded by hand.
	for _, f := range []string{"assembly/fold.ts", "assembly/index.ts", "assembly/cases.ts"} {
		if m := regexp.MustCompile(`"\\x[0-9a-f]{2}[a-zA-Z]`).FindString(read(f)); m != "" {
			t.Errorf("%s encodes a name by hand: %s", f, m)
		}
	}
}
