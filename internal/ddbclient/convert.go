package ddbclient

import (
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/attrmap"
)

// ToAttributeValue converts an abi.Value to the SDK's attribute value. Every
// DynamoDB type is supported; numbers keep their decimal text. The zero Value
// (KindInvalid) is an error: it stands for "absent" and has no wire form.
func ToAttributeValue(v abi.Value) (types.AttributeValue, error) {
	switch v.Kind {
	case abi.KindS:
		return &types.AttributeValueMemberS{Value: v.Str}, nil
	case abi.KindN:
		return &types.AttributeValueMemberN{Value: v.Str}, nil
	case abi.KindB:
		b := v.Bytes
		if b == nil {
			b = []byte{}
		}
		return &types.AttributeValueMemberB{Value: b}, nil
	case abi.KindBOOL:
		return &types.AttributeValueMemberBOOL{Value: v.Bool}, nil
	case abi.KindNULL:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case abi.KindM:
		m, err := ToAttributeMap(v.Map)
		if err != nil {
			return nil, err
		}
		if m == nil {
			m = map[string]types.AttributeValue{}
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	case abi.KindL:
		l := make([]types.AttributeValue, len(v.List))
		for i, e := range v.List {
			av, err := ToAttributeValue(e)
			if err != nil {
				return nil, fmt.Errorf("list element %d: %w", i, err)
			}
			l[i] = av
		}
		return &types.AttributeValueMemberL{Value: l}, nil
	case abi.KindSS:
		return &types.AttributeValueMemberSS{Value: append([]string{}, v.Strs...)}, nil
	case abi.KindNS:
		return &types.AttributeValueMemberNS{Value: append([]string{}, v.Strs...)}, nil
	case abi.KindBS:
		bs := make([][]byte, len(v.Blobs))
		copy(bs, v.Blobs)
		return &types.AttributeValueMemberBS{Value: bs}, nil
	}
	return nil, fmt.Errorf("%w: kind %d", ErrInvalidValue, v.Kind)
}

// FromAttributeValue converts an SDK attribute value to an abi.Value. An
// unknown member type (a newer SDK's) is an error, never silently dropped.
func FromAttributeValue(av types.AttributeValue) (abi.Value, error) {
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
		m, err := FromAttributeMap(t.Value)
		if err != nil {
			return abi.Value{}, err
		}
		return abi.M(m), nil
	case *types.AttributeValueMemberL:
		l := make([]abi.Value, len(t.Value))
		for i, e := range t.Value {
			v, err := FromAttributeValue(e)
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
		bs := make([][]byte, len(t.Value))
		copy(bs, t.Value)
		return abi.BS(bs...), nil
	case nil:
		return abi.Value{}, fmt.Errorf("%w: nil attribute value", ErrInvalidValue)
	}
	return abi.Value{}, fmt.Errorf("%w: unsupported attribute value %T", ErrInvalidValue, av)
}

// ToAttributeMap converts an item (nil stays nil).
func ToAttributeMap(it abi.Item) (map[string]types.AttributeValue, error) {
	return attrmap.Convert(it, ToAttributeValue)
}

// FromAttributeMap converts an SDK item (nil stays nil).
func FromAttributeMap(m map[string]types.AttributeValue) (abi.Item, error) {
	return attrmap.Convert(m, FromAttributeValue)
}

// ErrInvalidValue is matched by a conversion error: an abi.Value with no
// DynamoDB form, or an attribute value of a type this package does not know.
var ErrInvalidValue = errors.New("invalid attribute value")
