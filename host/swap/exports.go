package swap

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// errNotWasm reports bytes that are not a WebAssembly binary module.
var errNotWasm = errors.New("not a WebAssembly binary module")

// exportsFunction reports whether a module's export section names a
// function name. It reads only the section headers and the export section,
// so it costs nothing next to a compilation.
func exportsFunction(wasm []byte, name string) (bool, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return false, errNotWasm
	}
	b := wasm[8:]
	for len(b) > 0 {
		id := b[0]
		size, n := binary.Uvarint(b[1:])
		if n <= 0 || uint64(len(b)-1-n) < size {
			return false, fmt.Errorf("%w: truncated section %d", errNotWasm, id)
		}
		body := b[1+n : 1+n+int(size)]
		b = b[1+n+int(size):]
		if id != 7 { // the export section
			continue
		}
		count, n := binary.Uvarint(body)
		if n <= 0 {
			return false, fmt.Errorf("%w: bad export count", errNotWasm)
		}
		body = body[n:]
		for i := uint64(0); i < count; i++ {
			l, n := binary.Uvarint(body)
			if n <= 0 || uint64(len(body)-n) < l+1 {
				return false, fmt.Errorf("%w: bad export %d", errNotWasm, i)
			}
			export := string(body[n : n+int(l)])
			kind := body[n+int(l)]
			body = body[n+int(l)+1:]
			if _, m := binary.Uvarint(body); m <= 0 {
				return false, fmt.Errorf("%w: bad export %d", errNotWasm, i)
			} else {
				body = body[m:]
			}
			if kind == 0 && export == name {
				return true, nil
			}
		}
		return false, nil
	}
	return false, nil
}
