package ddbclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

func hashOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// signedBoth signs the same request of w with the lean signer and with a
// fresh SDK signer at t and returns both.
func signedBoth(t *testing.T, w *Wire, op string, body []byte, creds aws.Credentials, at time.Time) (lean, sdk *http.Request) {
	t.Helper()
	mk := func() *http.Request {
		req, err := http.NewRequest(http.MethodPost, w.url, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header["Content-Type"] = w.svc.json
		req.Header["X-Amz-Target"] = []string{w.svc.target + op}
		req.Header["Accept-Encoding"] = identity
		return req
	}
	lean, sdk = mk(), mk()
	if !w.lean.sign(lean, &creds, hashOf(body), at) {
		t.Fatalf("%s: the lean signer left the request to the SDK's", w.url)
	}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, sdk, hashOf(body), w.svc.signing, w.region, at); err != nil {
		t.Fatal(err)
	}
	return lean, sdk
}

func TestY8_LeanSignatureIsTheSDKs(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 1))
	urls := []string{"http://127.0.0.1:8000", "https://dynamodb.eu-west-1.amazonaws.com", "http://localhost:80",
		"https://example.com:443/", "http://[::1]:8000", "http://h.example:8000/base/a%20b/"}
	svcs := []service{dynamoDB, streams, kinesisSvc}
	ops := []string{"GetItem", "PutItem", "BatchGetItem", "TransactWriteItems", "GetRecords"}
	for i := range 300 {
		u, svc := urls[i%len(urls)], svcs[rng.IntN(len(svcs))]
		w := newWire(svc, u, http.DefaultClient, []string{"us-east-1", "eu-west-1", "ap-southeast-2"}[rng.IntN(3)],
			credentials.NewStaticCredentialsProvider("a", "b", ""), retry.NewStandard())
		if !w.lean.ok {
			t.Fatalf("%s: the lean signer disagrees with the SDK's on its sample requests", u)
		}
		body := make([]byte, rng.IntN(3)*rng.IntN(5000)) // some empty
		for j := range body {
			body[j] = byte(rng.IntN(256))
		}
		creds := aws.Credentials{AccessKeyID: fmt.Sprintf("AKID%d", rng.IntN(1000)), SecretAccessKey: fmt.Sprintf("secret/%d+x", rng.Int())}
		if rng.IntN(2) == 0 {
			creds.SessionToken = fmt.Sprintf("IQoJ%d/token+=", rng.Int())
		}
		at := time.Unix(1_700_000_000+rng.Int64N(400_000_000), rng.Int64N(1e9))
		op := ops[rng.IntN(len(ops))]
		lean, sdk := signedBoth(t, w, op, body, creds, at)
		if !sameSigned(lean, sdk) {
			t.Fatalf("%s at %v: lean headers %v host %q; the SDK's %v host %q", u, at, lean.Header, lean.Host, sdk.Header, sdk.Host)
		}
		if got, want := appended(t, w, op, len(body), &creds, hashOf(body), at), signedLines(sdk); got != want {
			t.Fatalf("%s at %v: appended header lines\n%s\nthe SDK's\n%s", u, at, got, want)
		}
	}
}

func TestY8_SigningKeyRollsOverAtTheDateChange(t *testing.T) {
	w := newWire(dynamoDB, "http://127.0.0.1:8000", http.DefaultClient, "us-east-1",
		credentials.NewStaticCredentialsProvider("a", "b", ""), retry.NewStandard())
	creds := aws.Credentials{AccessKeyID: "AKID", SecretAccessKey: "first"}
	body := []byte(`{"TableName":"t"}`)
	for _, step := range []struct {
		at     time.Time
		secret string
		date   string
	}{
		{time.Date(2026, 12, 3, 23, 59, 59, 999e6, time.UTC), "first", "20261203"},
		{time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC), "first", "20261204"},
		// a time in another zone is signed as UTC: still 4 December
		{time.Date(2026, 12, 4, 1, 0, 0, 0, time.FixedZone("CET", 3600)), "first", "20261204"},
		{time.Date(2026, 12, 4, 0, 0, 1, 0, time.UTC), "rotated", "20261204"}, // same key id, new secret
	} {
		creds.SecretAccessKey = step.secret
		lean, sdk := signedBoth(t, w, "PutItem", body, creds, step.at)
		if !sameSigned(lean, sdk) {
			t.Fatalf("at %v with secret %q: lean %v, SDK %v", step.at, step.secret, lean.Header["Authorization"], sdk.Header["Authorization"])
		}
		if k := w.lean.key.Load(); k.date != step.date || k.secret != step.secret {
			t.Fatalf("at %v: the kept key is of %s with secret %q, want %s with %q", step.at, k.date, k.secret, step.date, step.secret)
		}
	}
}

