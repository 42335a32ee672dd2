// Package reqshape checks a DynamoDB request body against the shape of its
// operation before it is decoded, the way DynamoDB's service framework
// does: first the JSON type of every member (a SerializationException,
// "TRUE_VALUE cannot be converted to String"), then the constraints of
// the API model ("1 validation error detected: Value ” at 'tableName'
// failed to satisfy constraint: ..."), in DynamoDB's order and words.
//
// Walk goes over the body once, skipping attribute values (internal/wire
// decodes those within DynamoDB's item limits), and counts the list
// elements and map members outside them so that a small body cannot make
// decoding allocate a hundred times its size. A body holding a value
// DynamoDB converts (a string "yes" for a Boolean, 1.5 for an Integer)
// is rewritten by Normalize, a slower path only such bodies take; so is a
// body whose attribute values do not decode, to find DynamoDB's message.
package reqshape

import "regexp"

// Kind is the type of a value in DynamoDB's API model.
type Kind uint8

// The kinds of value.
const (
	String Kind = iota + 1
	Boolean
	Integer
	Long
	List   // Elem describes the members
	Map    // Elem describes the values; the keys are strings
	Struct // Fields
	// AttrValue is one attribute value ({"S": "x"}): skipped by Check,
	// checked by Normalize.
	AttrValue
	// AttrMap is a map of attribute values (Item, Key,
	// ExpressionAttributeValues): skipped by Walk, checked by Normalize.
	AttrMap
)

// Shape is the type of a value and, for lists, maps and structures, of
// what they hold.
type Shape struct {
	Kind Kind
	// Class names the shape in DynamoDB's messages: a structure's class
	// ("ProvisionedThroughput"), a map's value type as Java spells it.
	Class  string
	Fields []Field // Struct
	Elem   *Field  // List and Map: the members, named "member"
	// Param marks the lists and maps DynamoDB's framework reads as
	// parameterized types, which have their own messages.
	Param bool
}

// Field is a member of a structure (or the members of a list or map)
// with the constraints of the API model, in the order DynamoDB checks
// them.
type Field struct {
	Name   string
	Shape  *Shape
	Checks []Check
}

// CheckOp is a kind of constraint.
type CheckOp uint8

// The constraints of the API model, and two checks DynamoDB makes on a
// top-level parameter before all the others.
const (
	NotNull   CheckOp = iota + 1
	Pattern           // S: a regular expression the whole string must match
	MinLen            // N: a string's length or a list's or map's size
	MaxLen            // N
	Enum              // Enum
	Min               // N: a number's value
	Max               // N
	KeysMatch         // Sub: every map key satisfies the checks in Sub
	Values            // Sub: every map value's size satisfies Sub
	Required          // "The parameter 'X' is required but was not present in the request"
	TableName         // "X must be at least 3 characters long and at most 255 characters long"
)

// Check is one constraint.
type Check struct {
	Op   CheckOp
	N    int64
	S    string
	Enum []string
	Sub  []Check
	// Arn says when the check applies to a table name that may be a
	// table ARN ("arn:..."): 0 always, +1 only to an ARN, -1 only to a
	// name.
	Arn int8
	re  *regexp.Regexp
}

// NamePattern is the pattern of table and index names.
const NamePattern = "[a-zA-Z0-9_.-]+"

// The constructors of checks, for the operation tables.
func notNull() Check          { return Check{Op: NotNull} }
func minLen(n int64) Check    { return Check{Op: MinLen, N: n} }
func maxLen(n int64) Check    { return Check{Op: MaxLen, N: n} }
func atLeast(n int64) Check   { return Check{Op: Min, N: n} }
func atMost(n int64) Check    { return Check{Op: Max, N: n} }
func oneOf(v ...string) Check { return Check{Op: Enum, Enum: v} }
func keys(c ...Check) Check   { return Check{Op: KeysMatch, Sub: c} }
func values(c ...Check) Check { return Check{Op: Values, Sub: c} }
func required() Check         { return Check{Op: Required} }
func tableNameLen() Check     { return Check{Op: TableName} }
func pattern(p string) Check {
	return Check{Op: Pattern, S: p, re: regexp.MustCompile("^(?:" + p + ")$")}
}
func namePattern() Check                            { return pattern(NamePattern) }
func field(name string, s *Shape, c ...Check) Field { return Field{Name: name, Shape: s, Checks: c} }

// nameOnly and arnOnly restrict a check to a plain table name or to a
// table ARN.
func nameOnly(c Check) Check { c.Arn = -1; return c }
func arnOnly(c Check) Check  { c.Arn = 1; return c }

// The shapes of scalars and the constructors of the others.
var (
	str     = &Shape{Kind: String}
	boolean = &Shape{Kind: Boolean}
	integer = &Shape{Kind: Integer}
	long    = &Shape{Kind: Long}
	attr    = &Shape{Kind: AttrValue}
	attrMap = &Shape{Kind: AttrMap, Class: "com.amazonaws.dynamodb.v20120810.AttributeValue"}
)

func structure(class string, f ...Field) *Shape { return &Shape{Kind: Struct, Class: class, Fields: f} }
func list(elem *Shape, c ...Check) *Shape {
	return &Shape{Kind: List, Elem: &Field{Name: "member", Shape: elem, Checks: c}}
}
func mapOf(class string, elem *Shape, c ...Check) *Shape {
	return &Shape{Kind: Map, Class: class, Elem: &Field{Name: "member", Shape: elem, Checks: c}}
}

// matchBytes reports whether b satisfies a Pattern check; the name
// pattern, checked on every request, skips the regular expression.
func (c *Check) matchBytes(b []byte) bool {
	if c.S != NamePattern {
		return c.re.Match(b)
	}
	if len(b) == 0 {
		return false
	}
	for _, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_' || ch == '.' || ch == '-') {
			return false
		}
	}
	return true
}
