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

const pluginNewUsage = `usage: host plugin new NAME [--lang go|assemblyscript] [--dir DIR] [--sdk DIR]

Generates a plugin project that builds and passes its tests, named for
NAME: for "inventory", a Go projection of the stream Inventory (events
InventoryOpened, InventoryIncreased, InventoryDecreased; ids in inventoryId)
into one row per Inventory with an exact running total, on the SDK, with
native tests (guesttest), test cases shipped in the module as its self test,
a fixture for 'host plugin test', a Makefile, and a dynafold.json that runs
it on a local ddblocal with 'host run' (its sidecar section) or 'host
catchup'. Replace the state, events and evolve with your domain's. With
--lang assemblyscript: a project started from the order-summary example.

Example:
  host plugin new inventory --sdk ~/src/dynafold
  cd inventory && go mod tidy && make test wasm validate fixture

Flags:`

func runPluginNew(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("plugin new", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), pluginNewUsage)
		fs.PrintDefaults()
	}
	lang := fs.String("lang", scaffold.LangGo, "the plugin's language: go or assemblyscript")
	dir := fs.String("dir", "", "the project's directory (default: ./NAME); it must not exist or be empty")
	sdk := fs.String("sdk", "", "a dynafold checkout for the Go project's go.mod to use as the SDK (default: the checkout around the current directory, if any)")
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
	if *sdk == "" && *lang == scaffold.LangGo {
		*sdk = findCheckout()
	}
	files, err := scaffold.Generate(scaffold.Options{Name: name, Lang: *lang, Dir: *dir, SDK: *sdk})
	if err != nil {
		return err
	}
	sort.Strings(files)
	fmt.Fprintf(pluginOut, "created %s (%s):\n  %s\n\nnext:\n  cd %s\n", *dir, langName(*lang), strings.Join(files, "\n  "), *dir)
	if *lang == scaffold.LangAssemblyScript {
		fmt.Fprintln(pluginOut, "  make wasm validate fixture   # npm ci, build, check with the host")
		return nil
	}
	if *sdk == "" {
		fmt.Fprintln(pluginOut, "  # no dynafold checkout found: edit the replace line in go.mod (or pass --sdk DIR)")
	}
	fmt.Fprintln(pluginOut, "  go mod tidy\n  make test wasm validate fixture   # native tests, build, check with the host")
	fmt.Fprintln(pluginOut, "then run it: see \"Run it\" in its README.md (host ddblocal, host tables create, host run)")
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
