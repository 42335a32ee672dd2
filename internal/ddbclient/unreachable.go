package ddbclient

import (
	"errors"
	"fmt"
	"net"
	"net/url"
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
	Err      error  // the SDK's error
}

// Error implements error.
func (e *UnreachableError) Error() string {
	u, _ := url.Parse(e.Endpoint)
	hint := `check "endpoint" and "region" in the configuration (or ` + EndpointEnv + `) and the network`
	if u != nil && isLoopback(u.Hostname()) {
		hint = "is ddblocal running? Start it with `host ddblocal --addr " + u.Host + "` (in another terminal), " +
			`or point "endpoint" in the configuration (or ` + EndpointEnv + `) at the server you run`
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
	endpoint := uerr.URL
	if u, perr := url.Parse(uerr.URL); perr == nil && u.Host != "" {
		endpoint = u.Scheme + "://" + u.Host
	}
	var dns *net.DNSError
	if errors.As(uerr.Err, &dns) {
		return &UnreachableError{Endpoint: endpoint, Cause: "no such host: " + dns.Name, Err: err}, true
	}
	var op *net.OpError
	if errors.As(uerr.Err, &op) && op.Op == "dial" {
		cause := op.Err.Error()
		if op.Timeout() {
			cause = "connection timed out"
		}
		return &UnreachableError{Endpoint: endpoint, Cause: cause, Err: err}, true
	}
	return nil, false
}
