// Package scaffold generates a new plugin project: `host plugin new`. A Go,
// Rust or C project (a projection on that language's SDK with native
// tests, shipped self tests, a fixture, a Makefile and a configuration for
// a local run) comes from the templates embedded here; an AssemblyScript
// project (an order projection with a shipped self test, a fixture, a
// Makefile and a configuration; no native tests) from these templates and
// the library files of the AssemblyScript order-summary example.
package scaffold

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	orderas "github.com/dynafold/dynafold/plugins/examples/order-summary-as"
)

//go:embed templates
var templates embed.FS

// The languages a project can be generated in.
const (
	LangGo             = "go"
	LangRust           = "rust"
	LangC              = "c"
	LangAssemblyScript = "assemblyscript"
)

// SDKModule is the module path of the Go SDK.
const SDKModule = "github.com/dynafold/dynafold"

// Options says what to generate.
type Options struct {
	Name string // the plugin's name: lower-case letters, digits and dashes, e.g. account-balance
	Lang string // LangGo (default), LangRust, LangC or LangAssemblyScript
	Dir  string // the project's directory; it must not exist or be empty
	// SDK is a local dynafold checkout: the Go project's go.mod replaces
	// the SDK module with it, the Rust project's Cargo.toml and the C
	// project's Makefile take their SDK from it; "" leaves that to be set
	// by hand.
	SDK string
	// Endpoint is the DynamoDB endpoint of the project's dynafold.json
	// (its README's ddblocal listens there); "" is DefaultEndpoint.
	Endpoint string
}

// DefaultEndpoint is where `host ddblocal` listens unless told otherwise.
const DefaultEndpoint = "http://127.0.0.1:8000"

// ErrExists: the target directory exists and is not empty.
var ErrExists = errors.New("the directory exists and is not empty")

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// internalRef matches the project's internal feature references in the
// example's texts, which a new project has no use for.
var internalRef = regexp.MustCompile(` \(SPEC [A-Z][0-9]+\)`)

// Generate writes the project and returns the files written, relative to
// o.Dir.
func Generate(o Options) ([]string, error) {
	if !nameRE.MatchString(o.Name) {
		return nil, fmt.Errorf("plugin name %q: use lower-case letters, digits and dashes, starting with a letter (e.g. account-balance)", o.Name)
	}
	if o.Dir == "" {
		o.Dir = o.Name
	}
	if entries, err := os.ReadDir(o.Dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("%s: %w: choose another --dir", o.Dir, ErrExists)
	}
	local, err := endpointLines(&o)
	if err != nil {
		return nil, err
	}
	var files map[string][]byte
	switch o.Lang {
	case "", LangGo:
		files, err = goFiles(o)
	case LangRust:
		files, err = rustFiles(o)
	case LangC:
		files, err = cFiles(o)
	case LangAssemblyScript:
		files, err = asFiles(o)
	default:
		return nil, fmt.Errorf("--lang %q: use go, rust, c or assemblyscript", o.Lang)
	}
	if err != nil {
		return nil, err
	}
	for _, f := range []string{"dynafold.json", "README.md"} {
		if b, ok := files[f]; ok {
			files[f] = []byte(local.Replace(string(b)))
		}
	}
	var written []string
	for name, b := range files {
		p := filepath.Join(o.Dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return nil, err
		}
		written = append(written, name)
	}
	return written, nil
}

// endpointLines checks o.Endpoint (setting the default) and returns what
// puts it in the configuration and the README's ddblocal command.
func endpointLines(o *Options) (*strings.Replacer, error) {
	if o.Endpoint == "" {
		o.Endpoint = DefaultEndpoint
	}
	u, err := url.Parse(o.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--endpoint %q: give the DynamoDB endpoint as a URL, e.g. http://127.0.0.1:8001", o.Endpoint)
	}
	quoted, err := json.Marshal(o.Endpoint)
	if err != nil {
		return nil, err
	}
	ddblocal := "host ddblocal &                                   # DynamoDB on 127.0.0.1:8000"
	if o.Endpoint != DefaultEndpoint {
		ddblocal = fmt.Sprintf("host ddblocal --addr %s &   # DynamoDB on %s, the endpoint of dynafold.json", u.Host, u.Host)
		if u.Scheme != "http" || u.Port() == "" {
			ddblocal = "# DynamoDB at " + o.Endpoint + " (the endpoint of dynafold.json) must be up"
		}
	}
	return strings.NewReplacer("__ENDPOINT__", string(quoted), "__DDBLOCAL__", ddblocal), nil
}

