package wasmcache

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
)

// nonceSize is the size of an entry digest's nonce (GCM's standard 96 bits).
const nonceSize = 12

// digest is the keyed digest of data: AES-256-GMAC (GCM authenticating
// data and encrypting nothing) under a key derived from the cache key, with
// a random nonce per entry. GMAC runs at several GB/s where the CPU has AES
// and carry-less multiplication instructions (x86-64, ARMv8), 3-5 times
// faster than SHA-256, which matters for a compiled module of 15 MB read at
// every cold start. What the data is (which module, which entry, its size,
// this nonce) is bound by the HMAC of the record that holds the digest (a
// manifest, a blob's header). A nonce must never serve two messages:
// newNonce makes a fresh one for every entry written.
func (k *Key) digest(nonce, data []byte) []byte {
	block, err := aes.NewCipher(k.entryKey[:])
	if err != nil {
		panic(err) // a 32-byte key is always valid
	}
	g, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return g.Seal(nil, nonce, nil, data)
}

func newNonce() []byte {
	n := make([]byte, nonceSize)
	if _, err := rand.Read(n); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n
}

// mac is the HMAC-SHA256 of msg under the manifest key.
func (k *Key) mac(msg []byte) []byte {
	m := hmac.New(sha256.New, k.macKey[:])
	m.Write(msg)
	return m.Sum(nil)
}
