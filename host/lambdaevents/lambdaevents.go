// Package lambdaevents converts aws-lambda-go's DynamoDB stream event records
// into host.Record, losslessly for every attribute type, and the records of
// a Kinesis data stream that a DynamoDB table streams its changes to
// (kinesis.go).
package lambdaevents

import (
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/attrmap"
)

// ErrUnsupportedType is matched by an attribute value of a type this
// package does not know.
var ErrUnsupportedType = errors.New("lambdaevents: unsupported attribute type")

// FromEvent converts every record of a Lambda DynamoDB stream event.
func FromEvent(ev events.DynamoDBEvent) ([]host.Record, error) {
	out := make([]host.Record, len(ev.Records))
	for i, r := range ev.Records {
		rec, err := FromRecord(r)
		if err != nil {
			return nil, fmt.Errorf("record %d (%s): %w", i, r.EventID, err)
		}
		out[i] = rec
	}
	return out, nil
}

// FromRecord converts one record.
func FromRecord(r events.DynamoDBEventRecord) (host.Record, error) {
	out := host.Record{
		EventID:        r.EventID,
		EventName:      r.EventName,
		EventVersion:   r.EventVersion,
		EventSource:    r.EventSource,
		EventSourceARN: r.EventSourceArn,
		AWSRegion:      r.AWSRegion,
		DynamoDB: host.StreamRecord{
			ApproximateCreationDateTime: utc(r.Change.ApproximateCreationDateTime.Time),
			SequenceNumber:              r.Change.SequenceNumber,
			SizeBytes:                   r.Change.SizeBytes,
			StreamViewType:              r.Change.StreamViewType,
		},
	}
	if r.UserIdentity != nil {
		out.UserIdentity = &host.UserIdentity{Type: r.UserIdentity.Type, PrincipalID: r.UserIdentity.PrincipalID}
	}
	var err error
	if out.DynamoDB.Keys, err = Item(r.Change.Keys); err != nil {
		return host.Record{}, fmt.Errorf("Keys: %w", err)
	}
	if out.DynamoDB.NewImage, err = Item(r.Change.NewImage); err != nil {
		return host.Record{}, fmt.Errorf("NewImage: %w", err)
	}
	if out.DynamoDB.OldImage, err = Item(r.Change.OldImage); err != nil {
		return host.Record{}, fmt.Errorf("OldImage: %w", err)
	}
	return out, nil
}

// Item converts an image (nil stays nil).
func Item(m map[string]events.DynamoDBAttributeValue) (abi.Item, error) {
	return attrmap.Convert(m, Value)
}

// Value converts one attribute value. Numbers keep their text.
func Value(av events.DynamoDBAttributeValue) (abi.Value, error) {
	switch av.DataType() {
	case events.DataTypeString:
		return abi.S(av.String()), nil
	case events.DataTypeNumber:
		return abi.N(av.Number()), nil
	case events.DataTypeBinary:
		b := av.Binary()
		if b == nil {
			b = []byte{}
		}
		return abi.B(b), nil
	case events.DataTypeBoolean:
		return abi.Bool(av.Boolean()), nil
	case events.DataTypeNull:
		return abi.Null(), nil
	case events.DataTypeMap:
		m, err := Item(av.Map())
		if err != nil {
			return abi.Value{}, err
		}
		return abi.M(m), nil
	case events.DataTypeList:
		l := make([]abi.Value, len(av.List()))
		for i, e := range av.List() {
			v, err := Value(e)
			if err != nil {
				return abi.Value{}, fmt.Errorf("list element %d: %w", i, err)
			}
			l[i] = v
		}
		return abi.L(l...), nil
	case events.DataTypeStringSet:
		return abi.SS(append([]string{}, av.StringSet()...)...), nil
	case events.DataTypeNumberSet:
		return abi.NS(append([]string{}, av.NumberSet()...)...), nil
	case events.DataTypeBinarySet:
		return abi.BS(av.BinarySet()...), nil
	}
	return abi.Value{}, fmt.Errorf("%w: data type %d", ErrUnsupportedType, av.DataType())
}

// ToAttributeValue converts an abi value to aws-lambda-go's (for tests and
// for building events to hand to a handler).
func ToAttributeValue(v abi.Value) (events.DynamoDBAttributeValue, error) {
	switch v.Kind {
	case abi.KindS:
		return events.NewStringAttribute(v.Str), nil
	case abi.KindN:
		return events.NewNumberAttribute(v.Str), nil
	case abi.KindB:
		return events.NewBinaryAttribute(v.Bytes), nil
	case abi.KindBOOL:
		return events.NewBooleanAttribute(v.Bool), nil
	case abi.KindNULL:
		return events.NewNullAttribute(), nil
	case abi.KindM:
		m, err := ToImage(v.Map)
		if err != nil {
			return events.DynamoDBAttributeValue{}, err
		}
		if m == nil {
			m = map[string]events.DynamoDBAttributeValue{}
		}
		return events.NewMapAttribute(m), nil
	case abi.KindL:
		l := make([]events.DynamoDBAttributeValue, len(v.List))
		for i, e := range v.List {
			av, err := ToAttributeValue(e)
			if err != nil {
				return events.DynamoDBAttributeValue{}, err
			}
			l[i] = av
		}
		return events.NewListAttribute(l), nil
	case abi.KindSS:
		return events.NewStringSetAttribute(v.Strs), nil
	case abi.KindNS:
		return events.NewNumberSetAttribute(v.Strs), nil
	case abi.KindBS:
		return events.NewBinarySetAttribute(v.Blobs), nil
	}
	return events.DynamoDBAttributeValue{}, fmt.Errorf("%w: kind %d", ErrUnsupportedType, v.Kind)
}

// ToImage converts an item to aws-lambda-go's image (nil stays nil).
func ToImage(it abi.Item) (map[string]events.DynamoDBAttributeValue, error) {
	return attrmap.Convert(it, ToAttributeValue)
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC()
}
