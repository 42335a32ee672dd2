package wasmcache

import (
	"bytes"
	"crypto/hmac"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// ErrRefused reports cache content that does not verify: written without
// this cache's key, changed since, or made for another module. It is never
// used; the module is compiled (or rewritten) again.
var ErrRefused = errors.New("refused")

// blobMagic starts every blob.
const blobMagic = "dynafold-blob/1\n"

// blobHeader is the size of a blob's header: magic, subject, nonce, digest
// (16 bytes of GMAC), MAC (32 bytes of HMAC-SHA256).
const blobHeader = len(blobMagic) + 32 + nonceSize + 16 + 32

// blobPath is where the blob of kind for subject lives in dir.
func blobPath(dir, kind string, subject [32]byte) string {
	return filepath.Join(dir, "dynafold-"+kind+"-"+hex.EncodeToString(subject[:]))
}

// blobMAC authenticates a blob's header: what it is (kind), what it was
// made from (subject), and its data's size, nonce and digest.
func (k *Key) blobMAC(kind string, subject []byte, size int, nonce, digest []byte) []byte {
	var msg []byte
	msg = append(msg, "blob\x00"+kind+"\x00"...)
	msg = append(msg, subject...)
	msg = binary.BigEndian.AppendUint64(msg, uint64(size))
	msg = append(msg, nonce...)
	msg = append(msg, digest...)
	return k.mac(msg)
}

// ReadBlob returns the data of the blob of kind made from subject (the
// SHA-256 of the input it was derived from), if it verifies. The error
// matches fs.ErrNotExist when there is none, ErrRefused (saying why) when
// it does not verify, ErrUnsafe when the file could be changed by others.
func (c *Cache) ReadBlob(kind string, subject [32]byte) ([]byte, error) {
	path := blobPath(c.dir, kind, subject)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := checkFile(f, path); err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	b := make([]byte, fi.Size()) // one allocation: a module runs to MBs
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, err
	}
	refuse := func(why string) error { return fmt.Errorf("%s: %w: %s", path, ErrRefused, why) }
	if len(b) < blobHeader || string(b[:len(blobMagic)]) != blobMagic {
		return nil, refuse("not a blob of this host's format")
	}
	h := b[len(blobMagic):blobHeader]
	sub, nonce, digest, mac := h[:32], h[32:32+nonceSize], h[32+nonceSize:48+nonceSize], h[48+nonceSize:]
	data := b[blobHeader:]
	if !bytes.Equal(sub, subject[:]) {
		return nil, refuse(fmt.Sprintf("it was made from sha256:%x, not from this module (sha256:%x): a file copied over another's name", sub, subject))
	}
	if !hmac.Equal(mac, c.key.blobMAC(kind, sub, len(data), nonce, digest)) {
		return nil, refuse("its header was not written with this cache's key (" + c.key.from + ")")
	}
	if !hmac.Equal(digest, c.key.digest(nonce, data)) {
		return nil, refuse("its content changed after it was written")
	}
	return data, nil
}

// WriteBlob keeps data as the blob of kind made from subject (atomically,
// 0600). The cache must be writable.
func (c *Cache) WriteBlob(kind string, subject [32]byte, data []byte) error {
	nonce := newNonce()
	digest := c.key.digest(nonce, data)
	b := make([]byte, 0, blobHeader+len(data))
	b = append(b, blobMagic...)
	b = append(b, subject[:]...)
	b = append(b, nonce...)
	b = append(b, digest...)
	b = append(b, c.key.blobMAC(kind, subject[:], len(data), nonce, digest)...)
	b = append(b, data...)
	return writeFile(blobPath(c.dir, kind, subject), b)
}

// writeFile writes b to path atomically (a temporary file renamed), 0600.
func writeFile(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".dynafold-*.tmp")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}
