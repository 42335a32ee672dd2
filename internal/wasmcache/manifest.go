package wasmcache

import (
	"crypto/hmac"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// A cache directory holds, besides the key file and blobs, one directory
// per wazero version and target (EntriesDir) with:
//
//   - entry-<name>-<digest>: compiled code as wazero wrote it, where name is
//     wazero's own key for it (64 hex digits);
//   - manifest-<module>.json: for one module (its SHA-256 and how it was
//     compiled), the entries wazero needs to load it, each with its size and
//     keyed digest, the whole authenticated with the cache key.
//
// wazero never reads this directory: a load links the entries a manifest
// vouches for, once verified, into a private directory of its own
// (staging) and points wazero there.

// manifestVersion is the format of manifests.
const manifestVersion = 1

// manifest lists the compiled code of one module.
type manifest struct {
	Version int             `json:"version"`
	Module  string          `json:"module"` // the module's key: its SHA-256 and how it was compiled
	Wazero  string          `json:"wazero"` // the wazero version that compiled it
	Target  string          `json:"target"` // GOARCH-GOOS
	Entries []manifestEntry `json:"entries"`
	MAC     string          `json:"mac"` // HMAC-SHA256 of the rest (signed)
}

// manifestEntry is one file of compiled code.
type manifestEntry struct {
	Name   string `json:"name"` // wazero's key for it
	File   string `json:"file"` // its file in EntriesDir
	Size   int64  `json:"size"`
	Nonce  string `json:"nonce"`
	Digest string `json:"digest"` // GMAC of its content
}

func target() string { return runtime.GOARCH + "-" + runtime.GOOS }

// EntriesDir is where dir keeps compiled code for this host's wazero and
// target: its entries and manifests.
func EntriesDir(dir string) string {
	return filepath.Join(dir, "dynafold-"+wazeroVersion()+"-"+target())
}

func manifestPath(dir, module string) string {
	return filepath.Join(EntriesDir(dir), "manifest-"+module+".json")
}

// signed is what the MAC covers, in a form that cannot be read two ways.
func (m *manifest) signed() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "dynafold-cache-manifest/%d\n%s\n%s\n%s\n%d\n", m.Version, m.Module, m.Wazero, m.Target, len(m.Entries))
	for _, e := range m.Entries {
		fmt.Fprintf(&b, "%s %s %d %s %s\n", e.Name, e.File, e.Size, e.Nonce, e.Digest)
	}
	return []byte(b.String())
}

// verified is an entry whose content was checked against a manifest.
type verified struct {
	name string // wazero's key
	path string // the file
}

// errNoManifest reports a module the cache holds no manifest for.
var errNoManifest = errors.New("not in the cache")

// verify returns the entries of module, each read whole and checked
// against its manifest. The error matches errNoManifest when there is no
// manifest, ErrRefused (saying why) when something does not verify,
// ErrUnsafe when a file could be changed by others.
func (c *Cache) verify(module string) ([]verified, error) {
	dir := EntriesDir(c.dir)
	path := manifestPath(c.dir, module)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoManifest
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := CheckPath(dir); err != nil {
		return nil, err
	}
	if err := checkFile(f, path); err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil {
		return nil, err
	}
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w: %s", path, ErrRefused, fmt.Sprintf(format, args...))
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, refuse("not a manifest: %v", err)
	}
	mac, err := hex.DecodeString(m.MAC)
	if err != nil || !hmac.Equal(mac, c.key.mac(m.signed())) {
		return nil, refuse("it was not written with this cache's key (%s)", c.key.from)
	}
	if m.Version != manifestVersion || m.Module != module || m.Wazero != wazeroVersion() || m.Target != target() || len(m.Entries) == 0 {
		return nil, refuse("it lists module %s compiled by wazero %s for %s, not %s by %s for %s",
			m.Module, m.Wazero, m.Target, module, wazeroVersion(), target())
	}
	out := make([]verified, 0, len(m.Entries))
	for _, e := range m.Entries {
		if !isWazeroName(e.Name) || e.File != filepath.Base(e.File) || !strings.HasPrefix(e.File, "entry-") {
			return nil, refuse("entry %q (%s) is not a name this host writes", e.File, e.Name)
		}
		p := filepath.Join(dir, e.File)
		if err := c.verifyEntry(p, e); err != nil {
			return nil, err
		}
		out = append(out, verified{name: e.Name, path: p})
	}
	return out, nil
}

