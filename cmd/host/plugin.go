package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/plugin"
	"github.com/dynafold/dynafold/host/plugin/extism/transport"
	"github.com/dynafold/dynafold/host/swap"
	"github.com/dynafold/dynafold/internal/ddbjson"
	"github.com/dynafold/dynafold/internal/wasmcache"
)

// pluginCommands are the subcommands of `host plugin`.
var pluginCommands = []command{
	{"precompile", "compile plugins into a compilation-cache directory that ships beside the binary (--cache DIR, FILE... or --config F)", runPluginPrecompile},
	{"validate", "check a module against the ABI and print what describe says (FILE)", runPluginValidate},
	{"test", "fold fixture events through a plugin and compare the rows, no DynamoDB (FILE --events F [--expect F] [--decisions])", runPluginTest},
	{"new", "generate a plugin project that builds and passes its tests (NAME [--lang go|rust|c|assemblyscript] [--dir DIR])", runPluginNew},
}

func init() {
	commands = append(commands, command{"plugin", "plugin tools: new (a plugin project), precompile, validate, test, promote, rollback", runPlugin})
}

// errTestFailed is returned by `host plugin test` when the rows differ.
var errTestFailed = errors.New("the rows differ from the expected ones")

func runPlugin(ctx context.Context, args []string) error {
	if len(args) > 0 && isHelp(args[0]) {
		pluginUsage(os.Stdout)
		return flag.ErrHelp
	}
	if len(args) > 0 {
		for _, c := range pluginCommands {
			if c.name == args[0] {
				return c.run(ctx, args[1:])
			}
		}
	}
	pluginUsage(os.Stderr)
	if len(args) == 0 {
		return errors.New("no plugin command given")
	}
	return fmt.Errorf("unknown plugin command %q", args[0])
}

func pluginUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: host plugin <command> [flags]\n\ncommands:")
	for _, c := range pluginCommands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.usage)
	}
}

// parseInterspersed parses flags that may come after positional arguments
// ("validate FILE --json").
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// precompileUsage is the help of `host plugin precompile`.
const precompileUsage = `usage: host plugin precompile (--cache DIR FILE... | --config F) [--key-file F] [--memory-pages N]

Compiles each module into DIR for this host binary's wazero version, CPU
architecture and OS, as a later load would, so that hosts skip compiling it
(a Lambda zip or a container image ships DIR read-only).

Compiled code is native code the host runs, so DIR is verified, not
trusted. For each module precompile writes a manifest listing its compiled
code with the size and a keyed digest (AES-GMAC) of each file, and the
manifest is authenticated (HMAC-SHA256) with the cache key. A host checks
the manifest and every file before it uses them; code changed after
precompile, or written with another key, is refused with a warning and the
module compiles in memory. The key is --key-file, else $DYNAFOLD_CACHE_KEY,
else DIR/dynafold-cache.key, generated (0600) when missing.

By default that key file ships inside DIR: the deployment package is then
the unit of trust, as for the binary beside it, and the key must be
readable by the host's user (a Lambda function runs as another user than
the one that built its zip). To verify a cache built or stored apart from
the package, give precompile and the hosts the same key from outside DIR
($DYNAFOLD_CACHE_KEY, or plugins.cacheKeyFile) and leave the key file out.

DIR and the key file must be owned by this user (or root) and not writable
by group or others (chmod 700 DIR).

Flags:`

