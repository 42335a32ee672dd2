package ddbclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// plain holds the clients NewClient built with no middleware but its own.
var plain sync.Map // weak.Pointer[dynamodb.Client] -> struct{}

// markPlain records that c runs no middleware a caller added, so a Wire
// built on it loses nothing by leaving the SDK's stack out.
func markPlain(c *dynamodb.Client) {
	wp := weak.Make(c)
	plain.Store(wp, struct{}{})
	runtime.AddCleanup(c, func(wp weak.Pointer[dynamodb.Client]) { plain.Delete(wp) }, wp)
}

// Plain reports whether c was built by NewClient with no middleware (SDK
// APIOptions) beyond NewClient's own: a Wire on it sends what the SDK
// would. A client with middleware of its caller's (request recorders,
// tracing) is not plain; send its requests through the SDK.
func Plain(c *dynamodb.Client) bool {
	_, ok := plain.Load(weak.Make(c))
	return ok
}

// Wire sends DynamoDB JSON requests the caller encoded and hands it the
// answers to decode, with what the SDK client it is built on would use:
// its endpoint (resolved once, by the SDK's own rules), credentials,
// SigV4 signing, HTTP client and retry policy. Errors are the SDK's: a
// service error is the SDK's type for its code (errors.As
// *types.ConditionalCheckFailedException, *types.TransactionCanceledException
// with its reasons, ...) inside *awshttp.ResponseError and
// *smithy.OperationError, retries exhausted are *retry.MaxAttemptsError,
// and an answer whose x-amz-crc32 does not match its body is retried. It
// skips the SDK's per-request work that is not the request's own: the
// endpoint rules, the middleware stack, the reflection-free but
// allocation-heavy serializers. Safe for concurrent use.
//
// How a request travels: when the SDK client's HTTPClient is the SDK's
// own (*awshttp.BuildableClient, as NewClient and the SDK's defaults
// build it) with no client timeout and no read timeout, the endpoint is
// http:// or https://, no proxy applies to it, keep-alives are on and no
// DialTLSContext, DialTLS or ResponseHeaderTimeout is set, a Wire sends
// its requests on connections of its own: each request written in one
// write on a kept connection and its answer read back on the caller's
// goroutine (dialed with the transport's dialer, TLS with its
// TLSClientConfig, at most its MaxIdleConnsPerHost idle for at most its
// IdleConnTimeout, at most MaxConnsPerHost open). Any other client (a
// caller's own HTTPClient, which may record or change requests; a proxy;
// the settings above) sends them through net/http with client.Do. The
// errors are the same on both paths; on its own connections a Wire
// follows no redirect (the SDK's client follows 307 and 308; DynamoDB
// sends none), and on systems other than Linux it cannot see that an
// idle connection was closed before it writes to it (the SDK's retry
// policy retries that request).
type Wire struct {
	svc     service
	client  aws.HTTPClient
	url     string
	region  string
	creds   aws.CredentialsProvider
	signer  *v4.Signer // the SDK's, for what lean does not sign
	lean    *signer
	now     func() time.Time // the signing clock
	retryer aws.RetryerV2
	own     *ownConns // nil: requests go through client.Do
	// Attempt, when set, is called before every attempt is sent (retries
	// included) with the operation's name.
	Attempt func(op string)
	// Failed, when set, is called with the operation's name and the
	// attempt's error after every attempt that failed (retried or not).
	Failed func(op string, err error)
}

