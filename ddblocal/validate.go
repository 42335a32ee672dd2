package ddblocal

import (
	"maps"
	"sort"
	"strings"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/ddblocal/internal/expr"
	"github.com/dynafold/dynafold/ddblocal/internal/wire"
)

const maxItemSize = 400 * 1024

// tableNameChars reports whether name is made of the characters a table
// or index name takes (regexp ^[a-zA-Z0-9_.-]+$, without the regexp's cost
// on every request).
func tableNameChars(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// constraintErrors collects "1 validation error detected: ..." messages the
// way DynamoDB's request validation words them.
type constraintErrors []string

func (c *constraintErrors) add(format string) { *c = append(*c, format) }

func (c constraintErrors) err() error {
	if len(c) == 0 {
		return nil
	}
	msgs := c
	if len(msgs) > 10 {
		msgs = msgs[:10]
	}
	n := "1 validation error detected: "
	if len(c) > 1 {
		n = itoa(len(c)) + " validation errors detected: "
	}
	return apierr.Validation("%s%s", n, strings.Join(msgs, "; "))
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// checkTableName adds the constraint errors of the TableName of an
// operation on an existing table, which may also hold the table's ARN: at
// least 1 character (a name too short for CreateTable is simply not found),
// the name pattern unless it is an ARN, at most 255 (an ARN 1024).
func (c *constraintErrors) checkTableName(field, name string) {
	if strings.HasPrefix(name, "arn:") {
		if len(name) > 1024 {
			c.add("Value '" + name + "' at '" + field + "' failed to satisfy constraint: Member must have length less than or equal to 1024")
		}
		return
	}
	if name == "" {
		c.add("Value '' at '" + field + "' failed to satisfy constraint: Member must have length greater than or equal to 1")
		return
	}
	if !tableNameChars(name) {
		c.add("Value '" + name + "' at '" + field + "' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+")
	}
	if len(name) > 255 {
		c.add("Value '" + name + "' at '" + field + "' failed to satisfy constraint: Member must have length less than or equal to 255")
	}
}

// checkDescribeName validates the TableName of DescribeTable and
// DeleteTable, which DynamoDB checks by length first, with its own words.
func checkDescribeName(name string) error {
	if strings.HasPrefix(name, "arn:") {
		var c constraintErrors
		c.checkTableName("tableName", name)
		return c.err()
	}
	if len(name) < 3 || len(name) > 255 {
		return apierr.Validation("TableName must be at least 3 characters long and at most 255 characters long")
	}
	var c constraintErrors
	c.checkTableName("tableName", name)
	return c.err()
}

// tableNameOf returns the table name a TableName parameter designates: the
// name itself, or the name in a table ARN
// (arn:aws:dynamodb:REGION:ACCOUNT:table/NAME).
func tableNameOf(name string) string {
	if !strings.HasPrefix(name, "arn:") {
		return name
	}
	if i := strings.Index(name, ":table/"); i >= 0 {
		rest := name[i+len(":table/"):]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			rest = rest[:j]
		}
		return rest
	}
	return name
}

// checkName adds the constraint errors of a table or index name: 3 to 255
// characters of [a-zA-Z0-9_.-].
func (c *constraintErrors) checkName(field, name string) {
	if name == "" {
		c.add("Value null at '" + field + "' failed to satisfy constraint: Member must not be null")
		return
	}
	if !tableNameChars(name) {
		c.add("Value '" + name + "' at '" + field + "' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+")
	}
	if len(name) < 3 || len(name) > 255 {
		c.add("Value '" + name + "' at '" + field + "' failed to satisfy constraint: Member must have length less than or equal to 255")
		if len(name) < 3 {
			(*c)[len(*c)-1] = "Value '" + name + "' at '" + field + "' failed to satisfy constraint: Member must have length greater than or equal to 3"
		}
	}
}

// normValue validates a value from a request and returns it with numbers
// normalized the way DynamoDB stores them.
func normValue(v abi.Value) (abi.Value, error) {
	if err := expr.ValidateValue(v); err != nil {
		return abi.Value{}, err
	}
	x, _, err := normNumbers(v)
	return x, err
}

// normNumbers returns v with its numbers normalized, and whether any
// changed: v itself when none did, else a copy of what changed.
func normNumbers(v abi.Value) (abi.Value, bool, error) {
	switch v.Kind {
	case abi.KindN:
		n, err := expr.NormalizeNumber(v.Str)
		if err != nil {
			return abi.Value{}, false, err
		}
		return abi.N(n), n != v.Str, nil
	case abi.KindNS:
		out := make([]string, len(v.Strs))
		seen := map[string]bool{}
		for i, s := range v.Strs {
			n, err := expr.NormalizeNumber(s)
			if err != nil {
				return abi.Value{}, false, err
			}
			if seen[n] {
				return abi.Value{}, false, apierr.Validation("Input collection contains duplicates")
			}
			seen[n] = true
			out[i] = n
		}
		return abi.NS(out...), true, nil
	case abi.KindM:
		var m map[string]abi.Value // a copy once a member changed
		for k, e := range v.Map {
			x, changed, err := normNumbers(e)
			if err != nil {
				return abi.Value{}, false, err
			}
			if changed && m == nil {
				m = make(map[string]abi.Value, len(v.Map))
				for k2, e2 := range v.Map {
					m[k2] = e2
				}
			}
			if m != nil {
				m[k] = x
			}
		}
		if m == nil {
			return v, false, nil
		}
		return abi.M(m), true, nil
	case abi.KindL:
		var l []abi.Value // a copy once an element changed
		for i, e := range v.List {
			x, changed, err := normNumbers(e)
			if err != nil {
				return abi.Value{}, false, err
			}
			if changed && l == nil {
				l = append([]abi.Value(nil), v.List...)
			}
			if l != nil {
				l[i] = x
			}
		}
		if l == nil {
			return v, false, nil
		}
		return abi.L(l...), true, nil
	}
	return v, false, nil
}

// normItem validates and normalizes every attribute of an item or key:
// the item itself when no number changed (a decoded request owns its
// items), else a copy.
func normItem(it abi.Item) (abi.Item, error) {
	var out abi.Item
	for k, v := range it {
		if err := expr.ValidateValue(v); err != nil {
			return nil, err
		}
		x, changed, err := normNumbers(v)
		if err != nil {
			return nil, err
		}
		if changed && out == nil {
			out = make(abi.Item, len(it))
			for k2, v2 := range it {
				out[k2] = v2
			}
		}
		if out != nil {
			out[k] = x
		}
	}
	switch {
	case out != nil:
		return out, nil
	case it == nil:
		return abi.Item{}, nil
	}
	return it, nil
}

// normReq validates and normalizes an item or key of a request: its
// first value of no valid type (kept by decoding), else normItem's.
func normReq(it wire.RequestItem) (abi.Item, error) {
	if it.Err != nil {
		return nil, it.Err
	}
	return normItem(it.Item)
}

// normValues validates and normalizes ExpressionAttributeValues.
func normValues(vals map[string]abi.Value) (map[string]abi.Value, error) {
	if vals == nil {
		return nil, nil
	}
	var out map[string]abi.Value // a copy, made once a value changes
	for k, v := range vals {
		err := expr.ValidateValue(v)
		var x abi.Value
		changed := false
		if err == nil {
			x, changed, err = normNumbers(v)
		}
		if err != nil {
			return nil, apierr.Validation("ExpressionAttributeValues contains invalid value: %s for key %s", stripPrefix(err), k)
		}
		if changed && out == nil {
			out = maps.Clone(vals)
		}
		if out != nil {
			out[k] = x
		}
	}
	if out == nil {
		return vals, nil // every value as given: the request's own map
	}
	return out, nil
}

func stripPrefix(err error) string {
	if ae, ok := err.(*apierr.Error); ok {
		return ae.Message
	}
	return err.Error()
}

func emptyKeyWord(k abi.Kind) string {
	if k == abi.KindB {
		return "binary"
	}
	return "string"
}

func isEmptyScalar(v abi.Value) bool {
	return (v.Kind == abi.KindS && v.Str == "") || (v.Kind == abi.KindB && len(v.Bytes) == 0)
}

// checkKeySize checks DynamoDB's key length limits.
func checkKeySize(v abi.Value, isHash bool) error {
	n := len(v.Str)
	if v.Kind == abi.KindB {
		n = len(v.Bytes)
	} else if v.Kind == abi.KindN {
		return nil
	}
	if isHash && n > 2048 {
		return apierr.Validation("One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes")
	}
	if !isHash && n > 1024 {
		return apierr.Validation("One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes")
	}
	return nil
}

// validateKey checks a Key parameter against the table's schema (it needs
// no lock: a key schema never changes).
func (t *table) validateKey(key abi.Item) error {
	names := t.key.names()
	if len(key) != len(names) {
		return apierr.Validation("The provided key element does not match the schema")
	}
	for i, n := range names {
		v, ok := key[n]
		if !ok || v.Kind.String() != t.keyType[n] {
			return apierr.Validation("The provided key element does not match the schema")
		}
		if isEmptyScalar(v) {
			return apierr.Validation("One or more parameter values were invalid: The AttributeValue for a key attribute cannot contain an empty %s value. Key: %s", emptyKeyWord(v.Kind), n)
		}
		if err := checkKeySize(v, i == 0); err != nil {
			return err
		}
	}
	return nil
}

// validateItem checks an item to be written against its table: key
// attributes present and typed, index keys typed and non-empty (its size
// is checked before, by checkItemSize). The caller holds t.mu (read or
// write).
func (t *table) validateItem(item abi.Item) error {
	for i, n := range t.key.names() {
		v, ok := item[n]
		if !ok {
			return apierr.Validation("One or more parameter values were invalid: Missing the key %s in the item", n)
		}
		if v.Kind.String() != t.types[n] {
			return apierr.Validation("One or more parameter values were invalid: Type mismatch for key %s expected: %s actual: %s", n, t.types[n], v.Kind)
		}
		if isEmptyScalar(v) {
			return apierr.Validation("One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty %s value. Key: %s", emptyKeyWord(v.Kind), n)
		}
		if err := checkKeySize(v, i == 0); err != nil {
			return err
		}
	}
	ixs := t.allIndexes()
	sort.Slice(ixs, func(i, j int) bool { return ixs[i].IndexName < ixs[j].IndexName }) // DynamoDB names the first
	for _, ix := range ixs {
		for _, n := range schemaKey(ix.KeySchema).names() {
			v, ok := item[n]
			if !ok {
				continue
			}
			if v.Kind.String() != t.types[n] {
				return apierr.Validation("One or more parameter values were invalid: Type mismatch for Index Key %s Expected: %s Actual: %s IndexName: %s", n, t.types[n], v.Kind, ix.IndexName)
			}
			if isEmptyScalar(v) {
				return apierr.Validation("One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty %s value. IndexName: %s, IndexKey: %s", emptyKeyWord(v.Kind), ix.IndexName, n)
			}
		}
	}
	return nil
}

// checkItemSize refuses an item over 400 KB (callers check it where
// DynamoDB does, before the table).
func checkItemSize(item abi.Item) error {
	if expr.ItemSize(item) > maxItemSize {
		return apierr.Validation("Item size has exceeded the maximum allowed size")
	}
	return nil
}

// keyNames returns the key attribute names of the table and its indexes.
func (t *table) keyAttrNames() []string {
	set := map[string]bool{}
	for _, n := range t.key.names() {
		set[n] = true
	}
	for _, ix := range t.allIndexes() {
		for _, n := range schemaKey(ix.KeySchema).names() {
			set[n] = true
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