func (c *Cache) verifyEntry(path string, e manifestEntry) error {
	refuse := func(why string) error { return fmt.Errorf("%s: %w: %s", path, ErrRefused, why) }
	f, err := os.Open(path)
	if err != nil {
		return refuse(err.Error())
	}
	defer f.Close()
	if err := checkFile(f, path); err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() != e.Size {
		return refuse(fmt.Sprintf("it holds %d bytes, its manifest says %d", fi.Size(), e.Size))
	}
	nonce, err1 := hex.DecodeString(e.Nonce)
	want, err2 := hex.DecodeString(e.Digest)
	if err1 != nil || err2 != nil || len(nonce) != nonceSize {
		return refuse("its manifest's digest does not decode")
	}
	var ok bool
	err = mapped(f, e.Size, func(b []byte) { ok = hmac.Equal(want, c.key.digest(nonce, b)) })
	if err != nil {
		return err
	}
	if !ok {
		return refuse("its content is not what its manifest says (changed after it was written)")
	}
	return nil
}

func isWazeroName(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// seal keeps the entries wazero wrote for module into staging (new: their
// names in wazero's directory there) in the cache, and writes the module's
// manifest listing them. The cache must be writable.
func (c *Cache) seal(module, staging string, names []string) error {
	dir := EntriesDir(c.dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := CheckPath(dir); err != nil {
		return err
	}
	m := manifest{Version: manifestVersion, Module: module, Wazero: wazeroVersion(), Target: target()}
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(VersionDir(staging), name))
		if err != nil {
			return err
		}
		nonce := newNonce()
		digest := c.key.digest(nonce, b)
		file := "entry-" + name + "-" + hex.EncodeToString(digest[:8])
		if err := writeFile(filepath.Join(dir, file), b); err != nil {
			return err
		}
		m.Entries = append(m.Entries, manifestEntry{Name: name, File: file, Size: int64(len(b)),
			Nonce: hex.EncodeToString(nonce), Digest: hex.EncodeToString(digest)})
	}
	m.MAC = hex.EncodeToString(c.key.mac(m.signed()))
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	stale := c.listedFiles(module)
	if err := writeFile(manifestPath(c.dir, module), append(b, '\n')); err != nil {
		return err
	}
	for _, file := range stale {
		if !slices.ContainsFunc(m.Entries, func(e manifestEntry) bool { return e.File == file }) {
			_ = os.Remove(filepath.Join(dir, file)) // the code of a refused or replaced manifest
		}
	}
	return nil
}

// listedFiles returns the entry files the manifest of module names now,
// unverified (a manifest about to be replaced: its files are removed once
// the new one is written, so that refused code does not pile up). Only
// names this host writes are returned.
func (c *Cache) listedFiles(module string) []string {
	b, err := os.ReadFile(manifestPath(c.dir, module))
	if err != nil || len(b) > 1<<20 {
		return nil
	}
	var m manifest
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	var files []string
	for _, e := range m.Entries {
		if e.File == filepath.Base(e.File) && strings.HasPrefix(e.File, "entry-") {
			files = append(files, e.File)
		}
	}
	return files
}

// moduleName checks a module key for use in a file name.
func moduleName(module string) error {
	if module == "" || strings.ContainsAny(module, `/\`+"\x00") || module != filepath.Base(module) {
		return fmt.Errorf("module key %s", strconv.Quote(module))
	}
	return nil
}