// NewWire returns a Wire sending what c would send, or false when c's
// requests must go through the SDK: a client that is not Plain, or whose
// endpoint the SDK's rules do not resolve to a fixed URL.
func NewWire(ctx context.Context, c *dynamodb.Client) (*Wire, bool) {
	if !Plain(c) {
		return nil, false
	}
	o := c.Options()
	if o.HTTPClient == nil || o.Credentials == nil || o.Retryer == nil || o.Region == "" {
		return nil, false
	}
	p := dynamodb.EndpointParameters{Region: aws.String(o.Region), Endpoint: o.BaseEndpoint,
		UseFIPS:      aws.Bool(o.EndpointOptions.UseFIPSEndpoint == aws.FIPSEndpointStateEnabled),
		UseDualStack: aws.Bool(o.EndpointOptions.UseDualStackEndpoint == aws.DualStackEndpointStateEnabled),
		// The regional endpoint: it needs no account ID from the credentials.
		AccountIdEndpointMode: aws.String(string(aws.AccountIDEndpointModeDisabled))}
	res := o.EndpointResolverV2
	if res == nil {
		res = dynamodb.NewDefaultEndpointResolverV2()
	}
	ep, err := res.ResolveEndpoint(ctx, p)
	if err != nil {
		return nil, false
	}
	return newWire(dynamoDB, ep.URI.String(), o.HTTPClient, o.Region, o.Credentials, o.Retryer), true
}

// service is what a Wire's requests and errors name: the SDK client's
// service ID, the X-Amz-Target prefix, the error types' registry.
type service struct {
	id       string
	target   string
	registry *smithy.TypeRegistry
	errNS    string   // the registry's key of a code is errNS+code
	signing  string   // SigV4's service name
	json     []string // the Content-Type: the protocol's JSON version
}

var (
	dynamoDB = service{id: dynamodb.ServiceID, target: "DynamoDB_20120810.", registry: dynamodb.TypeRegistry,
		errNS: "com.amazonaws.dynamodb#", signing: "dynamodb", json: jsonType}
	streams = service{id: dynamodbstreams.ServiceID, target: "DynamoDBStreams_20120810.", registry: dynamodbstreams.TypeRegistry,
		errNS: "com.amazonaws.dynamodbstreams#", signing: "dynamodb", json: jsonType}
	kinesisSvc = service{id: kinesis.ServiceID, target: "Kinesis_20131202.", registry: kinesis.TypeRegistry,
		errNS: "com.amazonaws.kinesis#", signing: "kinesis", json: []string{"application/x-amz-json-1.1"}}
)

// NewKinesisWire is NewStreamsWire for a Kinesis client: requests of the
// Kinesis API ("GetRecords", ...) in its JSON 1.1, signed for kinesis,
// errors of its types (kinesis/types). Its endpoint is the one the SDK
// resolves for a data-plane call given no stream ARN.
func NewKinesisWire(ctx context.Context, c *kinesis.Client) (*Wire, bool) {
	o := c.Options()
	if o.HTTPClient == nil || o.Credentials == nil || o.Retryer == nil || o.Region == "" {
		return nil, false
	}
	p := kinesis.EndpointParameters{Region: aws.String(o.Region), Endpoint: o.BaseEndpoint,
		UseFIPS:       aws.Bool(o.EndpointOptions.UseFIPSEndpoint == aws.FIPSEndpointStateEnabled),
		UseDualStack:  aws.Bool(o.EndpointOptions.UseDualStackEndpoint == aws.DualStackEndpointStateEnabled),
		OperationType: aws.String("data")}
	res := o.EndpointResolverV2
	if res == nil {
		res = kinesis.NewDefaultEndpointResolverV2()
	}
	ep, err := res.ResolveEndpoint(ctx, p)
	if err != nil {
		return nil, false
	}
	return newWire(kinesisSvc, ep.URI.String(), o.HTTPClient, o.Region, o.Credentials, o.Retryer), true
}

