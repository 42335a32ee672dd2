package expr

import (
	"fmt"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

// kind is the expression parameter a text came from; DynamoDB names it in
// its error messages ("Invalid ConditionExpression: ...").
type kind int

const (
	kindCondition kind = iota
	kindFilter
	kindKeyCondition
	kindUpdate
	kindProjection
)

func (k kind) String() string {
	switch k {
	case kindFilter:
		return "FilterExpression"
	case kindKeyCondition:
		return "KeyConditionExpression"
	case kindUpdate:
		return "UpdateExpression"
	case kindProjection:
		return "ProjectionExpression"
	}
	return "ConditionExpression"
}

// invalid returns "Invalid <kind>: <message>" as a ValidationException.
func invalid(k kind, format string, args ...any) *apierr.Error {
	return apierr.Validation("Invalid %s: %s", k, fmt.Sprintf(format, args...))
}

// errSet keeps the first error of each category found while checking an
// expression; DynamoDB reports categories in a fixed order, not in the
// order they appear in the text.
type errSet map[string]string

func (e errSet) add(cat, format string, args ...any) {
	if _, ok := e[cat]; !ok {
		e[cat] = fmt.Sprintf(format, args...)
	}
}

// first returns the error of the first category of order that has one.
func (e errSet) first(k kind, order ...string) error {
	for _, c := range order {
		if m, ok := e[c]; ok {
			return invalid(k, "%s", m)
		}
	}
	return nil
}

// Error categories, in the order DynamoDB reports them.
const (
	catParens    = "parens"
	catUnknownFn = "unknownFunction"
	catMisused   = "misusedFunction"
	catReserved  = "reserved"
	catSection   = "section"
	catName      = "attrName"
	catValue     = "attrVal"
	catOverlap   = "pathOverlap"
	catConflict  = "pathConflict"
	catOperand   = "operand"
	catCount     = "count"
	catDistinct  = "distinct"
	catFunction  = "function"
	catLimit     = "limit"
	// catCondition is the error DynamoDB settles on after the first
	// comparison or function that has one (settleCondition).
	catCondition = "condition"
)

// Runtime error messages of UpdateItem.
const (
	msgBadOperandType = "An operand in the update expression has an incorrect data type"
	msgInvalidPath    = "The document path provided in the update expression is invalid for update"
	msgMissingAttr    = "The provided expression refers to an attribute that does not exist in the item"
)