func runPluginPrecompile(ctx context.Context, args []string) error {
	out := stdoutOf(ctx)
	fs := flag.NewFlagSet("plugin precompile", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), precompileUsage)
		fs.PrintDefaults()
	}
	cache := fs.String("cache", "", "compilation-cache directory to fill (default: the configuration's plugins.cacheDir)")
	cfgPath := fs.String("config", "", "precompile every projection's plugin of this configuration")
	keyFile := fs.String("key-file", "", "file holding the cache key (default: the configuration's plugins.cacheKeyFile, else $"+wasmcache.KeyEnv+", else DIR/"+wasmcache.KeyFileName+", generated when missing)")
	pages := fs.Uint("memory-pages", 0, "memory limit in 64 KiB pages, as the host will load the plugins (default: the configuration's, else 512)")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	limit := uint32(*pages)
	if *cfgPath != "" {
		cfg, err := host.LoadConfig(*cfgPath)
		if err != nil {
			return err
		}
		dir := filepath.Dir(*cfgPath)
		for _, p := range cfg.Projections {
			if !strings.HasPrefix(p.Plugin, "native:") {
				files = append(files, relTo(dir, p.Plugin))
			}
		}
		if *cache == "" && cfg.Plugins.CacheDir != "" {
			*cache = relTo(dir, cfg.Plugins.CacheDir)
		}
		if *keyFile == "" && cfg.Plugins.CacheKeyFile != "" {
			*keyFile = relTo(dir, cfg.Plugins.CacheKeyFile)
		}
		if limit == 0 {
			limit = cfg.Plugins.MemoryLimitPages
		}
	}
	if *cache == "" {
		return fmt.Errorf("--cache is required (or a --config with plugins.cacheDir)")
	}
	if len(files) == 0 {
		return fmt.Errorf("no module to precompile: name .wasm files or a --config")
	}
	if err := os.MkdirAll(*cache, 0o700); err != nil {
		return err
	}
	for _, f := range files {
		wasm, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		start := time.Now()
		if err := transport.Precompile(ctx, wasm, plugin.Config{CacheDir: *cache, CacheKeyFile: *keyFile, MemoryLimitPages: limit}); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		c := swap.Candidate{Wasm: wasm}
		fmt.Fprintf(out, "%s sha256:%s compiled into %s in %s\n", f, c.SHA256(), *cache, time.Since(start).Round(time.Millisecond))
	}
	if err := readableByAll(*cache); err != nil {
		return err
	}
	// wazero compiles to this machine's code: the cache serves hosts of the
	// same OS and architecture (and wazero version) only.
	fmt.Fprintf(out, "the cache serves %s/%s hosts; for another target, run a host binary built for it (e.g. GOARCH=arm64 for Graviton)\n", runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(out, "ship %s read-only beside the binary (plugins.cacheReadOnly, or the host finds it unwritable): hosts read it and never write it\n", *cache)
	fmt.Fprintln(out, precompileKeyNote(*cache, *keyFile))
	return nil
}

// precompileKeyNote says which key authenticates what precompile wrote and
// what a host needs to verify it.
func precompileKeyNote(cache, keyFile string) string {
	switch {
	case keyFile != "":
		return fmt.Sprintf("its compiled code is authenticated with the key in %s: give hosts the same key (plugins.cacheKeyFile or $%s); they refuse code written with another", keyFile, wasmcache.KeyEnv)
	case os.Getenv(wasmcache.KeyEnv) != "":
		return fmt.Sprintf("its compiled code is authenticated with $%s: give hosts the same value; they refuse code written with another", wasmcache.KeyEnv)
	}
	return fmt.Sprintf("its compiled code is authenticated with the key in %s, which ships with it; the cache's files are made readable by every user, "+
		"as a Lambda function runs as another user than the one that built the zip (or set $%s in the function's environment to the key's content and leave the file out)",
		filepath.Join(cache, wasmcache.KeyFileName), wasmcache.KeyEnv)
}

// readableByAll makes every file under dir readable and every folder
// searchable by every user (the cache writes its files 0600): a packaged
// cache is read by a host running as another user than the one that
// built it (a Lambda function, a container's nonroot user).
func readableByAll(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		mode := fi.Mode().Perm() | 0o444
		if d.IsDir() {
			mode |= 0o111
		}
		if mode == fi.Mode().Perm() {
			return nil
		}
		if err := os.Chmod(p, mode); err != nil {
			return fmt.Errorf("making the cache readable by the host's user: %w", err)
		}
		return nil
	})
}

