// Package jsonconf reads JSON configuration files strictly: a key must be
// spelt exactly like a field's JSON name, no key may appear twice in an
// object, and nothing may follow the top-level value. Every error names the
// JSON path of the value at fault and its line. Duration is a
// time.Duration written as a Go duration string.
package jsonconf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration written in JSON as a Go duration string:
// "30s", "200ms", "1m30s".
type Duration time.Duration

// UnmarshalJSON reads a duration string such as "5s" or "200ms".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("%s is not a duration: write a string such as \"30s\" or \"200ms\"", b)
	}
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// ParseDuration parses a Go duration string such as "30s", "200ms" or
// "1m30s", with an error that says what a duration looks like.
func ParseDuration(s string) (time.Duration, error) {
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: write a number with a unit (ns, us, ms, s, m, h), such as \"30s\" or \"200ms\"", s)
	}
	return v, nil
}

// String returns the duration as Go writes it ("1m30s").
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Decode decodes the one JSON value in b into v, a non-nil pointer, and
// refuses what encoding/json lets pass:
//
//   - a key that is not exactly a field's JSON name (encoding/json matches
//     names case-insensitively), with the field that was probably meant;
//   - a key that appears twice in one object;
//   - anything but white space after the value;
//   - a value of the wrong JSON type, or a number out of its field's range:
//     the range of its Go type, narrowed by a struct tag range:"min,max"
//     (either bound may be empty);
//   - a value refused by its type's UnmarshalJSON.
//
// Each error names the JSON path of the value (projections[0].retry.base)
// and its line. The checks walk the JSON tokens against v's type; v is then
// filled by encoding/json with unknown fields disallowed.
func Decode(b []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("jsonconf: Decode needs a non-nil pointer, got %T", v)
	}
	w := walker{dec: json.NewDecoder(bytes.NewReader(b)), src: b}
	w.dec.UseNumber()
	if err := w.value(rv.Type().Elem(), "", ""); err != nil {
		return err
	}
	if _, err := w.dec.Token(); err != io.EOF {
		return fmt.Errorf("%s: unexpected data after the end of the top-level object: a configuration is exactly one JSON object", w.line(w.dec.InputOffset()))
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	return nil
}

