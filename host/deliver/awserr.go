package deliver

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
)

// sdkError returns the *Error of an AWS SDK call that failed. It is
// retryable when the SDK's own retryer would retry it (throttling, a 5xx, a
// timeout, a connection error) or when no answer came; permanent when the
// service answered with a 4xx other than 408 and 429 (a validation error, a
// missing queue or bus, denied access).
func sdkError(target, dest string, e Effect, err error) *Error {
	status := 0
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	code := ""
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	retryable := retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err).Bool() ||
		retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err).Bool()
	permanent := !retryable && status >= 400 && status < 500 && !retryableStatus(status)
	de := newError(target, dest, e, permanent, err)
	de.Status, de.Code = status, code
	return de
}
