package host_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/swap"
	"github.com/dynafold/dynafold/internal/testenv"
)

// TestH3_CheckSwapsBetweenBatches configures two hot-swapped projections,
// one on a versioned S3 object polled every hour, one on a watched file,
// and checks them with Host.CheckSwaps as cmd/lambda does between
// invocations: the first check polls S3, later ones within the interval do
// not, while the watched file is checked at every call; a refused module
// is reported and leaves its projection's version serving.
func TestH3_CheckSwapsBetweenBatches(t *testing.T) {
	ctx := context.Background()
	// NewS3Client reads credentials from the environment only (gofakes3
	// does not check them); no shared files, no instance metadata.
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	ts := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	defer ts.Close()
	s3c := s3.New(s3.Options{BaseEndpoint: aws.String(ts.URL), UsePathStyle: true, Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("plugins")}); err != nil {
		t.Fatal(err)
	}
	put := func(b []byte) {
		t.Helper()
		if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("plugins"), Key: aws.String("orders.wasm"),
			Body: bytes.NewReader(b)}); err != nil {
			t.Fatal(err)
		}
	}

	env := testenv.Start(t)
	events, rows := env.Table(t, "events", true), env.Table(t, "rows", false)
	dir, v2 := swapModules(t)
	v1, err := os.ReadFile(filepath.Join(dir, "orders.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	put(v1)
	cfgPath := filepath.Join(dir, "dynafold.json")
	if err := os.WriteFile(cfgPath, []byte(fmt.Sprintf(`{
  "eventStore": {"table": %q, "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "plugins": {"cacheDir": "cache"},
  "projections": [
    {"name": "polled", "plugin": "unused.wasm", "table": %q, "checkpoint": {"field": "version"},
     "hotSwap": {"s3": {"bucket": "plugins", "key": "orders.wasm", "endpoint": %q, "interval": "1h"}}},
    {"name": "watched", "plugin": "orders.wasm", "table": %q, "checkpoint": {"field": "version"},
     "hotSwap": {"watch": true}}]
}`, events, rows, ts.URL, rows)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := host.LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(ctx, cfg, host.WithClient(env.Client))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())

	type want struct {
		version string
		swapped bool
		step    string // of a refusal; "" for none
	}
	check := func(step string, polled, watched want) {
		t.Helper()
		got := h.CheckSwaps(ctx)
		if len(got) != 2 || got[0].Projection != "polled" || got[1].Projection != "watched" {
			t.Fatalf("%s: CheckSwaps = %+v, want polled and watched", step, got)
		}
		for i, w := range []want{polled, watched} {
			c := got[i]
			var ce *swap.CandidateError
			refused := errors.As(c.Err, &ce)
			if c.Serving.Version != w.version || c.Swapped != w.swapped || (w.step == "") != (c.Err == nil) ||
				(w.step != "" && (!refused || ce.Step != w.step)) {
				t.Errorf("%s: %s = {%s swapped %v err %v}, want {%s swapped %v step %q}", step, c.Projection,
					c.Serving.Version, c.Swapped, c.Err, w.version, w.swapped, w.step)
			}
		}
	}

	check("nothing new", want{"1.0.0", false, ""}, want{"1.0.0", false, ""})
	put(v2)
	replaceModule(t, dir, v2)
	// The first CheckSwaps polled S3 within the hour: only the file is checked.
	check("v2 everywhere", want{"1.0.0", false, ""}, want{"2.0.0", true, ""})
	replaceModule(t, dir, []byte("not a module"))
	check("a broken file", want{"1.0.0", false, ""}, want{"2.0.0", false, swap.StepLoad})
	replaceModule(t, dir, v1)
	check("v1 back in the file", want{"1.0.0", false, ""}, want{"1.0.0", true, ""})
}