func relTo(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// validation is what `host plugin validate --json` prints.
type validation struct {
	File         string         `json:"file"`
	SHA256       string         `json:"sha256"`
	Name         string         `json:"name"`
	Version      string         `json:"version"`
	Transport    string         `json:"transport"`
	ABI          string         `json:"abi"`
	Sources      []sourceReport `json:"sources"`
	Capabilities []string       `json:"capabilities"`
	SelfTest     string         `json:"selfTest"` // "passed", "absent" or the failure
	LoadTime     string         `json:"loadTime"`
}

type sourceReport struct {
	Name       string   `json:"name"`
	Stream     string   `json:"stream"`
	Mode       string   `json:"mode"`
	EventTypes []string `json:"eventTypes,omitempty"`
}

const validateUsage = `usage: host plugin validate FILE [--json] [--timeout D] [--cache DIR] [--config F [--projection P]]

Loads a module as the host would and checks it: the ABI, what describe says
(name, version, sources, exports) and its self test (the cases a module
ships, run inside it). A module is valid only once its self test has passed
(or it ships none); a failing or trapping self test refuses it. With
--config, the sandbox is the configuration's (plugins.callTimeout,
memoryLimitPages, maxLoopIterations; --timeout still wins when given), and
the module is also checked as a replacement for the projection's plugin:
streams, compatibility, sha256 pins and the configured smoke-test fixture.
The projection is --projection's; without it, the configuration's only
one, else the one whose plugin has the module's name (describe's name).

With --config, up to 20 of the rows the projection's table holds are also
re-derived from their events with the module (as host replay does; nothing
is written) and compared with the stored rows: validate prints how many it
derives differently and warns of each attribute the stored rows hold that
none of the module's rows has — a renamed or dropped state field, which the
module's next event on such a row folds without — naming the rebuild to run
after the swap. A warning, not a refusal: the exit status stays 0. When the
tables cannot be read it says so in one line. With --json these lines go to
standard error.

Flags:`

func runPluginValidate(ctx context.Context, args []string) error {
	out := stdoutOf(ctx)
	fs := flag.NewFlagSet("plugin validate", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), validateUsage)
		fs.PrintDefaults()
	}
	asJSON := fs.Bool("json", false, "print the report as JSON")
	cache := fs.String("cache", "", "compilation-cache directory to use")
	timeout := fs.Duration("timeout", plugin.DefaultCallTimeout, "bound on each call into the module, its start function, _initialize and self test included (default: with --config, its plugins.callTimeout)")
	cfgPath := fs.String("config", "", "also check that the module can replace a projection's plugin of this configuration, in its sandbox, and compare a sample of the rows its table holds with what the module derives")
	proj := fs.String("projection", "", "with --config: the projection (default: the only one, else the one whose plugin has the module's name)")
	checkRows := fs.Bool("check-rows", false, "with --config naming no endpoint (tables in AWS): read the tables to compare the sample of rows too; with an endpoint they are read without it")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return fmt.Errorf("usage: host plugin validate FILE [--json] [--timeout D] [--config F [--projection P]]")
	}
	pc, err := validateSandbox(fs, *cfgPath, *cache, *timeout)
	if err != nil {
		return err
	}
	wasm, err := os.ReadFile(files[0])
	if err != nil {
		return err
	}
	start := time.Now()
	p, tr, err := transport.Load(ctx, wasm, pc)
	if err != nil {
		if errors.Is(err, plugin.ErrTimeout) {
			return fmt.Errorf("%s was refused: it ran past %s %s: %w", files[0], pc.CallTimeoutName, pc.CallTimeout, err)
		}
		return fmt.Errorf("%s does not follow the ABI: %w", files[0], err)
	}
	defer p.Close(ctx)
	loaded := time.Since(start)
	d := p.Describe()
	v := validation{File: files[0], SHA256: p.SHA256(), Name: d.Name, Version: d.Version, Transport: tr.String(),
		ABI: fmt.Sprintf("%d.%d", d.ABIMajor, d.ABIMinor), Capabilities: d.Capabilities, LoadTime: loaded.Round(time.Microsecond).String()}
	for _, s := range d.Sources {
		v.Sources = append(v.Sources, sourceReport{Name: s.Name, Stream: s.Stream, Mode: s.Mode, EventTypes: s.EventTypes})
	}
	ran, serr := swap.SelfTest(ctx, p, wasm)
	switch {
	case serr != nil:
		v.SelfTest = serr.Error()
	case ran:
		v.SelfTest = "passed"
	default:
		v.SelfTest = "absent"
	}
	if *asJSON {
		b, _ := json.MarshalIndent(v, "", "  ")
		fmt.Fprintln(out, string(b))
		if serr != nil {
			return fmt.Errorf("%s was refused: its self test failed (selfTest in the report above)", files[0])
		}
	} else {
		verdict := "valid"
		if serr != nil {
			verdict = "REFUSED: its self test failed"
		}
		fmt.Fprintf(out, "%s: %s (loaded in %s)\n  plugin   %s@%s\n  sha256   %s\n  abi      %s (%s)\n  sources ", v.File, verdict, v.LoadTime, v.Name, v.Version, v.SHA256, v.ABI, v.Transport)
		for _, s := range v.Sources {
			fmt.Fprintf(out, " %s<-%s (%s: %s)", s.Name, s.Stream, s.Mode, strings.Join(s.EventTypes, ", "))
		}
		self := v.SelfTest
		if serr != nil {
			self = "FAILED (the error follows)"
		}
		fmt.Fprintf(out, "\n  exports  %s\n  selftest %s\n", strings.Join(v.Capabilities, ", "), self)
	}
	if serr != nil {
		return fmt.Errorf("%s was refused: %w", files[0], serr)
	}
	if *cfgPath != "" {
		pc, err := checkReplaces(ctx, p, wasm, *cfgPath, *proj, !*asJSON)
		if err != nil {
			return err
		}
		checkSampledRows(ctx, files[0], *cfgPath, pc, *asJSON, *checkRows)
	}
	return nil
}

