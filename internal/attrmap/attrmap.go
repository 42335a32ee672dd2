// Package attrmap converts a map of attribute values from one representation
// to another (abi.Item, aws-sdk-go-v2's, aws-lambda-go's, DynamoDB JSON),
// one value at a time, naming the attribute whose value fails.
package attrmap

import "fmt"

// Convert returns m with f applied to every value; nil stays nil. An error
// of f is returned wrapped with the attribute's name.
func Convert[A, B any](m map[string]A, f func(A) (B, error)) (map[string]B, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]B, len(m))
	for k, a := range m {
		b, err := f(a)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", k, err)
		}
		out[k] = b
	}
	return out, nil
}
