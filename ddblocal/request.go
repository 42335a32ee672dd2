package ddblocal

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"

	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
	"github.com/dynafold/dynafold/ddblocal/internal/reqshape"
)

// A request body goes through DynamoDB's stages, in its order: its JSON
// types (SerializationException), the constraints of the API model
// ("1 validation error detected: ..."), then the operation's own checks,
// those of its attribute values among them. checkRequest runs the first
// two in one walk over the body, before it is decoded; the JSON types
// inside attribute values are checked when they are decoded: a body that
// does not decode is read by reqshape.Normalize, which finds DynamoDB's
// SerializationException, or the body as DynamoDB reads it, which the
// operation then decodes again (serve).

// checkRequest refuses a body (JSON: ServeHTTP checked it) that is not
// UTF-8, holds more members than decoding it may cost, has a member of
// the wrong JSON type for shape, or fails its constraints; it returns the
// body to decode (rewritten when it holds values DynamoDB converts). A
// nil shape (an operation without one) counts members only. text: the
// body's strings are known to be text (request.text), checkUTF8 is
// skipped.
func checkRequest(ctx context.Context, shape *reqshape.Shape, body []byte, text bool) ([]byte, error) {
	if !text {
		if err := checkUTF8(body); err != nil {
			return nil, err
		}
	}
	res, err := reqshape.Walk(ctx, body, shape, maxPlainMembers)
	if err != nil {
		return nil, walkError(ctx, err)
	}
	if shape == nil {
		return body, nil
	}
	if res.Serialization || res.Convert {
		if body, err = reqshape.Normalize(body, shape); err != nil {
			return nil, err
		}
		if res, err = reqshape.Walk(ctx, body, shape, maxPlainMembers); err != nil {
			return nil, walkError(ctx, err)
		}
	}
	if perr := res.Err(); perr != nil {
		// a type error inside an attribute value comes first
		if _, err := reqshape.Normalize(body, shape); err != nil {
			return nil, err
		}
		return nil, perr
	}
	return body, nil
}

func walkError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return clientGone(ctx)
	}
	if errors.Is(err, reqshape.ErrTooMany) {
		return apierr.Validation("ddblocal refuses a request with more than %d list elements and map members outside its attribute values (DynamoDB's limits on its lists are far lower); send fewer", maxPlainMembers)
	}
	return err
}

// undecodable is decode's error for a body whose attribute values hold
// values of the wrong JSON type: serve reads the body with
// reqshape.Normalize and runs the operation again.
type undecodable struct{ err error }

func (u *undecodable) Error() string { return u.err.Error() }
func (u *undecodable) Unwrap() error { return u.err }

// decode unmarshals a request body checked by checkRequest into v: an
// attribute value over DynamoDB's limits is its ValidationException; one
// of the wrong JSON type an *undecodable. Once it is decoded, a request
// whose client went away goes no further (errClientGone).
func decode(ctx context.Context, body []byte, v any) error {
	if err := unmarshal(body, v); err != nil {
		var ae *apierr.Error
		if errors.As(err, &ae) && ae.Code != "SerializationException" {
			return ae
		}
		if ae == nil {
			return &undecodable{err: serialization(err.Error())}
		}
		return &undecodable{err: ae}
	}
	return clientGone(ctx)
}

// unmarshal is json.Unmarshal, through the envelope reader (envelope.go)
// for the inputs it reads.
func unmarshal(body []byte, v any) error {
	if ev, ok := v.(enveloped); ok {
		if ok, err := decodeEnvelope(body, ev); ok {
			return err
		}
		reflect.ValueOf(v).Elem().SetZero() // what the reader set
	}
	return json.Unmarshal(body, v)
}

// serve runs an operation's handler on a body checked by checkRequest;
// when its attribute values do not decode, it answers DynamoDB's
// SerializationException, or runs the handler again on the body as
// DynamoDB reads it (a "yes" for a BOOL is true).
func (s *Server) serve(ctx context.Context, h handler, shape *reqshape.Shape, body []byte) (any, error) {
	out, err := h(s, ctx, body)
	u, ok := err.(*undecodable) // handlers return decode's error as is
	if !ok || shape == nil {
		if ok {
			return nil, u.err
		}
		return out, err
	}
	norm, nerr := reqshape.Normalize(body, shape)
	if nerr != nil {
		return nil, nerr
	}
	out, err = h(s, ctx, norm)
	if u, ok := err.(*undecodable); ok {
		return nil, u.err
	}
	return out, err
}