// NewStreamsWire is NewWire for a DynamoDB Streams client: requests of
// the Streams API ("GetRecords", ...), errors of its types
// (*types.ExpiredIteratorException, ... of dynamodbstreams/types). c must
// run no middleware of its caller's but KeepConnectionsMiddleware (a Wire
// leaves the SDK's stack out); false when its endpoint does not resolve
// to a fixed URL.
func NewStreamsWire(ctx context.Context, c *dynamodbstreams.Client) (*Wire, bool) {
	o := c.Options()
	if o.HTTPClient == nil || o.Credentials == nil || o.Retryer == nil || o.Region == "" {
		return nil, false
	}
	p := dynamodbstreams.EndpointParameters{Region: aws.String(o.Region), Endpoint: o.BaseEndpoint,
		UseFIPS:      aws.Bool(o.EndpointOptions.UseFIPSEndpoint == aws.FIPSEndpointStateEnabled),
		UseDualStack: aws.Bool(o.EndpointOptions.UseDualStackEndpoint == aws.DualStackEndpointStateEnabled)}
	res := o.EndpointResolverV2
	if res == nil {
		res = dynamodbstreams.NewDefaultEndpointResolverV2()
	}
	ep, err := res.ResolveEndpoint(ctx, p)
	if err != nil {
		return nil, false
	}
	return newWire(streams, ep.URI.String(), o.HTTPClient, o.Region, o.Credentials, o.Retryer), true
}

// newWire is the Wire of service svc at url with a client's HTTP client,
// region, credentials and retry policy (a Retryer without
// GetAttemptToken given the SDK's fallback).
func newWire(svc service, url string, client aws.HTTPClient, region string, creds aws.CredentialsProvider, retryer aws.Retryer) *Wire {
	r2, ok := retryer.(aws.RetryerV2)
	if !ok {
		r2 = retryerV2{retryer}
	}
	w := &Wire{svc: svc, client: client, url: url, region: region, creds: creds, signer: v4.NewSigner(), retryer: r2, now: time.Now}
	w.lean = newSigner(url, svc.signing, region)
	if w.lean.ok && !w.signsAsTheSDK() {
		w.lean.ok = false
	}
	if os.Getenv(HTTPClientEnv) == "net/http" {
		return w
	}
	if w.own = newOwnConns(url, client, w.lean); w.own != nil {
		runtime.AddCleanup(w, (*ownConns).closeIdle, w.own)
	}
	return w
}

// HTTPClientEnv, set to "net/http", makes every Wire built after it send
// its requests through its SDK client's HTTP client (net/http's), as a
// client of the caller's own does, instead of on connections of its own:
// a way back should a server or a network device in between answer the
// Wire's own connections differently from net/http's.
const HTTPClientEnv = "DYNAFOLD_HTTP_CLIENT"

// retryerV2 gives a Retryer without GetAttemptToken the SDK's fallback.
type retryerV2 struct{ aws.Retryer }

