package swap_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/dynafold/dynafold/host/swap"
)

// s3Server starts an S3-compatible server (gofakes3, in process) on
// loopback with a versioned bucket, and returns a real SDK client for it.
func s3Server(t testing.TB, bucket string) *s3.Client {
	t.Helper()
	ts := httptest.NewServer(gofakes3.New(s3mem.New()).Server())
	t.Cleanup(ts.Close)
	client := s3.New(s3.Options{
		BaseEndpoint: aws.String(ts.URL), UsePathStyle: true, Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
	ctx := context.Background()
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("CreateBucket: %v", err)
	}
	if _, err := client.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: aws.String(bucket),
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatalf("PutBucketVersioning: %v", err)
	}
	return client
}

func putObject(t testing.TB, c *s3.Client, bucket, key string, b []byte) string {
	t.Helper()
	out, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(b)})
	if err != nil {
		t.Fatalf("PutObject: %v", err)
	}
	return aws.ToString(out.VersionId)
}

func TestH3_S3SourcePollsWithETagAndVersion(t *testing.T) {
	ctx := context.Background()
	const bucket, key = "plugins", "orders/order-summary.wasm"
	client := s3Server(t, bucket)
	ver1 := putObject(t, client, bucket, key, module(t, v1))
	src := swap.NewS3Source(client, bucket, key, time.Hour)
	s, err := swap.Open(ctx, src, swap.Config{Plugin: pluginConfig()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(ctx) })
	if got := s.Current(); got.Plugin != "order-summary@1.0.0" || got.Origin != "s3://plugins/orders/order-summary.wasm?versionId="+ver1 || ver1 == "" {
		t.Fatalf("first version %+v (put as version %q)", got, ver1)
	}
	// Unchanged: answered 304, nothing downloaded.
	if _, changed, err := swap.CheckOnce(ctx, s, src); err != nil || changed {
		t.Fatalf("unchanged check: %v %v", changed, err)
	}
	if st := src.Stats(); st.Downloads != 1 || st.NotModified != 1 {
		t.Errorf("stats after an unchanged poll: %+v", st)
	}
	// A new version is downloaded once and swapped in.
	putObject(t, client, bucket, key, module(t, v2))
	info, changed, err := swap.CheckOnce(ctx, s, src)
	if err != nil || !changed || info.Plugin != "order-summary@2.0.0" {
		t.Fatalf("after v2 was put: %+v %v %v", info, changed, err)
	}
	// The same bytes again as a new object version: not downloaded again.
	putObject(t, client, bucket, key, module(t, v2))
	if _, changed, err := swap.CheckOnce(ctx, s, src); err != nil || changed {
		t.Fatalf("re-put of the same module: %v %v", changed, err)
	}
	if st := src.Stats(); st.Downloads != 2 || st.NotModified != 2 {
		t.Errorf("stats: %+v", st)
	}
	// Rollback by command puts the earlier content back as the current version.
	from, to, err := swap.RollbackS3(ctx, client, bucket, key)
	if err != nil || from != ver1 || to == "" {
		t.Fatalf("RollbackS3: from %q to %q, %v", from, to, err)
	}
	info, changed, err = swap.CheckOnce(ctx, s, src)
	if err != nil || !changed || info.Plugin != "order-summary@1.0.0" || info.Origin != "s3://plugins/orders/order-summary.wasm?versionId="+to {
		t.Fatalf("after RollbackS3: %+v %v %v", info, changed, err)
	}
	// A broken module is refused once, and not downloaded again.
	putObject(t, client, bucket, key, module(t, badABI))
	if _, changed, err := swap.CheckOnce(ctx, s, src); changed || !errors.Is(err, swap.ErrLoad) {
		t.Fatalf("broken module: %v %v", changed, err)
	}
	if _, changed, err := swap.CheckOnce(ctx, s, src); changed || err != nil {
		t.Fatalf("broken module, second poll: %v %v", changed, err)
	}
	if got := s.Current().Plugin; got != "order-summary@1.0.0" {
		t.Errorf("serving %s", got)
	}
	mustServe(t, s, "")
	if st := s.Stats(); st.Swaps != 2 || st.Failed != 1 {
		t.Errorf("swapper stats %+v", st)
	}
}

