package wasmcache

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkVerify measures what a load pays to verify a module's compiled
// code before wazero reads it: the manifest's HMAC and the GMAC digest of
// a 14 MiB entry (the size of the order-summary Go plugin's compiled code),
// read through a memory map; and, for comparison, HMAC-SHA256 and SHA-256
// of the same bytes, the digests not chosen.
//
//	go test ./internal/wasmcache -run '^$' -bench Verify -benchtime 20x -count 3
func BenchmarkVerify(b *testing.B) {
	const size = 14 << 20
	dir := b.TempDir()
	b.Setenv(KeyEnv, strings.Repeat("5a", 32))
	c, err := Open(dir, false, "")
	if err != nil {
		b.Fatal(err)
	}
	staging := b.TempDir()
	if err := os.MkdirAll(VersionDir(staging), 0o700); err != nil {
		b.Fatal(err)
	}
	data := make([]byte, size)
	rand.Read(data)
	name := strings.Repeat("ab", 32)
	if err := os.WriteFile(filepath.Join(VersionDir(staging), name), data, 0o600); err != nil {
		b.Fatal(err)
	}
	if err := c.seal("bench", staging, []string{name}); err != nil {
		b.Fatal(err)
	}
	b.Run("manifest+gmac", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			if _, err := c.verify("bench"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("hmac-sha256", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			m := hmac.New(sha256.New, c.key.macKey[:])
			m.Write(data)
			m.Sum(nil)
		}
	})
	b.Run("sha256", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			sha256.Sum256(data)
		}
	})
}
