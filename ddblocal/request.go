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
// inside attribute values are checked when they are decoded (decode), or
// by reqshape.Normalize when the body has already failed a constraint.

type shapeKey struct{}

// checkRequest refuses a body (JSON: ServeHTTP checked it) that is not
// UTF-8, holds more members than decoding it may cost, has a member of
// the wrong JSON type for shape, or fails its constraints; it returns the
// body to decode (rewritten when it holds values DynamoDB converts), and
// a context carrying the shape for decode. A nil shape (an operation
// without one) counts members only.
func checkRequest(ctx context.Context, shape *reqshape.Shape, body []byte) (context.Context, []byte, error) {
	if err := checkUTF8(body); err != nil {
		return ctx, nil, err
	}
	res, err := reqshape.Walk(body, shape, maxPlainMembers, func() error { return clientGone(ctx) })
	if err != nil {
		return ctx, nil, walkError(err)
	}
	if shape == nil {
		return ctx, body, nil
	}
	if res.Serialization || res.Convert {
		if body, err = reqshape.Normalize(body, shape); err != nil {
			return ctx, nil, err
		}
		if res, err = reqshape.Walk(body, shape, maxPlainMembers, nil); err != nil {
			return ctx, nil, walkError(err)
		}
	}
	if perr := res.Err(); perr != nil {
		// a type error inside an attribute value comes first
		if _, err := reqshape.Normalize(body, shape); err != nil {
			return ctx, nil, err
		}
		return ctx, nil, perr
	}
	return context.WithValue(ctx, shapeKey{}, shape), body, nil
}

func walkError(err error) error {
	if errors.Is(err, reqshape.ErrTooMany) {
		return apierr.Validation("ddblocal refuses a request with more than %d list elements and map members outside its attribute values (DynamoDB's limits on its lists are far lower); send fewer", maxPlainMembers)
	}
	return err
}

// decode unmarshals a request body checked by checkRequest into v: a
// type error in an attribute value is DynamoDB's SerializationException,
// an attribute value over DynamoDB's limits its ValidationException. Once
// it is decoded, a request whose client went away goes no further
// (errClientGone).
func decode(ctx context.Context, body []byte, v any) error {
	if err := json.Unmarshal(body, v); err != nil {
		var ae *apierr.Error
		if errors.As(err, &ae) && ae.Code != "SerializationException" {
			return ae
		}
		if shape, _ := ctx.Value(shapeKey{}).(*reqshape.Shape); shape != nil {
			norm, nerr := reqshape.Normalize(body, shape)
			if nerr != nil {
				return nerr
			}
			// an attribute value holding what DynamoDB converts ("yes"
			// for a BOOL): decode the body as DynamoDB reads it
			rv := reflect.ValueOf(v).Elem()
			rv.SetZero()
			if err2 := json.Unmarshal(norm, v); err2 == nil {
				return clientGone(ctx)
			} else if errors.As(err2, &ae) && ae.Code != "SerializationException" {
				return ae
			}
		}
		if ae != nil {
			return ae
		}
		return serialization(err.Error())
	}
	return clientGone(ctx)
}
