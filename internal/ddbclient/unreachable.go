package ddbclient

import (
	"errors"
	"fmt"
	"net"
	"net/url"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"
)

// ErrUnreachable is matched (errors.Is) by *UnreachableError.
var ErrUnreachable = errors.New("the DynamoDB endpoint did not answer")

// UnreachableError is a request no server answered: the connection to the
// endpoint was refused, timed out, or its name did not resolve. Its text
// names the endpoint and what to check, in place of the SDK's retry
// summary; Unwrap returns the SDK's error.
type UnreachableError struct {
	Endpoint string // scheme and host of the URL the request went to
	Cause    string // the dial error, e.g. "connect: connection refused"
	// Attempts is how many times the request was tried (0: not known).
	Attempts int
	// Sent reports that an earlier attempt went out on a connection and
	// got no answer (the server went away meanwhile): a write may have
	// been applied although no answer said so. Known for the host's item
	// calls (Wire); false when every attempt's dial failed.
	Sent bool
	Err  error // the SDK's error
}

// Error implements error.
func (e *UnreachableError) Error() string {
	u, _ := url.Parse(e.Endpoint)
	env := ` (` + EndpointEnv + ` is read only when the configuration names no endpoint)`
	hint := `check "endpoint" and "region" in the configuration and the network` + env
	if u != nil && isLoopback(u.Hostname()) {
		hint = "is ddblocal running? Start it with `host ddblocal --addr " + u.Host + "` (in another terminal), " +
			`or point "endpoint" in the configuration at the server you run` + env
	}
	if e.Sent {
		return fmt.Sprintf("nothing answered at %s (%s) at the last of %d attempts: %s; an earlier attempt went out and got no answer, so the write may have been applied",
			e.Endpoint, e.Cause, e.Attempts, hint)
	}
	return fmt.Sprintf("nothing answered at %s (%s): %s", e.Endpoint, e.Cause, hint)
}

// Is matches ErrUnreachable.
func (e *UnreachableError) Is(target error) bool { return target == ErrUnreachable }

// Unwrap returns the SDK's error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// Unreachable returns err as an *UnreachableError when it is a request that
// never reached a server (a dial that failed or a name that did not
// resolve), and false for any other error, one a server answered included.
func Unreachable(err error) (*UnreachableError, bool) {
	var ue *UnreachableError
	if errors.As(err, &ue) {
		return ue, true
	}
	var uerr *url.Error
	if !errors.As(err, &uerr) {
		return nil, false
	}
	attempts := 0
	if me := (*retry.MaxAttemptsError)(nil); errors.As(err, &me) {
		attempts = me.Attempt
	}
	var sent *sentBeforeError
	wasSent := errors.As(err, &sent)
	endpoint := uerr.URL
	if u, perr := url.Parse(uerr.URL); perr == nil && u.Host != "" {
		endpoint = u.Scheme + "://" + u.Host
	}
	var dns *net.DNSError
	if errors.As(uerr.Err, &dns) {
		return &UnreachableError{Endpoint: endpoint, Cause: "no such host: " + dns.Name, Attempts: attempts, Sent: wasSent, Err: err}, true
	}
	var op *net.OpError
	if errors.As(uerr.Err, &op) && op.Op == "dial" {
		cause := op.Err.Error()
		if op.Timeout() {
			cause = "connection timed out"
		}
		return &UnreachableError{Endpoint: endpoint, Cause: cause, Attempts: attempts, Sent: wasSent, Err: err}, true
	}
	return nil, false
}

// sentBeforeError wraps the last error of a request an earlier attempt of
// which went out and got no answer (see UnreachableError.Sent).
type sentBeforeError struct{ err error }

func (e *sentBeforeError) Error() string { return e.err.Error() }
func (e *sentBeforeError) Unwrap() error { return e.err }

// sentUnanswered reports whether a failed attempt's err may have reached
// the server unanswered: not an answer (an API error such as throttling),
// and not a dial that failed or a name that did not resolve (the request
// never left).
func sentUnanswered(err error) bool {
	if _, unreachable := Unreachable(err); unreachable {
		return false
	}
	var answered smithy.APIError
	return !errors.As(err, &answered)
}

// Explain returns err as a message should show it: a request no server
// answered as its *UnreachableError (which endpoint, what to check), one
// DynamoDB throttled on every attempt as its *ThrottledError, in place of
// the SDK's retry summary; any other error as it is.
func Explain(err error) error {
	if ue, ok := Unreachable(err); ok {
		return ue
	}
	if te, ok := Throttled(err); ok {
		return te
	}
	return err
}
