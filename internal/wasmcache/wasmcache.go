// Package wasmcache decides how a plugin load uses a compilation-cache
// directory: writable (wazero reads hits and writes misses) or
// read-only, as a Lambda zip or a container image ships it. wazero's file
// cache writes on every miss and fails the compilation when it cannot, so a
// read-only directory is used only for the modules it is known to hold: the
// ones `host plugin precompile` (or a load into a writable directory) marked
// there. Any other module compiles in memory and nothing is written.
package wasmcache

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// ReadOnly reports whether dir is to be used read-only: configured so, or
// found unwritable by a probe (a temporary file created and removed once per
// directory and process). A directory that does not exist and cannot be
// created is read-only too (and empty).
func ReadOnly(dir string, configured bool) bool {
	if configured {
		return true
	}
	if v, ok := probed.Load(dir); ok {
		return v.(bool)
	}
	ro := Probe(dir) != nil
	probed.Store(dir, ro)
	return ro
}

var probed sync.Map // dir -> bool (read-only)

// Probe is how ReadOnly finds a directory unwritable: it returns the error
// of creating dir (when missing) or a temporary file in it. Tests replace it
// where no directory can be made unwritable (root ignores permissions).
var Probe = func(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".dynafold-probe-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

// ForgetProbes drops the remembered probe results (for tests that change a
// directory's writability).
func ForgetProbes() { probed.Clear() }

// VersionDir is the subdirectory where wazero (of the version this binary
// is built with) keeps its compiled code for this GOARCH and GOOS, as
// wazero.NewCompilationCacheWithDir names it.
func VersionDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return filepath.Join(dir, "wazero-"+wazeroVersion()+"-"+runtime.GOARCH+"-"+runtime.GOOS)
}

// wazeroVersion mirrors wazero's internal/version.GetWazeroVersion.
var wazeroVersion = sync.OnceValue(func() string {
	v := ""
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if strings.Contains(dep.Path, "github.com/tetratelabs/wazero") {
				v = dep.Version
			}
		}
		if v == "" || v == "(devel)" {
			v = info.Main.Version
		}
	}
	if v == "" || v == "(devel)" {
		return "dev"
	}
	return v
})

// markerPath is the file that says the compiled code of key is in dir's
// wazero cache. It lives in wazero's version directory, so a host built
// with another wazero version does not see it; wazero's own entries there
// are named by 64 hex digits and never collide with "dynafold-".
func markerPath(dir, key string) string {
	return filepath.Join(VersionDir(dir), "dynafold-compiled-"+key)
}

// Has reports whether key was compiled into dir's wazero cache.
func Has(dir, key string) bool {
	_, err := os.Stat(markerPath(dir, key))
	return err == nil
}

// Mark records that key was compiled into dir's wazero cache (which must be
// writable); it does nothing when the marker exists.
func Mark(dir, key string) error {
	path := markerPath(dir, key)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		return fmt.Errorf("mark %s compiled: %w", key, err)
	}
	return nil
}

// Use says how one load uses its cache directory.
type Use struct {
	Dir      string // the directory for wazero's file cache; "" compiles in memory
	ReadOnly bool   // the directory must not be written
}

// Decide returns how a load of the module named key uses dir: writable
// as is; read-only with the directory when the module is marked there; else
// in memory, logged once per directory and module (a warning naming
// `host plugin precompile`).
func Decide(dir string, configuredReadOnly bool, key, plugin string, log *slog.Logger) Use {
	if dir == "" {
		return Use{}
	}
	if !ReadOnly(dir, configuredReadOnly) {
		return Use{Dir: dir}
	}
	if Has(dir, key) {
		return Use{Dir: dir, ReadOnly: true}
	}
	Miss(dir, key, plugin, "not precompiled for this host", log)
	return Use{ReadOnly: true}
}

// Miss logs, once per directory and module, that a read-only cache cannot
// serve a module, which compiles in memory instead.
func Miss(dir, key, plugin, why string, log *slog.Logger) {
	if _, seen := missed.LoadOrStore(dir+"\x00"+key, true); seen {
		return
	}
	log.Warn("read-only compilation cache misses this plugin; it compiles in memory at every cold start: "+
		"run `host plugin precompile` with this host binary (its wazero "+wazeroVersion()+", "+runtime.GOARCH+") into the directory",
		"plugin", plugin, "cacheDir", dir, "reason", why)
}

var missed sync.Map

// Compile runs compile with the directory Decide picks for key ("" for in
// memory). When a read-only directory still fails (wazero misses a module
// marked there, e.g. code compiled for a CPU with other features, and cannot
// write its entry), it logs the miss and compiles again in memory rather
// than fail. After a compile into a writable directory it marks key there.
func Compile[T any](dir string, configuredReadOnly bool, key, plugin string, log *slog.Logger, compile func(dir string) (T, error)) (T, error) {
	use := Decide(dir, configuredReadOnly, key, plugin, log)
	out, err := compile(use.Dir)
	if err != nil && use.ReadOnly && use.Dir != "" {
		Miss(use.Dir, key, plugin, err.Error(), log)
		out, err = compile("")
	}
	if err == nil && use.Dir != "" && !use.ReadOnly {
		if merr := Mark(use.Dir, key); merr != nil {
			log.Warn("compilation cache", "plugin", plugin, "err", merr)
		}
	}
	return out, err
}