// validateSandbox is the sandbox validate loads a module in: --timeout and
// --cache, or with a configuration its plugins settings, --timeout given
// on the command line winning. Its CallTimeoutName says where the timeout
// came from, so that a timeout's error names what to change.
func validateSandbox(fs *flag.FlagSet, cfgPath, cache string, timeout time.Duration) (plugin.Config, error) {
	pc := plugin.Config{CacheDir: cache, PoolSize: 1, CallTimeout: timeout, CallTimeoutName: "--timeout"}
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "timeout" })
	if cfgPath == "" {
		return pc, nil
	}
	cfg, err := host.LoadConfig(cfgPath)
	if err != nil {
		return pc, err
	}
	eff := cfg.Effective().Plugins
	pc.MemoryLimitPages, pc.MaxLoopIterations = eff.MemoryLimitPages, eff.MaxLoopIterations
	if !given {
		pc.CallTimeout, pc.CallTimeoutName = time.Duration(eff.CallTimeout), "plugins.callTimeout of "+cfgPath
	}
	return pc, nil
}

// checkReplaces checks that p (loaded from wasm) could replace the plugin a
// configuration binds to a projection: what the hot-swap pipeline checks —
// the streams, compatibility with the plugin serving now, the projection's
// sha256 pins, and its smoke test (the module's self_test, else the
// configured fixture). It returns the projection's name.
func checkReplaces(ctx context.Context, p transport.Plugin, wasm []byte, cfgPath, proj string, say bool) (string, error) {
	out := stdoutOf(ctx)
	cfg, err := host.LoadConfig(cfgPath)
	if err != nil {
		return "", err
	}
	pc, cur, err := replacedProjection(ctx, cfg, cfgPath, proj, p.Describe().Name)
	if err != nil {
		return "", err
	}
	defer cur.Close(ctx)
	streams := map[string]bool{}
	for _, s := range cfg.EventStore.Streams {
		streams[s.Name] = true
	}
	for _, s := range p.Describe().Sources {
		if !streams[s.Stream] {
			return "", fmt.Errorf("%s reads stream %q, which eventStore.streams does not define: %w", p.Name(), s.Stream, swap.ErrIncompatible)
		}
	}
	if err := swap.ExpectOf(cur.Describe()).Check(p.Describe()); err != nil {
		return "", fmt.Errorf("%s cannot replace %s in projection %q: %v: %w", p.Name(), cur.Name(), pc.Name, err, swap.ErrIncompatible)
	}
	if hs := pc.HotSwap; hs != nil {
		if err := swap.CheckPin(p.SHA256(), hs.SHA256); err != nil {
			return "", fmt.Errorf("%s cannot replace %s in projection %q: %w", p.Name(), cur.Name(), pc.Name, err)
		}
		if f := hs.Fixture; f != nil {
			dir := filepath.Dir(cfgPath)
			fx, err := swap.LoadFixture(relTo(dir, f.Events), relTo(dir, f.Rows))
			if err != nil {
				return "", fmt.Errorf("projection %q's smoke-test fixture: %w", pc.Name, err)
			}
			if err := swap.Smoke(ctx, p, wasm, fx); err != nil {
				return "", fmt.Errorf("%s would be refused in projection %q: %w: %w", p.Name(), pc.Name, swap.ErrSmokeTest, err)
			}
			if say {
				fmt.Fprintf(out, "  smoke test passed (%s)\n", fx.Name)
			}
		}
	}
	if say {
		fmt.Fprintln(out, replacesLine(ctx, cfg, pc, cur))
		for _, w := range unlistedEventTypes(cfg, p.Describe()) {
			fmt.Fprintf(out, "  WARNING  %s\n", w)
		}
	}
	return pc.Name, nil
}

