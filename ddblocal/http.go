package ddblocal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/ddblocal/internal/kinesis"
	"github.com/dynafold/dynafold/ddblocal/internal/reqshape"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

const (
	dynamoPrefix  = "DynamoDB_20120810."
	streamsPrefix = "DynamoDBStreams_20120810."
	contentType   = "application/x-amz-json-1.0"
	maxBody       = 16 << 20
)

// handler serves one DynamoDB operation: the request body in, the response
// value (marshalled to JSON) out.
type handler func(s *Server, ctx context.Context, body []byte) (any, error)

var handlers = map[string]handler{}

func register(op string, h handler) { handlers[op] = h }

// ServeHTTP implements http.Handler: the AWS JSON 1.0 protocol, with
// DynamoDB's answers to what is not a request of it (checked in DynamoDB's
// order): a GET is a health check; another method than POST, or a body of
// another content type, is answered 404; a body that is not JSON is a
// SerializationException, an unknown X-Amz-Target an
// UnknownOperationException, a request without SigV4 authentication a
// MissingAuthenticationTokenException (unless Options.AllowUnsigned).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reqID := newRequestID()
	ctx := r.Context()
	if r.Header.Get("Origin") != "" {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		if r.Method == http.MethodOptions {
			writePreflight(w, r, reqID)
			return
		}
	}
	if r.ContentLength > maxBody {
		// refused before a byte of it is read
		s.writeTooLarge(w, reqID)
		return
	}
	switch r.Method {
	case http.MethodPost:
	case http.MethodGet:
		writeReply(w, reqID, reply{status: http.StatusOK, body: []byte("healthy: dynamodb." + s.opts.Region + ".amazonaws.com ")})
		return
	default:
		writeReply(w, reqID, reply{status: http.StatusNotFound, body: notFoundBody})
		return
	}
	charge := s.mem.cost(r.ContentLength)
	if err := s.mem.acquire(ctx, charge, s.memWait); err != nil {
		if errors.Is(err, errRequestMemory) {
			s.log.Debug("ddblocal request refused: request memory busy", "id", reqID, "bytes", r.ContentLength)
			writeReply(w, reqID, s.errorReply(contentType, s.mem.busyError(charge)))
		}
		return // otherwise the client went away while it waited
	}
	defer func() { s.mem.release(charge) }()
	s.hook("admitted", r)
	body, err := readBody(r)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			s.writeTooLarge(w, reqID)
		} else if ctx.Err() == nil {
			writeReply(w, reqID, s.errorReply(contentType, apierr.New("SerializationException", 400, "")))
		}
		return
	}
	if r.ContentLength < 0 { // charged as the largest body: keep what it needs
		if c := s.mem.cost(int64(len(body))); c < charge {
			s.mem.release(charge - c)
			charge = c
		}
	}
	s.hook("read", r)
	q := request{target: r.Header.Get("X-Amz-Target"), contentType: r.Header.Get("Content-Type"), auth: authOf(r)}
	if rep, ok := s.handle(ctx, reqID, &q, body); ok {
		writeReply(w, reqID, rep)
	}
}

// request is what the core of a request's handling (handle) reads of it,
// from net/http's front (ServeHTTP) or ddblocal's own (front.go).
type request struct {
	target      string // X-Amz-Target
	contentType string // Content-Type
	auth        authHeaders
	// ans is the buffer the answer of a DynamoDB operation is written
	// into (nil: a new one); the reply's body may be its bytes, until the
	// buffer is used again.
	ans *bytes.Buffer
	// text is set by front once the body is JSON whose strings are text
	// (ddbjson.ValidText): checkUTF8 would find nothing.
	text bool
}

// reply is an answer: its status, content type ("" sends none), the
// x-amzn-ErrorType header of a Kinesis error ("" none) and its body. Each
// front adds the request id, x-amz-crc32 and Content-Length headers.
type reply struct {
	status  int
	ct      string
	errType string
	body    []byte
}

// handle serves a request whose body is read: the operation's answer, or
// ok false when there is nothing to answer (the client went away).
func (s *Server) handle(ctx context.Context, reqID string, q *request, body []byte) (rep reply, ok bool) {
	target := q.target
	if strings.HasPrefix(target, kinesis.TargetPrefix) {
		// Kinesis speaks JSON 1.1 and answers in it (kinesis.go).
		if !s.opts.AllowUnsigned {
			if err := checkAuth(q.auth); err != nil {
				return s.kinesisErrorReply(err), true
			}
		}
		return s.serveKinesis(ctx, reqID, target, body)
	}
	ct, ok := responseType(q.contentType, len(body) > 0)
	if !ok {
		return reply{status: http.StatusNotFound, body: notFoundBody}, true
	}
	debug := s.log.Enabled(ctx, slog.LevelDebug) // the debug log's arguments cost a clock read and allocations
	var start time.Time
	if debug {
		start = time.Now()
	}
	resp, err := s.front(q, body)
	if err == nil {
		resp, err = s.dispatch(ctx, target, body, q.text, q.ans)
	}
	if err != nil {
		if errors.Is(err, errClientGone) || ctx.Err() != nil { // as serveKinesis: an injected latency ends so too
			s.log.Debug("ddblocal request abandoned: the client went away", "target", target, "id", reqID, "took", time.Since(start))
			return reply{}, false
		}
		s.log.Debug("ddblocal request", "target", target, "id", reqID, "err", err, "took", time.Since(start))
		return s.errorReply(ct, err), true
	}
	if debug {
		s.log.Debug("ddblocal request", "target", target, "id", reqID, "took", time.Since(start))
	}
	return reply{status: http.StatusOK, ct: ct, body: resp}, true
}

