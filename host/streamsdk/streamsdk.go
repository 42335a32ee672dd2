// Package streamsdk converts the DynamoDB Streams API's records, as
// aws-sdk-go-v2's dynamodbstreams client returns them, into host.Record,
// losslessly for every attribute type. The change-feed reader and the demo
// use it.
package streamsdk

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/attrmap"
)

// Records converts GetRecords' records.
func Records(recs []types.Record) ([]host.Record, error) {
	out := make([]host.Record, len(recs))
	for i, r := range recs {
		rec, err := Record(r)
		if err != nil {
			return nil, fmt.Errorf("record %d (%s): %w", i, aws.ToString(r.EventID), err)
		}
		out[i] = rec
	}
	return out, nil
}

// Record converts one record.
func Record(r types.Record) (host.Record, error) {
	out := host.Record{
		EventID:      aws.ToString(r.EventID),
		EventName:    string(r.EventName),
		EventVersion: aws.ToString(r.EventVersion),
		EventSource:  aws.ToString(r.EventSource),
		AWSRegion:    aws.ToString(r.AwsRegion),
	}
	if r.UserIdentity != nil {
		out.UserIdentity = &host.UserIdentity{Type: aws.ToString(r.UserIdentity.Type), PrincipalID: aws.ToString(r.UserIdentity.PrincipalId)}
	}
	d := r.Dynamodb
	if d == nil {
		return out, nil
	}
	out.DynamoDB.SequenceNumber = aws.ToString(d.SequenceNumber)
	out.DynamoDB.SizeBytes = aws.ToInt64(d.SizeBytes)
	out.DynamoDB.StreamViewType = string(d.StreamViewType)
	if d.ApproximateCreationDateTime != nil {
		out.DynamoDB.ApproximateCreationDateTime = d.ApproximateCreationDateTime.UTC()
	}
	var err error
	if out.DynamoDB.Keys, err = Item(d.Keys); err != nil {
		return out, fmt.Errorf("Keys: %w", err)
	}
	if out.DynamoDB.NewImage, err = Item(d.NewImage); err != nil {
		return out, fmt.Errorf("NewImage: %w", err)
	}
	if out.DynamoDB.OldImage, err = Item(d.OldImage); err != nil {
		return out, fmt.Errorf("OldImage: %w", err)
	}
	return out, nil
}

// Item converts an image; nil stays nil.
func Item(m map[string]types.AttributeValue) (abi.Item, error) { return attrmap.Convert(m, Value) }

// Value converts one attribute value.
func Value(av types.AttributeValue) (abi.Value, error) {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return abi.S(v.Value), nil
	case *types.AttributeValueMemberN:
		return abi.N(v.Value), nil
	case *types.AttributeValueMemberB:
		return abi.B(v.Value), nil
	case *types.AttributeValueMemberBOOL:
		return abi.Bool(v.Value), nil
	case *types.AttributeValueMemberNULL:
		return abi.Null(), nil
	case *types.AttributeValueMemberM:
		m, err := Item(v.Value)
		return abi.M(m), err
	case *types.AttributeValueMemberL:
		l := make([]abi.Value, len(v.Value))
		for i, e := range v.Value {
			x, err := Value(e)
			if err != nil {
				return abi.Value{}, fmt.Errorf("[%d]: %w", i, err)
			}
			l[i] = x
		}
		return abi.L(l...), nil
	case *types.AttributeValueMemberSS:
		return abi.SS(v.Value...), nil
	case *types.AttributeValueMemberNS:
		return abi.NS(v.Value...), nil
	case *types.AttributeValueMemberBS:
		return abi.BS(v.Value...), nil
	}
	return abi.Value{}, fmt.Errorf("unsupported attribute value %T", av)
}
