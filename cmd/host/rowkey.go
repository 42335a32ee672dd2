package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/ddbjson"
)

// ddbTypes are DynamoDB JSON's type descriptors.
var ddbTypes = map[string]bool{"S": true, "N": true, "B": true, "BOOL": true, "NULL": true, "M": true, "L": true, "SS": true, "NS": true, "BS": true}

// rowKeyArg reads a --row value: a JSON object of the row's key
// attributes, plain ({"pk": "Shipment#sh-1", "sk": "S"}) or DynamoDB JSON
// ({"pk": {"S": "Shipment#sh-1"}, ...}).
func rowKeyArg(s string) (abi.Item, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &raw); err != nil || len(raw) == 0 {
		return nil, fmt.Errorf("--row %q is not a JSON object of the row's key attributes, e.g. '{\"pk\": \"Shipment#sh-1\", \"sk\": \"S\"}'", s)
	}
	typed := true
	for _, v := range raw {
		var inner map[string]json.RawMessage
		if json.Unmarshal(v, &inner) != nil || len(inner) != 1 {
			typed = false
			break
		}
		for t := range inner {
			typed = typed && ddbTypes[t]
		}
	}
	if typed {
		it, err := ddbjson.DecodeItem([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("--row: %w", err)
		}
		return it, nil
	}
	it, err := jsonItem(s)
	if err != nil {
		return nil, fmt.Errorf("--row: %w", err)
	}
	return it, nil
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
