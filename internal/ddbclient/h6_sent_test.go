package ddbclient_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"

	"github.com/dynafold/dynafold/internal/ddbclient"
)

// threeQuickAttempts retries at once, three attempts in all.
func threeQuickAttempts() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = 3
		o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Millisecond, nil })
	})
}

// TestH6_AWriteWhoseServerWentAwayMidRequestSaysItMayHaveBeenApplied: the
// server reads the first attempt and goes away without an answer (as a
// ddblocal killed mid-request does: the write may be stored), and the
// retries find nothing listening. The error is still "nothing answered",
// but it says that an earlier attempt went out, so the write may have been
// applied; when every attempt's dial failed it does not say so.
func TestH6_AWriteWhoseServerWentAwayMidRequestSaysItMayHaveBeenApplied(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		ln.Close() // the retries' dials are refused
		buf := make([]byte, 4096)
		_, _ = c.Read(buf) // the request went out
		c.Close()          // and got no answer
	}()
	w := ddbclient.NewWireTo("http://"+addr, ddbclient.HTTPClient(10), threeQuickAttempts())
	err = call(context.Background(), w)
	ue, ok := ddbclient.Unreachable(err)
	if !ok || !ue.Sent || ue.Attempts != 3 {
		t.Fatalf("%v: unreachable %v (%+v); want unreachable, sent before, 3 attempts", err, ok, ue)
	}
	if !errors.Is(ue, ddbclient.ErrUnreachable) {
		t.Fatalf("%v does not match ErrUnreachable", ue)
	}
	for _, want := range []string{"nothing answered at http://" + addr, "refused", "last of 3 attempts",
		"an earlier attempt went out and got no answer, so the write may have been applied"} {
		if !strings.Contains(ue.Error(), want) {
			t.Errorf("error %q lacks %q", ue, want)
		}
	}

	// Nothing listening at all: no attempt went out.
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr2 := ln2.Addr().String()
	ln2.Close()
	err = call(context.Background(), ddbclient.NewWireTo("http://"+addr2, ddbclient.HTTPClient(10), threeQuickAttempts()))
	ue, ok = ddbclient.Unreachable(err)
	if !ok || ue.Sent || ue.Attempts != 3 || strings.Contains(ue.Error(), "may have been applied") {
		t.Fatalf("%v: unreachable %v (%+v); want unreachable, never sent, 3 attempts, no word of a write applied", err, ok, ue)
	}
}