// unlistedEventTypes warns of each event type the module folds that its
// stream's eventStore.streams[].eventTypes leaves out (when it lists any):
// `host append` refuses events of that type, so the module never sees one.
func unlistedEventTypes(cfg *host.Config, d abi.Description) []string {
	listed := map[string]map[string]bool{}
	for _, s := range cfg.EventStore.Streams {
		if len(s.EventTypes) == 0 {
			continue
		}
		listed[s.Name] = map[string]bool{}
		for _, t := range s.EventTypes {
			listed[s.Name][t] = true
		}
	}
	var out []string
	for _, src := range d.Sources {
		types, ok := listed[src.Stream]
		if !ok {
			continue
		}
		for _, t := range src.EventTypes {
			if !types[t] {
				out = append(out, fmt.Sprintf("the module folds event type %q, which stream %q's eventTypes in the configuration does not list: `host append` refuses events of that type; add it to eventStore.streams[].eventTypes", t, src.Stream))
			}
		}
	}
	return out
}

const pluginTestUsage = `usage: host plugin test FILE --events EVENTS.json [--expect ROWS.json] [--decisions]

Folds a fixture's events through the module with the host's own engine, over
an empty read model (no DynamoDB), and compares the rows with the expected
ones. Without --expect it prints the rows, one per line, in the format of an
expected-rows file: check them by eye, save them, and pass them as --expect.
Exit 1 when a row differs or fails.

EVENTS.json is a JSON array of events, in any order (give every version from
1: the fold starts from nothing):

  [{"stream": "Order", "streamId": "o-1", "version": 1, "type": "OrderPlaced",
    "data": {"customer": {"S": "ann"}}, "timestamp": "2026-01-01T00:00:00Z"}]

  stream, streamId, version, type   required (streamId: composites joined with #)
  data, metadata                    items in DynamoDB JSON ({"S": ...}, {"N": "2.5"}, ...);
                                    data gets "_tag" = type when it has none
  timestamp                         ISO-8601; default 2026-01-01T00:00:00Z (as guesttest.Event)
  source                            the source reading the event, only when two sources read one stream

ROWS.json is a JSON array of items in DynamoDB JSON: each row as the plugin
makes it, its key and to_item's attributes (the host's own attributes, such
as the checkpoint, createdAt and writtenBy, are not part of it).

--decisions prints what became of each event: applied, skipped, rejected
(with the error terminal accepted), superseded, duplicate, no row (key named
none), or failed (with the row's error); on stdout with --expect, else on
stderr (stdout holds the rows).

Flags:`

func runPluginTest(ctx context.Context, args []string) error {
	out := stdoutOf(ctx)
	fs := flag.NewFlagSet("plugin test", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), pluginTestUsage)
		fs.PrintDefaults()
	}
	events := fs.String("events", "", "the fixture's events file (JSON array, see above)")
	expect := fs.String("expect", "", "the expected rows file (JSON array of DynamoDB JSON items); without it the rows are printed")
	decisions := fs.Bool("decisions", false, "print what became of each event (applied, skipped, rejected with its error, ...)")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 || *events == "" {
		return fmt.Errorf("usage: host plugin test FILE --events F [--expect F] [--decisions] (host plugin test --help describes the files)")
	}
	p, _, err := transport.LoadFile(ctx, files[0], plugin.Config{PoolSize: 1})
	if err != nil {
		return err
	}
	defer p.Close(ctx)
	eb, err := os.ReadFile(*events)
	if err != nil {
		return err
	}
	evs, err := swap.ParseEvents(eb)
	if err != nil {
		return fmt.Errorf("%s: %w", *events, err)
	}
	folded, err := swap.FoldEvents(ctx, p, evs)
	if err != nil {
		return err
	}
	rows := folded.Rows
	if *decisions {
		w := stderrOf(ctx)
		if *expect != "" {
			w = out
		}
		printDecisions(w, folded.Decisions)
	}
	if *expect == "" {
		var items []json.RawMessage
		for _, r := range rows {
			if r.Err != nil {
				fmt.Fprintf(stderrOf(ctx), "row %s failed: %v\n", swap.KeyString(r.Key), r.Err)
				continue
			}
			if r.Item != nil {
				b, err := ddbjson.ItemToJSON(r.Item)
				if err != nil {
					return err
				}
				items = append(items, b)
			}
		}
		// One row per line, so the output diffs well as an expected-rows file.
		fmt.Fprintln(out, "[")
		for i, it := range items {
			sep := ","
			if i == len(items)-1 {
				sep = ""
			}
			fmt.Fprintf(out, "  %s%s\n", it, sep)
		}
		fmt.Fprintln(out, "]")
		for _, r := range rows {
			if r.Err != nil {
				return errors.New("a row failed to fold (its error is above; the rows that folded are printed)")
			}
		}
		return nil
	}
	rb, err := os.ReadFile(*expect)
	if err != nil {
		return err
	}
	want, err := swap.ParseRows(rb)
	if err != nil {
		return fmt.Errorf("%s: %w", *expect, err)
	}
	diffs := swap.CompareRows(rows, want)
	for _, d := range diffs {
		fmt.Fprintln(out, "FAIL", d)
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%s: %s: %w", p.Name(), plural(len(diffs), "difference"), errTestFailed)
	}
	fmt.Fprintf(out, "ok %s: %s, %s as expected\n", p.Name(), plural(len(evs), "event"), plural(len(want), "row"))
	return nil
}