// notFoundBody is what DynamoDB answers, with 404, to a method other than
// POST or GET and to a body of another content type than JSON.
var notFoundBody = []byte("<UnknownOperationException/>\n")

// responseType returns the content type of the answer to a request of
// content type header: application/x-amz-json-1.0 when the request is,
// otherwise application/json (parameters ignored); ok is false when a
// request with a body is of neither type.
func responseType(header string, hasBody bool) (ct string, ok bool) {
	mt, _, _ := strings.Cut(header, ";")
	switch strings.TrimSpace(mt) {
	case "application/json":
		return "application/json", true
	case contentType:
		return contentType, true
	}
	return "application/json", !hasBody
}

// front checks what DynamoDB checks before it reads a request's
// parameters, in its order: a body that is JSON, a known operation, SigV4
// authentication, a body at all. It sets q.text when the body's strings
// are text (found in the same pass as its JSON).
func (s *Server) front(q *request, body []byte) ([]byte, error) {
	if len(body) > 0 {
		valid, text := ddbjson.ValidText(body)
		if !valid {
			return nil, apierr.New("SerializationException", 400, "")
		}
		q.text = text
	}
	if !knownTarget(q.target) {
		return nil, unknownOp()
	}
	if !s.opts.AllowUnsigned {
		if err := checkAuth(q.auth); err != nil {
			return nil, err
		}
	}
	if len(body) == 0 {
		return nil, apierr.New("SerializationException", 400, "")
	}
	return nil, nil
}

// knownTarget reports whether an X-Amz-Target names an operation ddblocal
// serves.
func knownTarget(target string) bool {
	if op, ok := strings.CutPrefix(target, dynamoPrefix); ok {
		_, known := handlers[op]
		return known
	}
	if op, ok := strings.CutPrefix(target, streamsPrefix); ok {
		return streamOps[op]
	}
	return false
}

// streamOps are the DynamoDB Streams operations.
var streamOps = map[string]bool{"ListStreams": true, "DescribeStream": true, "GetShardIterator": true, "GetRecords": true}

// writePreflight answers a CORS preflight request (OPTIONS with Origin).
func writePreflight(w http.ResponseWriter, r *http.Request, reqID string) {
	h := w.Header()
	if v := r.Header.Get("Access-Control-Request-Headers"); v != "" {
		h.Set("Access-Control-Allow-Headers", v)
	}
	if v := r.Header.Get("Access-Control-Request-Method"); v != "" {
		h.Set("Access-Control-Allow-Methods", v)
	}
	h.Set("Access-Control-Max-Age", "172800")
	h.Set("x-amzn-RequestId", reqID)
	h.Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
}

func (s *Server) hook(stage string, r *http.Request) {
	if h := s.testHook.Load(); h != nil {
		(*h)(stage, r)
	}
}

var errTooLarge = apierr.New("RequestEntityTooLarge", 413, "Request entity too large")

