package ddblocal

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/ddblocal/internal/kinesis"
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

// ServeHTTP implements http.Handler: the AWS JSON 1.0 protocol.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reqID := newRequestID()
	ctx := r.Context()
	if r.ContentLength > maxBody {
		// refused before a byte of it is read
		s.writeError(w, reqID, errTooLarge)
		return
	}
	if r.Method != http.MethodPost {
		s.writeError(w, reqID, apierr.New("UnknownOperationException", 400, "Only POST is supported"))
		return
	}
	charge := s.mem.cost(r.ContentLength)
	if err := s.mem.acquire(ctx, charge, s.memWait); err != nil {
		if errors.Is(err, errRequestMemory) {
			s.log.Debug("ddblocal request refused: request memory busy", "id", reqID, "bytes", r.ContentLength)
			s.writeError(w, reqID, s.mem.busyError(charge))
		}
		return // otherwise the client went away while it waited
	}
	defer func() { s.mem.release(charge) }()
	s.hook("admitted", r)
	body, err := readBody(r)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			s.writeError(w, reqID, errTooLarge)
		} else if ctx.Err() == nil {
			s.writeError(w, reqID, apierr.New("SerializationException", 400, "could not read the request body"))
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
	target := r.Header.Get("X-Amz-Target")
	if strings.HasPrefix(target, kinesis.TargetPrefix) {
		s.serveKinesis(ctx, w, reqID, target, body) // kinesis.go
		return
	}
	start := time.Now()
	resp, err := s.dispatch(ctx, target, body)
	if err != nil {
		if errors.Is(err, errClientGone) {
			s.log.Debug("ddblocal request abandoned: the client went away", "target", target, "id", reqID, "took", time.Since(start))
			return
		}
		s.log.Debug("ddblocal request", "target", target, "id", reqID, "err", err, "took", time.Since(start))
		s.writeError(w, reqID, err)
		return
	}
	s.log.Debug("ddblocal request", "target", target, "id", reqID, "took", time.Since(start))
	s.writeBody(w, reqID, http.StatusOK, resp)
}

func (s *Server) hook(stage string, r *http.Request) {
	if h := s.testHook.Load(); h != nil {
		(*h)(stage, r)
	}
}

var errTooLarge = apierr.New("RequestEntityTooLarge", 413, "Request entity too large")

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

func (s *Server) dispatch(ctx context.Context, target string, body []byte) (resp []byte, err error) {
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
		if err := checkBody(ctx, body); err != nil {
			return nil, err
		}
		out, err := h(s, ctx, body)
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	case strings.HasPrefix(target, streamsPrefix):
		op := strings.TrimPrefix(target, streamsPrefix)
		s.stats.add("DynamoDBStreams." + op)
		if err := s.faults.before(ctx, "DynamoDBStreams."+op, body); err != nil {
			return nil, err
		}
		if err := checkBody(ctx, body); err != nil {
			return nil, err
		}
		return s.streams.Handle(ctx, op, body)
	}
	return nil, unknownOp()
}

// checkBody refuses a body that is not JSON, not UTF-8, or holds more
// members than decoding it may cost (checkShape), before it is decoded.
func checkBody(ctx context.Context, body []byte) error {
	if !json.Valid(body) {
		return serialization("Start of structure or map found where not expected.")
	}
	if err := checkUTF8(body); err != nil {
		return err
	}
	return checkShape(ctx, body)
}

func unknownOp() error {
	return apierr.New("UnknownOperationException", 400, "")
}

func serialization(msg string) error {
	return apierr.New("SerializationException", 400, "%s", msg)
}

// decode unmarshals a request body; wire errors keep their code, anything
// else is a SerializationException. Once it is decoded, a request whose
// client went away goes no further (errClientGone).
func decode(ctx context.Context, body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		var ae *apierr.Error
		if errors.As(err, &ae) {
			return ae
		}
		return serialization(err.Error())
	}
	return clientGone(ctx)
}

func (s *Server) writeError(w http.ResponseWriter, reqID string, err error) {
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
	if ae.Code == "TransactionCanceledException" {
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
	} else {
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
	s.writeBody(w, reqID, status, b)
}

func (s *Server) writeBody(w http.ResponseWriter, reqID string, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("x-amzn-RequestId", reqID)
	h.Set("x-amz-crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10))
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = io.Copy(w, bytes.NewReader(body))
}

func newRequestID() string {
	var b [26]byte
	_, _ = rand.Read(b[:])
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
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
// errors come from the service framework (coral), the rest from DynamoDB.
func typePrefix(code string) string {
	switch code {
	case "SerializationException", "UnknownOperationException", "MissingAuthenticationTokenException",
		"InvalidSignatureException", "RequestEntityTooLarge":
		return "com.amazon.coral.service#"
	case "ThrottlingException":
		return "com.amazon.coral.availability#"
	}
	return "com.amazonaws.dynamodb.v20120810#"
}
