// Package wasmcache is the compilation cache of plugin loads: compiled
// code kept in a directory across processes, writable (a load keeps what it
// compiles) or read-only, as a Lambda zip or a container image ships it
// (`host plugin precompile` filled it).
//
// Compiled code is native code the host runs, so nothing in the directory
// is trusted by its name or place. Every file of compiled code is listed in
// a manifest of its module (the module's SHA-256 and how it was compiled)
// with its size and a keyed digest, and the manifest carries an HMAC under
// the cache key (Key): content that does not verify is refused, logged, and
// the module compiled again. wazero never reads the directory itself: a
// load links the verified files into a private directory of its own and
// points wazero there. A directory, file or key that someone other than
// this user (or root) could change is refused too (CheckPath), and the
// cache is not used.
package wasmcache

import (
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
	if err := os.MkdirAll(dir, 0o700); err != nil {
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
// wazero.NewCompilationCacheWithDir names it, in the private directory a
// load points wazero at.
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
