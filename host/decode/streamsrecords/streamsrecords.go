// Package streamsrecords converts records read with the DynamoDB Streams API
// (aws-sdk-go-v2/service/dynamodbstreams, GetRecords) into decode.Record,
// losslessly for every attribute type, so a change-feed reader hands
// processBatch the same records Lambda would.
package streamsrecords

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/decode"
)

// EventSource is the eventSource of DynamoDB stream records.
const EventSource = "aws:dynamodb"

// ErrUnsupportedType is matched by an attribute value of a type this
// package does not know.
var ErrUnsupportedType = errors.New("streamsrecords: unsupported attribute type")

// FromRecords converts records in order.
func FromRecords(recs []types.Record) ([]decode.Record, error) {
	out := make([]decode.Record, len(recs))
	for i, r := range recs {
		rec, err := FromRecord(r)
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", i, err)
		}
		out[i] = rec
	}
	return out, nil
}

// FromRecord converts one record.
func FromRecord(r types.Record) (decode.Record, error) {
	out := decode.Record{
		EventID:      deref(r.EventID),
		EventName:    string(r.EventName),
		EventVersion: deref(r.EventVersion),
		EventSource:  deref(r.EventSource),
		AWSRegion:    deref(r.AwsRegion),
	}
	if r.UserIdentity != nil {
		out.UserIdentity = &decode.UserIdentity{Type: deref(r.UserIdentity.Type), PrincipalID: deref(r.UserIdentity.PrincipalId)}
	}
	if d := r.Dynamodb; d != nil {
		if d.ApproximateCreationDateTime != nil {
			out.DynamoDB.ApproximateCreationDateTime = d.ApproximateCreationDateTime.UTC()
		}
		out.DynamoDB.SequenceNumber = deref(d.SequenceNumber)
		if d.SizeBytes != nil {
			out.DynamoDB.SizeBytes = *d.SizeBytes
		}
		out.DynamoDB.StreamViewType = string(d.StreamViewType)
		var err error
		if out.DynamoDB.Keys, err = Item(d.Keys); err != nil {
			return decode.Record{}, fmt.Errorf("Keys: %w", err)
		}
		if out.DynamoDB.NewImage, err = Item(d.NewImage); err != nil {
			return decode.Record{}, fmt.Errorf("NewImage: %w", err)
		}
		if out.DynamoDB.OldImage, err = Item(d.OldImage); err != nil {
			return decode.Record{}, fmt.Errorf("OldImage: %w", err)
		}
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// Item converts an image (nil stays nil).
func Item(m map[string]types.AttributeValue) (abi.Item, error) {
	if m == nil {
		return nil, nil
	}
	out := make(abi.Item, len(m))
	for k, av := range m {
		v, err := Value(av)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}

// Value converts one attribute value; numbers keep their text.
func Value(av types.AttributeValue) (abi.Value, error) {
	switch t := av.(type) {
	case *types.AttributeValueMemberS:
		return abi.S(t.Value), nil
	case *types.AttributeValueMemberN:
		return abi.N(t.Value), nil
	case *types.AttributeValueMemberB:
		b := t.Value
		if b == nil {
			b = []byte{}
		}
		return abi.B(b), nil
	case *types.AttributeValueMemberBOOL:
		return abi.Bool(t.Value), nil
	case *types.AttributeValueMemberNULL:
		return abi.Null(), nil
	case *types.AttributeValueMemberM:
		m, err := Item(t.Value)
		if err != nil {
			return abi.Value{}, err
		}
		return abi.M(m), nil
	case *types.AttributeValueMemberL:
		l := make([]abi.Value, len(t.Value))
		for i, e := range t.Value {
			v, err := Value(e)
			if err != nil {
				return abi.Value{}, fmt.Errorf("list element %d: %w", i, err)
			}
			l[i] = v
		}
		return abi.L(l...), nil
	case *types.AttributeValueMemberSS:
		return abi.SS(append([]string{}, t.Value...)...), nil
	case *types.AttributeValueMemberNS:
		return abi.NS(append([]string{}, t.Value...)...), nil
	case *types.AttributeValueMemberBS:
		return abi.BS(append([][]byte{}, t.Value...)...), nil
	}
	return abi.Value{}, fmt.Errorf("%w: %T", ErrUnsupportedType, av)
}