// TestY8_WireRequestsAreSignedAcrossTheDateChange sends requests through
// a Wire whose clock crosses midnight to a server that checks each
// request's signature by signing what it received with the SDK's signer.
func TestY8_WireRequestsAreSignedAcrossTheDateChange(t *testing.T) {
	var mu sync.Mutex
	var dates []string
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		check, _ := http.NewRequest(http.MethodPost, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
		for _, h := range []string{"Content-Type", "X-Amz-Target", "Accept-Encoding"} {
			check.Header[h] = r.Header[h]
		}
		_ = v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "dynafold", SecretAccessKey: "dynafold"},
			check, hashOf(body), "dynamodb", "us-east-1", at)
		if got, want := r.Header.Get("Authorization"), check.Header.Get("Authorization"); got != want {
			http.Error(rw, "signature "+got+", want "+want, http.StatusForbidden)
			return
		}
		mu.Lock()
		dates = append(dates, at.Format("20060102"))
		mu.Unlock()
		_, _ = rw.Write([]byte(`{}`))
	}))
	defer srv.Close()
	w := newWire(dynamoDB, srv.URL, http.DefaultClient, "us-east-1",
		credentials.NewStaticCredentialsProvider("dynafold", "dynafold", ""), retry.NewStandard())
	clock := time.Date(2026, 12, 3, 23, 59, 58, 0, time.UTC)
	w.now = func() time.Time { return clock }
	for range 4 {
		if err := w.Call(context.Background(), "PutItem", []byte(`{"TableName":"t"}`), func([]byte) error { return nil }); err != nil {
			t.Fatalf("at %v: %v", clock, err)
		}
		clock = clock.Add(time.Second)
	}
	if fmt.Sprint(dates) != "[20261203 20261203 20261204 20261204]" {
		t.Fatalf("signed on %v, want two requests on each side of midnight", dates)
	}
}

func TestY8_LeanSigningAllocatesLittle(t *testing.T) {
	w := newWire(dynamoDB, "http://127.0.0.1:8000", http.DefaultClient, "us-east-1",
		credentials.NewStaticCredentialsProvider("a", "b", ""), retry.NewStandard())
	creds := aws.Credentials{AccessKeyID: "AKID", SecretAccessKey: "secret"}
	req, _ := http.NewRequest(http.MethodPost, w.url, http.NoBody)
	req.ContentLength = 100
	at := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	hash := hashOf(nil)
	headers := func() http.Header {
		return http.Header{"Content-Type": w.svc.json, "X-Amz-Target": {"DynamoDB_20120810.PutItem"}, "Accept-Encoding": identity}
	}
	base := testing.AllocsPerRun(100, func() { req.Header = headers() })
	allocs := testing.AllocsPerRun(100, func() {
		req.Header = headers()
		if !w.lean.sign(req, &creds, hash, at) {
			t.Fatal("left to the SDK's signer")
		}
	})
	// the header values' one string and their slice (the SDK's signer:
	// about 40)
	if allocs-base > 2 {
		t.Fatalf("%v allocations per signature, want at most 2", allocs-base)
	}
}

// appended returns the header lines appendSigned writes for a request of
// w's.
func appended(t *testing.T, w *Wire, op string, n int, creds *aws.Credentials, hash string, at time.Time) string {
	t.Helper()
	b, ok := w.lean.appendSigned([]byte("prefix"), identity[0], w.svc.json[0], w.svc.target, op, int64(n), creds, hash, at)
	if !ok || !bytes.HasPrefix(b, []byte("prefix")) {
		t.Fatalf("%s: appendSigned left the request to the SDK's signer", w.url)
	}
	return string(b[len("prefix"):])
}

// signedLines is what the SDK's signer set on req, as appendSigned
// writes it.
func signedLines(req *http.Request) string {
	s := "X-Amz-Date: " + req.Header.Get("X-Amz-Date") + "\r\n"
	if tok := req.Header.Get("X-Amz-Security-Token"); tok != "" {
		s += "X-Amz-Security-Token: " + tok + "\r\n"
	}
	return s + "Authorization: " + req.Header.Get("Authorization") + "\r\n"
}

func TestY8_AppendedSignatureAllocatesNothing(t *testing.T) {
	w := newWire(dynamoDB, "http://127.0.0.1:8000", http.DefaultClient, "us-east-1",
		credentials.NewStaticCredentialsProvider("a", "b", ""), retry.NewStandard())
	creds := aws.Credentials{AccessKeyID: "AKID", SecretAccessKey: "secret", SessionToken: "tok"}
	at := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	hash := hashOf(nil)
	buf := make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(100, func() {
		if _, ok := w.lean.appendSigned(buf[:0], "identity", w.svc.json[0], w.svc.target, "PutItem", 100, &creds, hash, at); !ok {
			t.Fatal("left to the SDK's signer")
		}
	})
	if allocs > 0 {
		t.Fatalf("%v allocations per appended signature, want 0", allocs)
	}
}
