package streams

import (
	"encoding/json"
	"strconv"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/wal"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// appendRecordJSON appends rec's stored form to b: json.Marshal of its
// recordDisk, byte for byte (TestY8_AppendRecordJSONIsEncodingJSONs), in
// one pass with no reflection and no copy of the images' JSON.
func appendRecordJSON(b []byte, rec *record) ([]byte, error) {
	b = append(b, `{"N":`...)
	b = appendJSONString(b, rec.eventName)
	b = append(b, `,"T":`...)
	b = strconv.AppendInt(b, rec.at.UnixNano(), 10)
	var err error
	for i, it := range [3]abi.Item{rec.keys, rec.oldImage, rec.newImage} {
		if len(it) == 0 { // omitempty
			continue
		}
		b = append(b, [3]string{`,"K":`, `,"O":`, `,"I":`}[i]...)
		if b, err = ddbjson.AppendItemBytes(b, it); err != nil {
			return b, err
		}
	}
	if rec.identity != nil {
		u, err := json.Marshal(rec.identity) // a plain struct: never fails
		if err != nil {
			return b, err
		}
		b = append(b, `,"U":`...)
		b = append(b, u...)
	}
	b = append(b, `,"Z":`...)
	b = strconv.AppendInt(b, int64(rec.size), 10)
	return append(b, '}'), nil
}

// appendJSONString appends s as encoding/json writes it: as it is when it
// holds only letters, digits, '_' and '-' (an event name), else through
// encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			q, _ := json.Marshal(s) // a string: never fails
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// putAppender is what a wal.Writer that takes a value appended in place
// has (a log batch; a bbolt transaction's writer takes a value).
type putAppender interface {
	PutAppend(path [][]byte, key []byte, appendValue func([]byte) ([]byte, error)) error
}

// putRecord writes rec under key in the bucket at path of w.
func putRecord(w wal.Writer, path [][]byte, key []byte, rec *record) error {
	if a, ok := w.(putAppender); ok {
		return a.PutAppend(path, key, func(b []byte) ([]byte, error) { return appendRecordJSON(b, rec) })
	}
	v, err := appendRecordJSON(nil, rec)
	if err != nil {
		return err
	}
	return w.Put(path, key, v)
}