func (r retryerV2) GetAttemptToken(context.Context) (func(error) error, error) {
	return r.GetInitialToken(), nil
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Buffer returns an empty buffer from the pool, for a request's body.
func Buffer() *bytes.Buffer {
	b := bufPool.Get().(*bytes.Buffer)
	b.Reset()
	return b
}

// PutBuffer returns a buffer to the pool; the caller keeps no reference.
func PutBuffer(b *bytes.Buffer) {
	if b.Cap() <= 1<<20 {
		bufPool.Put(b)
	}
}

// CallBuffer is Call with a body from Buffer, which it takes: the buffer
// goes back to the pool once net/http has written every body it was given
// (a transport may still be sending a body it was answered before; that
// buffer is left to the garbage collector).
func (w *Wire) CallBuffer(ctx context.Context, op string, buf *bytes.Buffer, decode func(answer []byte) error) error {
	if w.own != nil { // written before each exchange returns
		err := w.call(ctx, op, buf.Bytes(), decode, nil)
		PutBuffer(buf)
		return err
	}
	st := &bodies{}
	err := w.call(st.context(ctx), op, buf.Bytes(), decode, st)
	if st.open.Load() == 0 {
		PutBuffer(buf)
	}
	return err
}

// Call sends the request body of operation op ("PutItem", ...) and calls
// decode with the answer's body, which is valid only during the call.
func (w *Wire) Call(ctx context.Context, op string, body []byte, decode func(answer []byte) error) error {
	if w.own != nil {
		return w.call(ctx, op, body, decode, nil)
	}
	st := &bodies{}
	return w.call(st.context(ctx), op, body, decode, st)
}

// bodies counts the request bodies of a call that net/http has not
// finished writing: one more for each body handed to it (a retry's, a
// body net/http gets again with GetBody), one less as each request's
// write ends (httptrace's WroteRequest, called once the body is no longer
// read). A body is an io.NopCloser of a *bytes.Reader, which net/http
// writes with the headers in one write (a body of another type has its
// headers flushed first: two writes, and two reads at the server), and
// whose WriteTo, once read, answers 0 and no error (see KeepConnections:
// the connection stays open).
type bodies struct {
	open  atomic.Int32
	trace httptrace.ClientTrace
}

// context returns ctx with st's trace.
func (st *bodies) context(ctx context.Context) context.Context {
	st.trace.WroteRequest = func(httptrace.WroteRequestInfo) { st.open.Add(-1) }
	return httptrace.WithClientTrace(ctx, &st.trace)
}

// body returns a new body reading b, counted.
func (st *bodies) body(b []byte) io.ReadCloser {
	st.open.Add(1)
	return io.NopCloser(bytes.NewReader(b))
}

func (w *Wire) call(ctx context.Context, op string, body []byte, decode func(answer []byte) error, st *bodies) error {
	sum := sha256.Sum256(body)
	var hexSum [2 * sha256.Size]byte
	hex.Encode(hexSum[:], sum[:])
	hash := string(hexSum[:])
	release := func(error) error { return nil }
	maxAttempts := w.retryer.MaxAttempts()
	sent := false // an attempt went out and got no answer
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return w.opError(op, err)
		}
		releaseAttempt, err := w.retryer.GetAttemptToken(ctx)
		if err != nil {
			return w.opError(op, fmt.Errorf("failed to get retry Send token, %w", err))
		}
		if w.Attempt != nil {
			w.Attempt(op)
		}
		err = w.send(ctx, op, body, st, hash, decode)
		_ = release(err)
		_ = releaseAttempt(err)
		if err == nil {
			return nil
		}
		if w.Failed != nil {
			w.Failed(op, err)
		}
		if !w.retryer.IsErrorRetryable(err) {
			return w.opError(op, err)
		}
		if maxAttempts > 0 && attempt >= maxAttempts {
			if sent {
				err = &sentBeforeError{err}
			}
			return w.opError(op, &retry.MaxAttemptsError{Attempt: attempt, Err: err})
		}
		sent = sent || sentUnanswered(err)
		var tokErr error
		if release, tokErr = w.retryer.GetRetryToken(ctx, err); tokErr != nil {
			return w.opError(op, fmt.Errorf("%w: %w", err, tokErr))
		}
		delay, derr := w.retryer.RetryDelay(attempt, err)
		if derr != nil {
			return w.opError(op, derr)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return w.opError(op, &aws.RequestCanceledError{Err: ctx.Err()})
		case <-t.C:
		}
	}
}

func (w *Wire) opError(op string, err error) error {
	return &smithy.OperationError{ServiceID: w.svc.id, OperationName: op, Err: err}
}

// send makes one attempt: on w's own connections, or through net/http.
func (w *Wire) send(ctx context.Context, op string, body []byte, st *bodies, hash string, decode func([]byte) error) error {
	if w.own != nil {
		return w.sendOwn(ctx, op, body, hash, decode)
	}
	return w.sendHTTP(ctx, op, body, st, hash, decode)
}

