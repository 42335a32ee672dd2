package ddbclient

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"
)

// throttleCodes are the error codes with which DynamoDB refuses a request
// for its rate: retried with backoff by the SDK's retryer, and returned
// once every attempt was refused.
var throttleCodes = map[string]bool{
	"ProvisionedThroughputExceededException": true,
	"ThrottlingException":                    true,
	"RequestLimitExceeded":                   true,
}

// ThrottledError is a request DynamoDB refused for its rate on every
// attempt the retryer made. Its text says so and what to do, in place of
// the SDK's retry summary; Unwrap returns the SDK's error.
type ThrottledError struct {
	Operation string // e.g. "PutItem" ("" when not known)
	Code      string // e.g. "ProvisionedThroughputExceededException"
	Attempts  int
	Err       error
}

// Error implements error.
func (e *ThrottledError) Error() string {
	op := "the request"
	if e.Operation != "" {
		op = e.Operation
	}
	return fmt.Sprintf("DynamoDB throttled %s on all %d attempts (%s): the table or index is over its capacity, or the account over its request rate; it passes on its own once the load falls, so try again (a running worker retries by itself), or raise the table's capacity (on-demand has no provisioned limit)",
		op, e.Attempts, e.Code)
}

// Unwrap returns the SDK's error.
func (e *ThrottledError) Unwrap() error { return e.Err }

// IsThrottle reports whether err is DynamoDB refusing one attempt for its
// rate (ProvisionedThroughputExceededException, ThrottlingException,
// RequestLimitExceeded): what the retryer retries with backoff.
func IsThrottle(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && throttleCodes[api.ErrorCode()]
}

// Throttled returns err as a *ThrottledError when DynamoDB refused it for
// its rate on every attempt, and false for any other error.
func Throttled(err error) (*ThrottledError, bool) {
	var te *ThrottledError
	if errors.As(err, &te) {
		return te, true
	}
	var me *retry.MaxAttemptsError
	var api smithy.APIError
	if !errors.As(err, &me) || !errors.As(err, &api) || !throttleCodes[api.ErrorCode()] {
		return nil, false
	}
	op := ""
	var oe *smithy.OperationError
	if errors.As(err, &oe) {
		op = oe.Operation()
	}
	return &ThrottledError{Operation: op, Code: api.ErrorCode(), Attempts: me.Attempt, Err: err}, true
}
