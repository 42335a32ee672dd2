package wasmcache

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KeyEnv is the environment variable that holds the cache key (64 hex
// digits) when no key file is configured.
const KeyEnv = "DYNAFOLD_CACHE_KEY"

// KeyFileName is the key file kept in a cache directory when no key is
// configured: generated (0600) into a writable directory on first use,
// read from a read-only one (where `host plugin precompile` put it).
const KeyFileName = "dynafold-cache.key"

// keySize is the size of a cache key in bytes.
const keySize = 32

// Key authenticates a cache's content: only a holder of the key can write
// an entry the host accepts.
type Key struct {
	macKey   [32]byte // HMAC-SHA256 key of manifests and blob headers
	entryKey [32]byte // AES-256 key of the GMAC digests of entries and blobs
	from     string   // where the key came from, for messages
}

// deriveKey derives the keys of each use from the cache key, so one key
// never serves two algorithms.
func deriveKey(raw []byte, from string) *Key {
	k := &Key{from: from}
	m := hmac.New(sha256.New, raw)
	m.Write([]byte("dynafold cache manifest v1"))
	m.Sum(k.macKey[:0])
	m = hmac.New(sha256.New, raw)
	m.Write([]byte("dynafold cache entry v1"))
	m.Sum(k.entryKey[:0])
	return k
}

// ErrNoKey reports a cache whose key cannot be found or made.
var ErrNoKey = errors.New("no cache key")

// LoadKey returns the key of the cache in dir: from keyFile when set, else
// from $DYNAFOLD_CACHE_KEY, else from dir's KeyFileName, which is
// generated when missing and dir is writable. A key file must pass
// CheckPath. The error says what to do.
func LoadKey(dir, keyFile string, writable bool) (*Key, error) {
	if keyFile != "" {
		return readKeyFile(keyFile)
	}
	if v, ok := os.LookupEnv(KeyEnv); ok {
		raw, err := parseKey(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%w: $%s: %v", ErrNoKey, KeyEnv, err)
		}
		return deriveKey(raw, "$"+KeyEnv), nil
	}
	path := filepath.Join(dir, KeyFileName)
	k, err := readKeyFile(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	if !writable {
		return nil, fmt.Errorf("%w: %s does not exist and the cache is read-only; ship the key file `host plugin precompile` wrote beside the cache, or set $%s to the key it was written with",
			ErrNoKey, path, KeyEnv)
	}
	return generateKey(path)
}

// GenerateKeyFile writes a new random key to path (0600), failing if the
// file exists.
func GenerateKeyFile(path string) error {
	_, err := generateKey(path)
	return err
}

func generateKey(path string) (*Key, error) {
	raw := make([]byte, keySize)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoKey, err)
	}
	// Written whole into a temporary file (0600), then linked to its name,
	// which fails if another process made the key first: a reader never
	// sees a partial key file.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".dynafold-key-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("%w: create %s: %v", ErrNoKey, path, err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(hex.EncodeToString(raw) + "\n")
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, fmt.Errorf("%w: write %s: %v", ErrNoKey, path, werr)
	}
	err = os.Link(tmp.Name(), path)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		err = createExclusive(path, raw) // a file system without hard links
	}
	if errors.Is(err, fs.ErrExist) {
		return readKeyFile(path) // another process made it first
	}
	if err != nil {
		return nil, fmt.Errorf("%w: create %s: %v", ErrNoKey, path, err)
	}
	return deriveKey(raw, path), nil
}

func createExclusive(path string, raw []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(hex.EncodeToString(raw) + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
	}
	return werr
}

func readKeyFile(path string) (*Key, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoKey, err)
	}
	defer f.Close()
	if err := checkFile(f, path); err != nil {
		return nil, err
	}
	b := make([]byte, 4*keySize)
	n, err := f.Read(b)
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %v", ErrNoKey, path, err)
	}
	raw, err := parseKey(strings.TrimSpace(string(b[:n])))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNoKey, path, err)
	}
	return deriveKey(raw, path), nil
}

func parseKey(s string) ([]byte, error) {
	raw, err := hex.DecodeString(s)
	if err != nil || len(raw) != keySize {
		return nil, fmt.Errorf("a cache key is %d hex digits (%d random bytes), as `openssl rand -hex %d` prints", 2*keySize, keySize, keySize)
	}
	return raw, nil
}
