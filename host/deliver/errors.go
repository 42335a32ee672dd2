package deliver

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// ErrPermanent is matched, with errors.Is, by a delivery error that retrying
// will not fix: the destination refused the effect (an HTTP 4xx other than
// 408 and 429, a service's validation or access error), or the effect has no
// JSON form. The effect or the target's configuration must change before it
// can be delivered. An error that does not match ErrPermanent is retryable.
var ErrPermanent = errors.New("permanent delivery failure")

// Error is a target's delivery error: which effect failed to reach which
// destination, how, and whether retrying can help.
type Error struct {
	Target      string // "webhook", "sqs" or "eventbridge"
	Destination string // the URL, the queue URL or the event bus
	Effect      string // the effect, e.g. "effect 0 of Order o-1 v3"
	Key         string // the effect's idempotency key
	Status      int    // the HTTP status the destination answered; 0 when none
	Code        string // the service's error code, when it gave one
	Permanent   bool   // retrying will not help (errors.Is(err, ErrPermanent))
	Err         error  // the cause
}

// Error returns what failed and what to do about it.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "deliver %s to %s %s", e.Effect, e.Target, e.Destination)
	if e.Status != 0 {
		fmt.Fprintf(&b, ": HTTP %d %s", e.Status, http.StatusText(e.Status))
	}
	if e.Code != "" && (e.Err == nil || !strings.Contains(e.Err.Error(), e.Code)) {
		fmt.Fprintf(&b, ": %s", e.Code) // an SDK error names it already
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	if e.Permanent {
		b.WriteString(" (permanent: retrying will not help; fix the destination or its permissions, then drain again; an effect the consumer will never accept is set aside with `host drain --row KEY --skip 1`, which prints it, and the row's later effects follow)")
	} else {
		b.WriteString(" (retryable: the effect stays at the head of its row's outbox and the next drain delivers it again)")
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is ErrPermanent and e is permanent.
func (e *Error) Is(target error) bool { return target == ErrPermanent && e.Permanent }

// Permanent marks err as permanent: errors.Is(Permanent(err), ErrPermanent)
// is true, and errors.Is and errors.As still see err. A Func callback uses
// it for an effect its destination will never accept. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

type permanentError struct{ err error }

func (p permanentError) Error() string        { return p.err.Error() }
func (p permanentError) Unwrap() error        { return p.err }
func (p permanentError) Is(target error) bool { return target == ErrPermanent }

// newError returns the *Error of delivering e to target's destination.
func newError(target, dest string, e Effect, permanent bool, err error) *Error {
	return &Error{
		Target: target, Destination: dest, Effect: e.describe(),
		Key: e.IdempotencyKey(), Permanent: permanent, Err: err,
	}
}
