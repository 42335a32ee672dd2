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

	"github.com/dynafold/dynafold/internal/suggest"
)

// Duration is a time.Duration written in JSON as a Go duration string:
// "30s", "200ms", "1m30s".
type Duration time.Duration

// UnmarshalJSON reads a duration string such as "5s" or "200ms"; null
// leaves d as it is.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
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
// Every such mistake is reported, not only the first: the error is then
// Errors, one *Error per mistake, each naming the JSON path of the value
// (projections[0].retry.base) and its line, and v is filled with the rest
// of the value (a refused value is left out, as if absent; an unknown or
// repeated key is ignored), so that a caller can check what was read and
// report its own findings beside these. Invalid JSON is a plain error, and
// v is left as it was.
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
		off := w.dec.InputOffset()
		w.errs = append(w.errs, &Error{Line: w.lineAt(off), Whole: true,
			Text: "unexpected data after the end of the top-level object: a configuration is exactly one JSON object"})
	}
	// The value without what was refused: encoding/json fills v with the
	// rest (the walk checked every key, so unknown ones need no refusing).
	dec := json.NewDecoder(bytes.NewReader(w.cleaned()))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if len(w.errs) > 0 {
		return w.errs
	}
	return nil
}

// Error is one mistake Decode found in a value.
type Error struct {
	// Path is the JSON path of the value at fault ("projections[0].retry"),
	// "" for the top-level value; a caller may rewrite it to name the
	// value as its users know it before the error is printed.
	Path string
	Line int // the line of the value (or key) at fault; 0 when unknown
	// Text says what is wrong and what to do. With In set, it reads
	// "<Text> in <path>"; else "<path>: <Text>".
	Text string
	In   bool
	// Key is set when the mistake is a key (unknown or repeated): the
	// value under it was ignored, not refused.
	Key bool
	// Meant is, for an unknown key close to a field's name, the path of
	// that field: the value the writer meant is absent, and a caller
	// checking the rest need not report it missing as well.
	Meant string
	// Whole is set when the mistake is the document's, not a value's
	// (something after the configuration object): Text is printed alone.
	Whole bool
}

// Error implements error.
func (e *Error) Error() string {
	line := ""
	if e.Line > 0 {
		line = fmt.Sprintf(" (line %d)", e.Line)
	}
	if e.Whole {
		return e.Text + line
	}
	if e.In {
		text, more, _ := strings.Cut(e.Text, "; ")
		if more != "" {
			more = "; " + more
		}
		return fmt.Sprintf("%s in %s%s%s", text, where(e.Path), line, more)
	}
	return fmt.Sprintf("%s: %s%s", where(e.Path), e.Text, line)
}

// Errors is every mistake Decode found, in the order of the input.
type Errors []*Error

// Error implements error: one mistake per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the mistakes, for errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

type walker struct {
	dec   *json.Decoder
	src   []byte
	errs  Errors
	edits []edit // what the cleaned value replaces, in input order
}

// edit replaces src[start:end] in the cleaned value.
type edit struct {
	start, end int64
	with       string
}

// cleaned returns the source with every edit made: refused values become
// null (absent), ignored keys a name no field has.
func (w *walker) cleaned() []byte {
	if len(w.edits) == 0 {
		return w.src
	}
	slices.SortFunc(w.edits, func(a, b edit) int { return int(a.start - b.start) })
	var out bytes.Buffer
	at := int64(0)
	for _, e := range w.edits {
		if e.start < at {
			continue // inside a value already replaced
		}
		out.Write(w.src[at:e.start])
		out.WriteString(e.with)
		at = e.end
	}
	out.Write(w.src[at:])
	return out.Bytes()
}

// next returns where the token after offset off starts: past white space
// and the separators ':' and ','.
func (w *walker) next(off int64) int64 {
	for off < int64(len(w.src)) {
		switch w.src[off] {
		case ' ', '\t', '\n', '\r', ':', ',':
			off++
			continue
		}
		break
	}
	return off
}

