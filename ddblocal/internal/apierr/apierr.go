// Package apierr is the error shape of the DynamoDB and DynamoDB Streams wire
// protocol, shared by every part of ddblocal that answers a request.
package apierr

import "fmt"

// Error is an error answered to a client: DynamoDB's exception name (Code),
// its message and the HTTP status it travels with. Reasons is set for
// TransactionCanceledException, one per item of the transaction.
type Error struct {
	Code    string // e.g. "ValidationException", "ResourceNotFoundException"
	Message string
	Status  int // 400 for client errors, 500 for InternalServerError
	Reasons []CancellationReason
	// Item is the item returned with a ConditionalCheckFailedException when
	// ReturnValuesOnConditionCheckFailure is ALL_OLD (DynamoDB JSON, raw).
	Item any
}

// CancellationReason is one entry of a TransactionCanceledException.
type CancellationReason struct {
	Code    string // "None", "ConditionalCheckFailed", "TransactionConflict", ...
	Message string
	Item    any // the item, with ReturnValuesOnConditionCheckFailure ALL_OLD
}

// Error implements error.
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Validation returns a ValidationException with a formatted message.
func Validation(format string, args ...any) *Error {
	return &Error{Code: "ValidationException", Message: fmt.Sprintf(format, args...), Status: 400}
}

// NotFound returns a ResourceNotFoundException.
func NotFound(format string, args ...any) *Error {
	return &Error{Code: "ResourceNotFoundException", Message: fmt.Sprintf(format, args...), Status: 400}
}

// New returns an error with the given code, status and message.
func New(code string, status int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Status: status}
}
