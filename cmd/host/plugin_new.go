package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dynafold/dynafold/internal/scaffold"
)

const pluginNewUsage = `usage: host plugin new NAME [--lang go|rust|c|assemblyscript] [--dir DIR] [--sdk DIR] [--endpoint URL]

Generates a plugin project that builds and passes its tests: a projection
with test cases shipped in the module as its self test, a fixture for 'host
plugin test', a Makefile, and a dynafold.json that runs it on a local
ddblocal with 'host run' (its sidecar section) or 'host catchup', watching
the module for hot swaps. Its stream lists the plugin's event types, so
'host append' refuses a misspelled one instead of storing an event the
projection never folds; a new event type goes into both. The Go, Rust and C projects are on their guest
SDK and run their cases natively too; the AssemblyScript one (Extism PDK)
folds an Order stream into one row per order, and its 'make wasm' moves a
build to the watched file only once the host validated it and folded the
fixture. The Go project is named for NAME:
for "inventory", a projection of the stream Inventory (events
InventoryOpened, InventoryIncreased, InventoryDecreased; ids in inventoryId)
into one row per Inventory with an exact running total; the Rust and C
projects fold an Account stream into balances. Replace the state, events
and evolve with your domain's. The Go, Rust and C projects take their SDK
from a dynafold checkout (--sdk, default: the one around the current
directory).

Rust needs cargo and rustc for wasm32-wasi (Debian/Ubuntu: apt-get install
rustc cargo libstd-rust-dev-wasm32; elsewhere: rustup target add
wasm32-wasip1); C needs clang for wasm32-wasi (apt-get install clang lld
wasi-libc libclang-rt-dev-wasm32; elsewhere: wasi-sdk); AssemblyScript
needs Node.js 20 with npm (make wasm runs npm ci) and the host command on
PATH (or make HOST=...).

Examples:
  host plugin new inventory --sdk ~/src/dynafold
  cd inventory && go mod tidy && make test wasm validate fixture

  host plugin new account-balance --lang rust --sdk ~/src/dynafold
  cd account-balance && make test wasm validate fixture

  host plugin new orders --lang assemblyscript
  cd orders && make wasm validate fixture

Flags:`

func runPluginNew(ctx context.Context, args []string) error {
	out := stdoutOf(ctx)
	fs := flag.NewFlagSet("plugin new", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), pluginNewUsage)
		fs.PrintDefaults()
	}
	lang := fs.String("lang", scaffold.LangGo, "the plugin's language: go, rust, c or assemblyscript")
	dir := fs.String("dir", "", "the project's directory (default: ./NAME); it must not exist or be empty")
	sdk := fs.String("sdk", "", "a dynafold checkout whose SDK the Go, Rust or C project uses (default: the checkout around the current directory, if any)")
	endpoint := fs.String("endpoint", scaffold.DefaultEndpoint, "the DynamoDB endpoint of the generated dynafold.json, e.g. http://127.0.0.1:8001 when port 8000 is taken (start ddblocal there with host ddblocal --addr 127.0.0.1:8001)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fs.Usage()
		return fmt.Errorf("one plugin NAME is required, e.g. host plugin new account-balance")
	}
	name := pos[0]
	if *dir == "" {
		*dir = name
	}
	if *sdk == "" && *lang != scaffold.LangAssemblyScript {
		*sdk = findCheckout()
	}
	files, err := scaffold.Generate(scaffold.Options{Name: name, Lang: *lang, Dir: *dir, SDK: *sdk, Endpoint: *endpoint})
	if err != nil {
		return err
	}
	sort.Strings(files)
	fmt.Fprintf(out, "created %s (%s):\n  %s\n\nnext:\n  cd %s\n", *dir, langName(*lang), strings.Join(files, "\n  "), *dir)
	switch *lang {
	case scaffold.LangAssemblyScript:
		fmt.Fprintln(out, "  make wasm validate fixture   # npm ci, build, self test and fixture, then the watched build/"+name+".wasm")
		fmt.Fprintln(out, "then run it: see \"Run it\" in its README.md (host ddblocal, host tables create, host run)")
		return nil
	case scaffold.LangRust, scaffold.LangC:
		if *sdk == "" {
			fmt.Fprintf(out, "  # no dynafold checkout found: point %s at its SDK (sdk-guest/%s), or pass --sdk DIR\n",
				map[string]string{scaffold.LangRust: "Cargo.toml", scaffold.LangC: "DYNAFOLD_C in the Makefile"}[*lang], *lang)
		}
		fmt.Fprintln(out, "  make test wasm validate fixture   # native tests, build, check with the host")
		return nil
	}
	if *sdk == "" {
		fmt.Fprintln(out, "  # no dynafold checkout found: edit the replace line in go.mod (or pass --sdk DIR)")
	}
	fmt.Fprintln(out, "  go mod tidy\n  make test wasm validate fixture   # native tests, build, check with the host")
	fmt.Fprintln(out, "then run it: see \"Run it\" in its README.md (host ddblocal, host tables create, host run)")
	return nil
}

func langName(l string) string {
	if l == "" {
		return scaffold.LangGo
	}
	return l
}

// findCheckout returns the dynafold checkout around the current directory,
// or "".
func findCheckout() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module "+scaffold.SDKModule+"\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
