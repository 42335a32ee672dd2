package sidecar

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
)

// A worker's log line for a request no server answered names the endpoint
// and asks whether ddblocal runs, as the commands' errors do, in place of
// the SDK's "exceeded maximum number of attempts"; any other error is
// logged as it is.
func TestH6_AWorkersLogOfAnUnansweredRequestSaysWhatToCheck(t *testing.T) {
	dial := &url.Error{Op: "Post", URL: "http://127.0.0.1:8000/", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	sdk := fmt.Errorf("operation error DynamoDB Streams: GetRecords, exceeded maximum number of attempts, 4, %w", dial)
	got := why(sdk).Error()
	for _, want := range []string{"nothing answered at http://127.0.0.1:8000", "connection refused", "is ddblocal running?"} {
		if !strings.Contains(got, want) {
			t.Errorf("log error lacks %q: %s", want, got)
		}
	}
	if !errors.Is(why(sdk), dial) {
		t.Errorf("the SDK's error is not kept underneath")
	}
	other := errors.New("ThrottlingException: slow down")
	if why(other) != other {
		t.Errorf("an answered error changed: %v", why(other))
	}
}
