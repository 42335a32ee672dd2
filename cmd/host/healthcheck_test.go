package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/host/admin"
	"github.com/dynafold/dynafold/host/telemetry"
)

// TestX6_HealthcheckTurnsTheAdminServerIntoAnExitCode: the command a
// container health check runs exits 0 on /healthz, 1 on a /readyz that is
// not ready (with the server's reason), and 1 with a hint when nothing
// listens.
func TestX6_HealthcheckTurnsTheAdminServerIntoAnExitCode(t *testing.T) {
	ctx := context.Background()
	srv, err := admin.Start(ctx, admin.Options{
		Addr:    "127.0.0.1:0",
		Metrics: telemetry.New(telemetry.Options{}),
		Ready:   func(context.Context) error { return fmt.Errorf("%w: 0 shards held", admin.ErrNotReady) },
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		url      string
		code     int
		inStderr string
	}{
		{srv.URL() + "/healthz", 0, ""},
		{srv.URL() + "/readyz", 1, "503"},
		{srv.URL() + "/nope", 1, "404"},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		code := run(ctx, []string{"healthcheck", "--url", c.url}, &out, &errOut)
		if code != c.code || !strings.Contains(errOut.String(), c.inStderr) {
			t.Errorf("healthcheck --url %s: exit %d, stderr %q; want exit %d and %q", c.url, code, errOut.String(), c.code, c.inStderr)
		}
	}
	url := srv.URL() + "/healthz"
	_ = srv.Close()
	var out, errOut bytes.Buffer
	if code := run(ctx, []string{"healthcheck", "--url", url}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "admin server") {
		t.Errorf("healthcheck with nothing listening: exit %d, stderr %q", code, errOut.String())
	}
}
