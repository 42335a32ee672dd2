package wasmcache

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// Cache is a cache directory opened for one load: checked, with its key.
type Cache struct {
	dir      string
	key      *Key
	writable bool
}

// Dir returns the cache's directory.
func (c *Cache) Dir() string { return c.dir }

// Writable reports whether the cache may be written.
func (c *Cache) Writable() bool { return c.writable }

// Open opens the cache in dir for a load: read-only when configured so or
// found unwritable (ReadOnly), refused (ErrUnsafe) when someone other than
// this user or root could change it, with its key (LoadKey; ErrNoKey).
func Open(dir string, configuredReadOnly bool, keyFile string) (*Cache, error) {
	// Absolute: the private directory wazero reads links to the entries.
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	dir = abs
	writable := !ReadOnly(dir, configuredReadOnly)
	if err := CheckPath(dir); err != nil {
		return nil, err
	}
	key, err := LoadKey(dir, keyFile, writable)
	if err != nil {
		return nil, err
	}
	return &Cache{dir: dir, key: key, writable: writable}, nil
}

// OpenOrWarn is Open for a load that goes on without the cache when it
// cannot be used: it logs why (once per directory and reason) and returns
// nil. dir "" is no cache (unless a test set a fallback:
// SetFallbackForTests).
func OpenOrWarn(dir string, configuredReadOnly bool, keyFile, plugin string, log *slog.Logger) *Cache {
	if dir == "" {
		if dir, keyFile = fallbackFor(); dir == "" {
			return nil
		}
		configuredReadOnly = false
	}
	c, err := Open(dir, configuredReadOnly, keyFile)
	if err != nil {
		once(dir+"\x00"+err.Error(), func() {
			log.Warn("compilation cache not used: plugins compile in memory at every start until it is fixed",
				"plugin", plugin, "cacheDir", dir, "reason", err)
		})
		return nil
	}
	return c
}

// warned holds the warnings logged once per process.
var warned sync.Map

func once(what string, f func()) {
	if _, seen := warned.LoadOrStore(what, true); !seen {
		f()
	}
}

// Miss logs, once per directory and module, that a read-only cache cannot
// serve a module, which compiles in memory instead.
func Miss(dir, key, plugin, why string, log *slog.Logger) {
	once("miss\x00"+dir+"\x00"+key, func() {
		log.Warn("read-only compilation cache misses this plugin; it compiles in memory at every cold start: "+
			"run `host plugin precompile` with this host binary (its wazero "+wazeroVersion()+", "+runtime.GOARCH+") into the directory",
			"plugin", plugin, "cacheDir", dir, "reason", why)
	})
}

// Result says how a compilation used the cache.
type Result struct {
	// Dir is the cache directory whose code served the module, or that now
	// holds the code just compiled; "" when the cache did not serve it.
	Dir string
	// Hit reports that the module's code came from the cache.
	Hit bool
}

// Compile compiles the module named module (its SHA-256 and how it is
// compiled) with compile, which must point wazero's file cache at the
// directory it is given ("" for none). With a cache, the code the module's
// manifest vouches for is verified and linked into a private directory
// given to compile: a hit. Code that does not verify is refused and logged
// (a warning saying what and why), and the module compiled again. What
// wazero compiled is kept in a writable cache, with the module's manifest;
// a read-only cache that misses is logged (Miss) and nothing is written.
// Without a cache (c nil), compile gets "".
func Compile[T any](c *Cache, module, plugin string, log *slog.Logger, compile func(dir string) (T, error)) (T, Result, error) {
	if c == nil {
		out, err := compile("")
		return out, Result{}, err
	}
	if err := moduleName(module); err != nil {
		var zero T
		return zero, Result{}, err
	}
	entries, err := c.verify(module)
	switch {
	case err == nil:
	case errors.Is(err, errNoManifest) && !c.writable:
		Miss(c.dir, module, plugin, "not precompiled for this host", log)
	case errors.Is(err, errNoManifest):
	default:
		log.Warn("compiled code in the cache refused: it compiles again", "plugin", plugin, "cacheDir", c.dir,
			"module", module, "reason", err)
		entries = nil
		if !c.writable {
			Miss(c.dir, module, plugin, err.Error(), log)
		}
	}
	if len(entries) == 0 && !c.writable {
		out, err := compile("")
		return out, Result{}, err
	}
	staging, err := stage(entries)
	if err != nil {
		log.Warn("compilation cache not used for this plugin: it compiles in memory", "plugin", plugin, "cacheDir", c.dir, "reason", err)
		out, err := compile("")
		return out, Result{}, err
	}
	defer os.RemoveAll(staging)
	out, err := compile(staging)
	if err != nil {
		return out, Result{}, err
	}
	added, lerr := written(staging)
	switch {
	case lerr != nil:
		log.Warn("compilation cache", "plugin", plugin, "cacheDir", c.dir, "err", lerr)
		return out, Result{}, nil
	case len(added) == 0:
		return out, Result{Dir: c.dir, Hit: len(entries) > 0}, nil
	case !c.writable:
		// wazero missed the code the manifest vouches for (compiled on a CPU
		// with other features): it compiled in memory, in effect.
		Miss(c.dir, module, plugin, "its precompiled code does not match this CPU", log)
		return out, Result{}, nil
	}
	if err := c.seal(module, staging, added); err != nil {
		log.Warn("compilation cache: keeping the compiled plugin", "plugin", plugin, "cacheDir", c.dir, "err", err)
		return out, Result{}, nil
	}
	return out, Result{Dir: c.dir}, nil
}

// stage makes a private directory for wazero's file cache (0700, in the
// system's temporary directory) holding links to the verified entries
// under wazero's names for them.
func stage(entries []verified) (string, error) {
	staging, err := os.MkdirTemp("", "dynafold-wazero-")
	if err != nil {
		return "", err
	}
	vdir := VersionDir(staging)
	if err := os.Mkdir(vdir, 0o700); err != nil {
		os.RemoveAll(staging)
		return "", err
	}
	for _, e := range entries {
		if err := os.Symlink(e.path, filepath.Join(vdir, e.name)); err != nil {
			os.RemoveAll(staging)
			return "", err
		}
	}
	return staging, nil
}

// written returns the files wazero wrote into staging, by name: regular
// files, where stage made symbolic links (wazero replaces a link it could
// not use with what it compiled).
func written(staging string) ([]string, error) {
	all, err := os.ReadDir(VersionDir(staging))
	if err != nil {
		return nil, err
	}
	var names []string
	for _, d := range all {
		if d.Type().IsRegular() && isWazeroName(d.Name()) {
			names = append(names, d.Name())
		}
	}
	return names, nil
}

// PrecompileCheck returns why dir cannot be filled by a precompile step:
// it is read-only (configured so, or found so) or unsafe, or its key cannot
// be made.
func PrecompileCheck(dir string, configuredReadOnly bool, keyFile string) error {
	if dir == "" {
		return errors.New("no cache directory")
	}
	c, err := Open(dir, configuredReadOnly, keyFile)
	if err != nil {
		return err
	}
	if !c.writable {
		return fmt.Errorf("%s is read-only", dir)
	}
	return nil
}