// refuse records a mistake in the value that starts at start, whose last
// token has been read: the value is left out of the decoding.
func (w *walker) refuse(path string, start int64, in bool, format string, args ...any) {
	w.errs = append(w.errs, &Error{Path: path, Line: w.lineAt(start), Text: fmt.Sprintf(format, args...), In: in})
	w.edits = append(w.edits, edit{start, w.dec.InputOffset(), "null"})
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// line returns "line N" for a byte offset of the source.
func (w *walker) line(off int64) string { return fmt.Sprintf("line %d", w.lineAt(off)) }

// lineAt returns the line of a byte offset of the source.
func (w *walker) lineAt(off int64) int {
	off = min(max(off, 0), int64(len(w.src)))
	return bytes.Count(w.src[:off], []byte("\n")) + 1
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
// field's range tag. A mistake in the value is recorded (refuse) and the
// walk goes on past it; only invalid JSON ends the walk, with its error.
func (w *walker) value(t reflect.Type, path, rng string) error {
	for t.Kind() == reflect.Pointer && !t.Implements(unmarshalerType) {
		t = t.Elem()
	}
	start := w.next(w.dec.InputOffset())
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
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
			w.refuse(path, start, false, "%s", err)
		}
		return nil
	}
	tok, err := w.token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil // null leaves the field as it is
	}
	want := func(what string) error {
		if err := w.skip(tok); err != nil {
			return err
		}
		w.refuse(path, start, false, "want %s, got %s", what, jsonKind(tok))
		return nil
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
			kstart := w.next(w.dec.InputOffset())
			k, err := w.token()
			if err != nil {
				return err
			}
			key := k.(string)
			if seen[key] {
				if err := w.ignoreKey(path, kstart, "duplicate key %q; each key may appear once", key); err != nil {
					return err
				}
				continue
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
			w.refuse(path, start, false, "%s is out of range: use a whole number from %d to %d", n, lo, hi)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := tok.(json.Number)
		if !ok {
			return want("a whole number")
		}
		lo, hi := narrow(rng, 0, int64(min(uint64(math.MaxInt64), uint64(math.MaxUint64)>>(64-t.Bits()))))
		if v, err := strconv.ParseUint(string(n), 10, t.Bits()); err != nil || v > uint64(hi) || int64(v) < lo {
			w.refuse(path, start, false, "%s is out of range: use a whole number from %d to %d", n, lo, hi)
		}
	case reflect.Float32, reflect.Float64:
		n, ok := tok.(json.Number)
		if !ok {
			return want("a number")
		}
		if _, err := strconv.ParseFloat(string(n), t.Bits()); err != nil {
			w.refuse(path, start, false, "%s is out of range", n)
		}
	default: // interface{} and the like: any value, skipped
		return w.skip(tok)
	}
	return nil
}

// ignoreKey records a mistake in the key that starts at kstart (just read)
// and skips its value: the key is renamed in the cleaned value, so that no
// field takes the value.
func (w *walker) ignoreKey(path string, kstart int64, format string, args ...any) error {
	kend := w.dec.InputOffset()
	w.errs = append(w.errs, &Error{Path: path, Line: w.lineAt(kend), Text: fmt.Sprintf(format, args...), In: true, Key: true})
	w.edits = append(w.edits, edit{kstart, kend, `"#ignored"`})
	t, err := w.token()
	if err != nil {
		return err
	}
	return w.skip(t)
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
		kstart := w.next(w.dec.InputOffset())
		k, err := w.token()
		if err != nil {
			return err
		}
		key := k.(string)
		f, ok := fields[key]
		var kerr error
		switch {
		case !ok:
			text, meant := unknownField(key, fields)
			kerr = w.ignoreKey(path, kstart, "%s", text)
			if meant != "" && kerr == nil {
				w.errs[len(w.errs)-1].Meant = join(path, meant)
			}
		case seen[key]:
			kerr = w.ignoreKey(path, kstart, "duplicate key %q; each key may appear once", key)
		default:
			seen[key] = true
			kerr = w.value(f.Type, join(path, key), f.Tag.Get("range"))
		}
		if kerr != nil {
			return kerr
		}
	}
	_, err := w.token()
	return err
}

// unknownField says that key is no field, and which field was probably
// meant: "unknown field "x"; did you mean "y"? ..." and "y" ("" when no
// field is close).
func unknownField(key string, fields map[string]reflect.StructField) (text, meant string) {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	slices.Sort(names)
	if s := suggest.Nearest(key, names); s != "" {
		return fmt.Sprintf("unknown field %q; did you mean %q? Field names are case-sensitive", key, s), s
	}
	return fmt.Sprintf("unknown field %q; the fields there are: %s", key, strings.Join(names, ", ")), ""
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