type walker struct {
	dec *json.Decoder
	src []byte
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// line returns "line N" for a byte offset of the source.
func (w *walker) line(off int64) string {
	off = min(max(off, 0), int64(len(w.src)))
	return fmt.Sprintf("line %d", bytes.Count(w.src[:off], []byte("\n"))+1)
}

// where names path in messages.
func where(path string) string {
	if path == "" {
		return "the top-level object"
	}
	return path
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// token reads the next token; a syntax error names its line.
func (w *walker) token() (json.Token, error) {
	t, err := w.dec.Token()
	if err != nil {
		return nil, w.syntax(err)
	}
	return t, nil
}

func (w *walker) syntax(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("%s: invalid JSON: %v", w.line(se.Offset), se)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("invalid JSON: the input ends before the configuration does")
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

// jsonKind names the JSON type of a token for messages.
func jsonKind(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		return "an array"
	case string:
		return fmt.Sprintf("the string %q", v)
	case json.Number:
		return "the number " + v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	return "null"
}

// value checks the next JSON value against type t at path; rng is the
// field's range tag.
func (w *walker) value(t reflect.Type, path, rng string) error {
	for t.Kind() == reflect.Pointer && !t.Implements(unmarshalerType) {
		t = t.Elem()
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		off := w.dec.InputOffset()
		var raw json.RawMessage
		if err := w.dec.Decode(&raw); err != nil {
			return w.syntax(err)
		}
		if string(raw) == "null" {
			return nil
		}
		nt := t
		if nt.Kind() == reflect.Pointer {
			nt = nt.Elem()
		}
		if err := reflect.New(nt).Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
			return fmt.Errorf("%s: %s (%s)", where(path), err, w.line(off+1))
		}
		return nil
	}
	off := w.dec.InputOffset()
	tok, err := w.token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil // null leaves the field as it is
	}
	want := func(what string) error {
		return fmt.Errorf("%s: want %s, got %s (%s)", where(path), what, jsonKind(tok), w.line(off+1))
	}
	switch t.Kind() {
	case reflect.Struct:
		if tok != json.Delim('{') {
			return want("an object")
		}
		return w.object(t, path)
	case reflect.Map:
		if tok != json.Delim('{') {
			return want("an object")
		}
		seen := map[string]bool{}
		for w.dec.More() {
			k, err := w.token()
			if err != nil {
				return err
			}
			key := k.(string)
			if seen[key] {
				return fmt.Errorf("duplicate key %q in %s (%s): each key may appear once", key, where(path), w.line(w.dec.InputOffset()))
			}
			seen[key] = true
			if err := w.value(t.Elem(), join(path, key), ""); err != nil {
				return err
			}
		}
		_, err := w.token()
		return err
	case reflect.Slice, reflect.Array:
		if tok != json.Delim('[') {
			return want("an array")
		}
		for i := 0; w.dec.More(); i++ {
			if err := w.value(t.Elem(), fmt.Sprintf("%s[%d]", path, i), rng); err != nil {
				return err
			}
		}
		_, err := w.token()
		return err
	case reflect.String:
		if _, ok := tok.(string); !ok {
			return want("a string")
		}
	case reflect.Bool:
		if _, ok := tok.(bool); !ok {
			return want("true or false")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := tok.(json.Number)
		if !ok {
			return want("a whole number")
		}
		lo, hi := int64(-1)<<(t.Bits()-1), int64(math.MaxInt64)>>(64-t.Bits())
		lo, hi = narrow(rng, lo, hi)
		if v, err := strconv.ParseInt(string(n), 10, t.Bits()); err != nil || v < lo || v > hi {
			return fmt.Errorf("%s: %s is out of range: use a whole number from %d to %d (%s)", where(path), n, lo, hi, w.line(off+1))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := tok.(json.Number)
		if !ok {
			return want("a whole number")
		}
		lo, hi := narrow(rng, 0, int64(min(uint64(math.MaxInt64), uint64(math.MaxUint64)>>(64-t.Bits()))))
		if v, err := strconv.ParseUint(string(n), 10, t.Bits()); err != nil || v > uint64(hi) || int64(v) < lo {
			return fmt.Errorf("%s: %s is out of range: use a whole number from %d to %d (%s)", where(path), n, lo, hi, w.line(off+1))
		}
	case reflect.Float32, reflect.Float64:
		n, ok := tok.(json.Number)
		if !ok {
			return want("a number")
		}
		if _, err := strconv.ParseFloat(string(n), t.Bits()); err != nil {
			return fmt.Errorf("%s: %s is out of range (%s)", where(path), n, w.line(off+1))
		}
	default: // interface{} and the like: any value, skipped
		return w.skip(tok)
	}
	return nil
}

// narrow applies a range tag "min,max" to the bounds lo and hi.
func narrow(rng string, lo, hi int64) (int64, int64) {
	a, b, ok := strings.Cut(rng, ",")
	if !ok {
		return lo, hi
	}
	if v, err := strconv.ParseInt(a, 10, 64); err == nil {
		lo = max(lo, v)
	}
	if v, err := strconv.ParseInt(b, 10, 64); err == nil {
		hi = min(hi, v)
	}
	return lo, hi
}

// skip consumes the rest of a value whose first token was tok.
func (w *walker) skip(tok json.Token) error {
	if d, ok := tok.(json.Delim); ok && (d == '{' || d == '[') {
		for w.dec.More() {
			if d == '{' {
				if _, err := w.token(); err != nil {
					return err
				}
			}
			t, err := w.token()
			if err != nil {
				return err
			}
			if err := w.skip(t); err != nil {
				return err
			}
		}
		_, err := w.token()
		return err
	}
	return nil
}

// object checks the members of an object (its '{' read) against struct t.
func (w *walker) object(t reflect.Type, path string) error {
	fields := fieldsOf(t)
	seen := map[string]bool{}
	for w.dec.More() {
		k, err := w.token()
		if err != nil {
			return err
		}
		key := k.(string)
		at := w.line(w.dec.InputOffset()) // the end of the key
		f, ok := fields[key]
		if !ok {
			return unknownField(key, path, at, fields)
		}
		if seen[key] {
			return fmt.Errorf("duplicate key %q in %s (%s): each key may appear once", key, where(path), at)
		}
		seen[key] = true
		if err := w.value(f.Type, join(path, key), f.Tag.Get("range")); err != nil {
			return err
		}
	}
	_, err := w.token()
	return err
}

func unknownField(key, path, at string, fields map[string]reflect.StructField) error {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	slices.Sort(names)
	in := "in " + where(path)
	if s := suggest(key, names); s != "" {
		return fmt.Errorf("unknown field %q %s (%s); did you mean %q? Field names are case-sensitive", key, in, at, s)
	}
	return fmt.Errorf("unknown field %q %s (%s); the fields there are: %s", key, in, at, strings.Join(names, ", "))
}

// suggest returns the name key was probably meant to be: the same name in
// other case, else the nearest within two edits.
func suggest(key string, names []string) string {
	for _, n := range names {
		if strings.EqualFold(n, key) {
			return n
		}
	}
	best, bestD := "", 3
	for _, n := range names {
		if d := distance(strings.ToLower(key), strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// distance is the Levenshtein distance of a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// fieldsOf maps the JSON names of t's fields to the fields, as
// encoding/json names them: the tag's name, else the field's name; fields
// of embedded structs without a tag are promoted.
func fieldsOf(t reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for n, sf := range fieldsOf(ft) {
					if _, ok := out[n]; !ok {
						out[n] = sf
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}
