package main

import (
	"encoding/json"
	"io"

	"github.com/dynafold/dynafold/abi"
)

// plainItem converts an item to plain JSON values: numbers keep their
// decimal text (json.Number), binaries become base64 strings, sets arrays.
// nil stays nil (JSON null).
func plainItem(it abi.Item) map[string]any {
	if it == nil {
		return nil
	}
	m := make(map[string]any, len(it))
	for k, v := range it {
		m[k] = plainValue(v)
	}
	return m
}

func plainValue(v abi.Value) any {
	switch v.Kind {
	case abi.KindS:
		return v.Str
	case abi.KindN:
		return json.Number(v.Str)
	case abi.KindB:
		return v.Bytes
	case abi.KindBOOL:
		return v.Bool
	case abi.KindM:
		return plainItem(v.Map)
	case abi.KindL:
		l := make([]any, len(v.List))
		for i, e := range v.List {
			l[i] = plainValue(e)
		}
		return l
	case abi.KindSS:
		return append([]string{}, v.Strs...)
	case abi.KindNS:
		l := make([]json.Number, len(v.Strs))
		for i, s := range v.Strs {
			l[i] = json.Number(s)
		}
		return l
	case abi.KindBS:
		return append([][]byte{}, v.Blobs...)
	}
	return nil
}

// plainJSON renders an item as one line of plain JSON, keys sorted.
func plainJSON(it abi.Item) string {
	b, err := json.Marshal(plainItem(it))
	if err != nil {
		return `"unprintable: ` + err.Error() + `"`
	}
	return string(b)
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