func TestH3_S3SourceWatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const bucket, key = "plugins", "p.wasm"
	client := s3Server(t, bucket)
	putObject(t, client, bucket, key, module(t, v1))
	src := swap.NewS3Source(client, bucket, key, 10*time.Millisecond)
	s := newSwapperFrom(t, src, swap.Config{})
	done := make(chan error, 1)
	go func() { done <- swap.Watch(ctx, s, src) }()
	putObject(t, client, bucket, key, module(t, v2))
	waitFor(t, "v2 swapped in", func() bool { return s.Current().Version == "2.0.0" })
	mustServe(t, s, "2")
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Watch: %v", err)
	}
}

func newSwapperFrom(t testing.TB, src swap.Source, cfg swap.Config) *swap.Swapper {
	t.Helper()
	if cfg.Plugin.CacheDir == "" {
		cfg.Plugin = pluginConfig()
	}
	s, err := swap.Open(context.Background(), src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

func TestH3_DirSourceWatchAndRollback(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, archive := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "order-summary.wasm")
	if err := os.WriteFile(path, module(t, v1), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := swap.NewDirSource(path, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	s := newSwapperFrom(t, src, swap.Config{Archive: archive})
	done := make(chan error, 1)
	go func() { done <- swap.Watch(ctx, s, src) }()

	replace := func(b []byte) {
		tmp := filepath.Join(dir, ".next")
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	replace(module(t, v2))
	waitFor(t, "v2 swapped in", func() bool { return s.Current().Version == "2.0.0" })
	mustServe(t, s, "2")
	// A broken module in the directory leaves v2 serving.
	replace(module(t, wrongStream))
	waitFor(t, "the broken module refused", func() bool { return s.Stats().Failed == 1 })
	mustServe(t, s, "2")
	// Rollback by command: the archived v1 goes back into place.
	replace(module(t, v2))
	time.Sleep(100 * time.Millisecond) // v2 again: unchanged
	used, err := swap.RollbackDir(archive, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rolled back to %s", used)
	waitFor(t, "v1 rolled back in", func() bool { return s.Current().Version == "1.0.0" })
	mustServe(t, s, "")
	if st := s.Stats(); st.Swaps != 2 || st.Failed != 1 {
		t.Errorf("stats %+v", st)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Watch: %v", err)
	}
}

func TestH3_SourceConfigAndBetweenInvocations(t *testing.T) {
	ctx := context.Background()
	const bucket, key = "plugins", "cfg.wasm"
	client := s3Server(t, bucket)
	putObject(t, client, bucket, key, module(t, v1))
	var sc *swap.SourceConfig
	if err := json.Unmarshal([]byte(`{"s3": {"bucket": "plugins", "key": "cfg.wasm", "interval": "1h"}, "sha256": ["abc"]}`), &sc); err != nil {
		t.Fatal(err)
	}
	cfg := swap.Config{Plugin: pluginConfig()}
	if err := sc.Apply(&cfg, "/etc"); err != nil || !sc.Enabled() || len(cfg.Pins) != 1 {
		t.Fatalf("apply: %+v %v", cfg, err)
	}
	if _, err := sc.Source(ctx, "ignored.wasm"); err != nil {
		t.Fatalf("source from configuration: %v", err)
	}
	bad := swap.SourceConfig{S3: &swap.S3Config{Bucket: "b", Key: "k", Interval: "soon"}}
	if _, err := bad.Source(ctx, ""); err == nil || !strings.Contains(err.Error(), `"soon"`) {
		t.Errorf("bad interval: %v", err)
	}
	// Between: the first check polls, the next ones wait for Every.
	src := swap.NewS3Source(client, bucket, key, time.Hour)
	s := newSwapperFrom(t, src, swap.Config{})
	clock := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	bt := &swap.Between{Swapper: s, Source: src, Every: time.Hour, Now: func() time.Time { return clock }}
	putObject(t, client, bucket, key, module(t, v2))
	if info, changed, err := bt.Check(ctx); err != nil || !changed || info.Version != "2.0.0" {
		t.Fatalf("first check between invocations: %+v %v %v", info, changed, err)
	}
	putObject(t, client, bucket, key, module(t, v1))
	if _, changed, err := bt.Check(ctx); err != nil || changed {
		t.Fatalf("check within Every: %v %v", changed, err)
	}
	if st := src.Stats(); st.Polls != 2 {
		t.Errorf("polls %d, want 2 (Open's and the first Between check)", st.Polls)
	}
	clock = clock.Add(time.Hour) // Every has passed: the next check polls
	if info, changed, err := bt.Check(ctx); err != nil || !changed || info.Version != "1.0.0" {
		t.Fatalf("check after Every: %+v %v %v", info, changed, err)
	}
	if st := src.Stats(); st.Polls != 3 {
		t.Errorf("polls %d, want 3", st.Polls)
	}
}