// sendHTTP makes one attempt through net/http.
func (w *Wire) sendHTTP(ctx context.Context, op string, body []byte, st *bodies, hash string, decode func([]byte) error) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, http.NoBody)
	if err != nil {
		return err
	}
	req.Body, req.ContentLength = st.body(body), int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return st.body(body), nil }
	req.Header["Content-Type"] = w.svc.json
	req.Header["X-Amz-Target"] = []string{w.svc.target + op}
	req.Header["Accept-Encoding"] = identity // the checksum is of the bytes as sent
	creds, err := w.creds.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("failed to retrieve credentials: %w", err)
	}
	if now := w.now(); !w.lean.sign(req, &creds, hash, now) {
		if err := w.signer.SignHTTP(ctx, creds, req, hash, w.svc.signing, w.region, now.UTC()); err != nil {
			return fmt.Errorf("failed to sign request: %w", err)
		}
	}
	resp, err := w.client.Do(req)
	if err != nil {
		err = &smithyhttp.RequestSendError{Err: err}
		if ctx.Err() != nil {
			err = &smithy.CanceledError{Err: ctx.Err()}
		}
		return err
	}
	buf := Buffer()
	defer PutBuffer(buf)
	if resp.ContentLength > 0 {
		buf.Grow(int(resp.ContentLength))
	}
	_, rerr := buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if rerr != nil {
		return &smithyhttp.RequestSendError{Err: fmt.Errorf("reading the answer: %w", rerr)}
	}
	answer := buf.Bytes()
	if v := resp.Header.Get("X-Amz-Crc32"); v != "" {
		want, perr := strconv.ParseUint(v, 10, 32)
		if got := crc32.ChecksumIEEE(answer); perr != nil || uint32(want) != got {
			return &ChecksumError{Header: v, Computed: got}
		}
	}
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return responseError(w.svc, resp, answer)
	}
	return decode(answer)
}

var (
	jsonType = []string{"application/x-amz-json-1.0"}
	identity = []string{"identity"}
)

// ChecksumError is an answer whose body does not match its x-amz-crc32
// header: damaged on the way; the request is retried.
type ChecksumError struct {
	Header   string
	Computed uint32
}

// Error implements error.
func (e *ChecksumError) Error() string {
	return fmt.Sprintf("the answer's x-amz-crc32 header is %s but its body's CRC32 is %d: damaged in transit", e.Header, e.Computed)
}

// RetryableError makes the SDK's retry policy retry it.
func (e *ChecksumError) RetryableError() bool { return true }

// sendOwn makes one attempt on w's own connections: the request written
// as net/http writes the Wire's (the same headers, signed the same), the
// answer checked and its errors made as sendHTTP makes them.
func (w *Wire) sendOwn(ctx context.Context, op string, body []byte, hash string, decode func([]byte) error) error {
	creds, err := w.creds.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("failed to retrieve credentials: %w", err)
	}
	p := w.own
	rb := reqBufs.Get().(*[]byte)
	defer func() {
		if cap(*rb) <= 1<<20 {
			reqBufs.Put(rb)
		}
	}()
	b := append((*rb)[:0], "POST "...)
	b = append(b, p.uri...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, p.host...)
	b = append(b, "\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\nAccept-Encoding: identity\r\nContent-Type: "...)
	b = append(b, w.svc.json[0]...)
	b = append(b, "\r\nX-Amz-Target: "...)
	b = append(b, w.svc.target...)
	b = append(b, op...)
	b = append(b, "\r\n"...)
	b, ok := w.lean.appendSigned(b, identity[0], w.svc.json[0], w.svc.target, op, int64(len(body)), &creds, hash, w.now())
	if !ok { // a value the lean signer leaves to the SDK's: net/http, with a body of its own
		*rb = b
		return w.sendHTTP(ctx, op, bytes.Clone(body), &bodies{}, hash, decode)
	}
	b = append(b, "\r\n"...)
	b = append(b, body...)
	*rb = b

	buf := Buffer()
	defer PutBuffer(buf)
	var a answer
	if err := p.roundTrip(ctx, b, buf, &a); err != nil {
		if ctx.Err() != nil {
			return &smithy.CanceledError{Err: ctx.Err()}
		}
		return &smithyhttp.RequestSendError{Err: &url.Error{Op: "Post", URL: w.url, Err: err}}
	}
	answer := buf.Bytes()
	if a.hasCRC {
		if got := crc32.ChecksumIEEE(answer); !a.crcOK || a.crc != got {
			return &ChecksumError{Header: a.crcHeader(), Computed: got}
		}
	}
	if a.status < 200 || a.status >= 300 {
		return responseError(w.svc, a.response(len(answer)), answer)
	}
	return decode(answer)
}