// printDecisions prints one line per event of a fold: the event, the row
// it addressed and what became of it.
func printDecisions(w io.Writer, ds []swap.Decision) {
	for _, d := range ds {
		e := d.Event
		line := fmt.Sprintf("%s %s v%d %s", e.Stream, e.StreamID, e.Version, e.Type)
		if d.Source != "" {
			line += " (source " + d.Source + ")"
		}
		if d.Row != nil {
			line += " → row " + swap.KeyString(d.Row)
		}
		line += ": " + d.Outcome
		if d.Err != nil {
			line += ": " + d.Err.Error()
		}
		fmt.Fprintln(w, line)
	}
}

// replacedProjection returns the projection of cfg whose plugin the module
// named name would replace, with its current plugin loaded: proj when
// given; else the only projection; else the one (not native) whose plugin
// has the module's name. Otherwise the error asks for --projection and
// lists the projections.
func replacedProjection(ctx context.Context, cfg *host.Config, cfgPath, proj, name string) (*host.ProjectionConfig, transport.Plugin, error) {
	load := func(pc *host.ProjectionConfig) (transport.Plugin, error) {
		if strings.HasPrefix(pc.Plugin, "native:") {
			return nil, fmt.Errorf("projection %q runs native logic %q: nothing to compare with", pc.Name, pc.Plugin)
		}
		cur, _, err := transport.LoadFile(ctx, relTo(filepath.Dir(cfgPath), pc.Plugin), plugin.Config{PoolSize: 1})
		if err != nil {
			return archivedCurrent(ctx, cfgPath, pc, err)
		}
		return cur, nil
	}
	var names []string
	for i := range cfg.Projections {
		names = append(names, fmt.Sprintf("%s (plugin %s)", cfg.Projections[i].Name, cfg.Projections[i].Plugin))
	}
	list := strings.Join(names, ", ")
	if proj != "" || len(cfg.Projections) == 1 {
		for i := range cfg.Projections {
			if pc := &cfg.Projections[i]; pc.Name == proj || proj == "" {
				cur, err := load(pc)
				return pc, cur, err
			}
		}
		return nil, nil, fmt.Errorf("%s has no projection %q; its projections: %s", cfgPath, proj, list)
	}
	var (
		found *host.ProjectionConfig
		fcur  transport.Plugin
		same  []string
	)
	for i := range cfg.Projections {
		pc := &cfg.Projections[i]
		if strings.HasPrefix(pc.Plugin, "native:") {
			continue
		}
		cur, err := load(pc)
		if err != nil {
			continue // not this one; --projection names it if meant
		}
		if cur.Describe().Name != name {
			cur.Close(ctx)
			continue
		}
		same = append(same, pc.Name)
		if found == nil {
			found, fcur = pc, cur
		} else {
			cur.Close(ctx)
		}
	}
	switch {
	case len(same) == 1:
		return found, fcur, nil
	case len(same) > 1:
		fcur.Close(ctx)
		return nil, nil, fmt.Errorf("%s has %d projections whose plugin is named %q (%s): pass --projection, one of: %s",
			cfgPath, len(same), name, strings.Join(same, ", "), list)
	}
	return nil, nil, fmt.Errorf("%s has %d projections and none's plugin is named %q: pass --projection, one of: %s",
		cfgPath, len(cfg.Projections), name, list)
}