// writeTooLarge answers a body over 16 MB as DynamoDB does: 413, sent
// chunked (the error body, without a Content-Length).
func (s *Server) writeTooLarge(w http.ResponseWriter, reqID string) {
	b, _ := json.Marshal(map[string]string{"__type": typePrefix(errTooLarge.Code) + errTooLarge.Code, "message": errTooLarge.Message})
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("x-amzn-RequestId", reqID)
	h.Set("x-amz-crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(b)), 10))
	w.WriteHeader(errTooLarge.Status)
	_, _ = w.Write(b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// readBody reads a request body of at most maxBody bytes, into a buffer of
// its declared length when it has one.
func readBody(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n >= 0 {
		body := make([]byte, n)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxBody {
		return nil, errTooLarge
	}
	return body, nil
}

// dispatch serves a request front passed; text: the body's strings are
// text (request.text).
func (s *Server) dispatch(ctx context.Context, target string, body []byte, text bool, ans *bytes.Buffer) (resp []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("ddblocal: panic serving request", "target", target, "panic", p, "stack", string(debug.Stack()))
			resp, err = nil, apierr.New("InternalServerError", 500, "Internal server error")
		}
	}()
	switch {
	case strings.HasPrefix(target, dynamoPrefix):
		op := strings.TrimPrefix(target, dynamoPrefix)
		h, ok := handlers[op]
		if !ok {
			return nil, unknownOp()
		}
		s.stats.add(op)
		if err := s.faults.before(ctx, op, body); err != nil {
			return nil, err
		}
		if read := checkedOps[op]; read != nil && text && !s.uncheckedReads {
			out, ok, err := read(s, ctx, body)
			if ok {
				if err != nil {
					return nil, err
				}
				return marshalAnswer(ans, out)
			}
		}
		shape := reqshape.Ops[op]
		body, err := checkRequest(ctx, shape, body, text)
		if err != nil {
			return nil, err
		}
		out, err := s.serve(ctx, h, shape, body)
		if err != nil {
			return nil, err
		}
		return marshalAnswer(ans, out)
	case strings.HasPrefix(target, streamsPrefix):
		op := strings.TrimPrefix(target, streamsPrefix)
		s.stats.add("DynamoDBStreams." + op)
		if err := s.faults.before(ctx, "DynamoDBStreams."+op, body); err != nil {
			return nil, err
		}
		if _, err := checkRequest(ctx, nil, body, text); err != nil {
			return nil, err
		}
		return s.streams.Handle(ctx, op, body)
	}
	return nil, unknownOp()
}

func unknownOp() error {
	return apierr.New("UnknownOperationException", 400, "")
}

func serialization(msg string) error {
	return apierr.New("SerializationException", 400, "%s", msg)
}

// errorReply answers err in DynamoDB's error shape: __type with its
// namespace, and the message under "message" ("Message" for the errors
// whose DynamoDB spells it so); an error without a message has none.
func (s *Server) errorReply(ct string, err error) reply {
	var ae *apierr.Error
	if !errors.As(err, &ae) {
		s.log.Error("ddblocal: internal error", "err", err)
		ae = apierr.New("InternalServerError", 500, "Internal server error")
	}
	status := ae.Status
	if status == 0 {
		status = 400
	}
	m := map[string]any{}
	m["__type"] = typePrefix(ae.Code) + ae.Code
	switch {
	case ae.Code == "TransactionCanceledException":
		m["Message"] = ae.Message
		reasons := make([]map[string]any, len(ae.Reasons))
		for i, r := range ae.Reasons {
			x := map[string]any{"Code": r.Code}
			if r.Message != "" {
				x["Message"] = r.Message
			}
			if r.Item != nil {
				x["Item"] = r.Item
			}
			reasons[i] = x
		}
		m["CancellationReasons"] = reasons
	case ae.Message == "":
	case ae.Code == "SerializationException":
		m["Message"] = ae.Message
	default:
		m["message"] = ae.Message
		if ae.Item != nil {
			m["Item"] = ae.Item
		}
	}
	b, jerr := json.Marshal(m)
	if jerr != nil {
		b = []byte(`{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"Internal server error"}`)
		status = 500
	}
	return reply{status: status, ct: ct, body: b}
}

// writeReply writes an answer through net/http with DynamoDB's headers.
func writeReply(w http.ResponseWriter, reqID string, rep reply) {
	// Canonical keys assigned directly: what Header.Set sends, without
	// canonicalising each key again.
	// The values share one array (capacity 1 each: an Add copies).
	h := w.Header()
	v := []string{rep.ct, reqID, strconv.FormatUint(uint64(crc32.ChecksumIEEE(rep.body)), 10), strconv.Itoa(len(rep.body))}
	if rep.ct != "" {
		h["Content-Type"] = v[0:1:1]
	}
	h["X-Amzn-Requestid"] = v[1:2:2]
	h["X-Amz-Crc32"] = v[2:3:3]
	h["Content-Length"] = v[3:4:4]
	if rep.errType != "" {
		h["X-Amzn-Errortype"] = []string{rep.errType}
	}
	w.WriteHeader(rep.status)
	_, _ = w.Write(rep.body)
}

// requestIDLen is the length of DynamoDB's request ids: 52 characters of
// [0-9A-Z].
const requestIDLen = 52

// newRequestID returns a request id: it needs to be unique, not secret,
// so it comes from math/rand/v2's per-thread generator.
func newRequestID() string {
	var b [requestIDLen]byte
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var r uint64
	for i := range b {
		if i%12 == 0 { // 12 base-36 digits fit in 64 bits
			r = rand.Uint64()
		}
		b[i] = alphabet[r%36]
		r /= 36
	}
	return string(b[:])
}

// sleepCtx sleeps d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("ddblocal: %w", ctx.Err())
	}
}

// typePrefix is the namespace DynamoDB puts before an error code: protocol
// errors come from the service framework (coral), validation errors from
// its validator, the rest from DynamoDB.
func typePrefix(code string) string {
	switch code {
	case "SerializationException", "UnknownOperationException", "MissingAuthenticationTokenException",
		"InvalidSignatureException", "IncompleteSignatureException", "UnrecognizedClientException", "RequestEntityTooLarge":
		return "com.amazon.coral.service#"
	case "ValidationException":
		return "com.amazon.coral.validate#"
	case "ThrottlingException":
		return "com.amazon.coral.availability#"
	}
	return "com.amazonaws.dynamodb.v20120810#"
}