// Package returns the Go package name of a plugin name.
func Package(name string) string { return strings.ReplaceAll(name, "-", "") }

// Names are the names a Go project takes from its plugin's name, so that a
// project is named for what it folds: for "inventory", the stream
// "Inventory" with the events InventoryOpened, InventoryIncreased and
// InventoryDecreased, ids in "inventoryId" ("i-1"), rows of the Go type
// Inventory.
type Names struct {
	Stream   string // the stream and the events' prefix: the name in CamelCase ("account-balance": "AccountBalance")
	State    string // the Go type of a row's state: Stream, unless that names another of the project's identifiers
	IDField  string // the stream's composite: "inventoryId"
	IDPrefix string // the examples' stream ids start with it: "i" for i-1
}

// reserved are the identifiers the Go project declares besides its state.
var reserved = map[string]bool{"Projection": true, "Cases": true, "RowKey": true}

// NamesOf returns the names a Go project takes from a plugin name (see
// Names); name is valid (lower-case letters, digits and dashes).
func NamesOf(name string) Names {
	var camel strings.Builder
	for _, part := range strings.Split(name, "-") {
		if part != "" {
			camel.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	n := Names{Stream: camel.String(), State: camel.String(), IDPrefix: name[:1]}
	if reserved[n.State] || strings.HasSuffix(n.State, "Opened") {
		n.State += "State"
	}
	n.IDField = strings.ToLower(n.Stream[:1]) + n.Stream[1:] + "Id"
	return n
}

// checkout returns the absolute path of the dynafold checkout o.SDK, ""
// when none is given.
func checkout(o Options) (string, error) {
	if o.SDK == "" {
		return "", nil
	}
	abs, err := filepath.Abs(o.SDK)
	if err != nil {
		return "", err
	}
	if b, err := os.ReadFile(filepath.Join(abs, "go.mod")); err != nil || !strings.Contains(string(b), "module "+SDKModule+"\n") {
		return "", fmt.Errorf("--sdk %s: not a dynafold checkout (no go.mod of %s)", o.SDK, SDKModule)
	}
	return abs, nil
}

// render writes the templates of lang and the common ones through r;
// rename maps a template's name (without .tmpl) to the file's.
func render(lang string, r *strings.Replacer, rename map[string]string) (map[string][]byte, error) {
	out := map[string][]byte{}
	roots := []string{"templates/common", "templates/" + lang}
	if lang == LangGo || lang == LangAssemblyScript {
		// The Go project is named for its plugin (NamesOf), the
		// AssemblyScript one folds orders: each has a configuration and
		// fixture of its own; the Rust and C projects share the
		// account-balance ones of templates/common.
		roots = roots[1:]
	}
	for _, root := range roots {
		err := fs.WalkDir(templates, root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := templates.ReadFile(p)
			if err != nil {
				return err
			}
			name := strings.TrimSuffix(strings.TrimPrefix(p, root+"/"), ".tmpl")
			if name == "gitignore" {
				name = ".gitignore"
			}
			if to, ok := rename[name]; ok {
				name = to
			}
			out[name] = []byte(r.Replace(string(b)))
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func goFiles(o Options) (map[string][]byte, error) {
	replace := "// Point this at a dynafold checkout, or delete it and run\n// go get " + SDKModule + "@VERSION:\n// replace " + SDKModule + " => ../dynafold"
	abs, err := checkout(o)
	if err != nil {
		return nil, err
	}
	if abs != "" {
		replace = "// The SDK from a local checkout. To use a published version instead,\n// delete this line and run go get " + SDKModule + "@VERSION.\nreplace " + SDKModule + " => " + filepath.ToSlash(abs)
	}
	n := NamesOf(o.Name)
	return render(LangGo, strings.NewReplacer("__NAME__", o.Name, "__PACKAGE__", Package(o.Name), "__REPLACE__", replace,
		"__STATE__", n.State, "__A_TYPE__", article(n.Stream)+" "+n.Stream, "__TYPE__", n.Stream, "__IDFIELD__", n.IDField, "__ID__", n.IDPrefix), nil)
}

// article is "an" before a word that starts with a vowel, else "a".
func article(word string) string {
	if word != "" && strings.ContainsRune("AEIOUaeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

// rustFiles is a cargo project on the Rust SDK of the checkout.
func rustFiles(o Options) (map[string][]byte, error) {
	abs, err := checkout(o)
	if err != nil {
		return nil, err
	}
	sdk, note := "../dynafold/sdk-guest/rust", "# Point this at the Rust SDK of a dynafold checkout (sdk-guest/rust)."
	if abs != "" {
		sdk, note = filepath.ToSlash(filepath.Join(abs, "sdk-guest", "rust")), "# The Rust guest SDK, from the dynafold checkout this project was generated from."
	}
	return render(LangRust, strings.NewReplacer("__NAME__", o.Name, "__CRATE__", Ident(o.Name),
		"__SDK_RUST__", sdk, "__SDK_NOTE__", note), nil)
}

// cFiles is a C project on the C SDK of the checkout.
func cFiles(o Options) (map[string][]byte, error) {
	abs, err := checkout(o)
	if err != nil {
		return nil, err
	}
	sdk := "../dynafold/sdk-guest/c"
	if abs != "" {
		sdk = filepath.ToSlash(filepath.Join(abs, "sdk-guest", "c"))
	}
	id := Ident(o.Name)
	return render(LangC, strings.NewReplacer("__NAME__", o.Name, "__IDENT_UPPER__", strings.ToUpper(id), "__IDENT__", id, "__SDK_C__", sdk),
		map[string]string{"projection.c": id + ".c", "projection.h": id + ".h"})
}

// Ident returns the Rust crate and C identifier of a plugin name:
// account-balance → account_balance.
func Ident(name string) string { return strings.ReplaceAll(name, "-", "_") }

// asFiles is an AssemblyScript project: the library files of the
// order-summary example (the wire encoding, Extism input and output,
// decimals, the decision helpers) and its npm project, with the fold, the
// exports, the self test, the fixture, the Makefile and the configuration
// of templates/assemblyscript.
func asFiles(o Options) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := fs.WalkDir(orderas.Sources, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := orderas.Sources.ReadFile(p)
		if err != nil {
			return err
		}
		out[p] = b
		return nil
	})
	if err != nil {
		return nil, err
	}
	out["assembly/sdk.ts"] = []byte(strings.Replace(string(out["assembly/sdk.ts"]),
		"order-summary itself\n// needs none of it (one source, no effects, never removes); the test plugin\n// examples/tally.ts shows every piece.",
		"The scaffold's\n// evolve writes its applied, rejected and failed decisions with it.", 1))
	for _, f := range []string{"package.json", "package-lock.json"} {
		out[f] = []byte(strings.ReplaceAll(string(out[f]), `"order-summary-as"`, `"`+o.Name+`"`))
	}
	out["package.json"] = internalRef.ReplaceAll(out["package.json"], nil)
	cfg, err := asconfig(out["asconfig.json"], o.Name)
	if err != nil {
		return nil, err
	}
	out["asconfig.json"] = cfg
	own, err := render(LangAssemblyScript, strings.NewReplacer("__NAME__", o.Name), nil)
	if err != nil {
		return nil, err
	}
	for name, b := range own {
		out[name] = b
	}
	return out, nil
}

// asconfig points the example's release build at build/next/NAME.wasm,
// where `make wasm` checks it before it moves it to build/NAME.wasm, and
// its debug build at build/NAME.debug.wasm.
func asconfig(b []byte, name string) ([]byte, error) {
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("the example's asconfig.json: %w", err)
	}
	targets, _ := cfg["targets"].(map[string]any)
	for t, v := range targets {
		if m, ok := v.(map[string]any); ok {
			file := path.Join("next", name+".wasm")
			if t != "release" {
				file = name + "." + t + ".wasm"
			}
			m["outFile"] = path.Join("build", file)
		}
	}
	out, err := json.MarshalIndent(cfg, "", "  ")
	return append(out, '\n'), err
}
