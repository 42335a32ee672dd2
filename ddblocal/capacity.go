package ddblocal

import (
	"math"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal/internal/apierr"
)

// Capacity units as DynamoDB counts them: a read unit per 4 KB read (half
// for an eventually consistent read), a write unit per 1 KB written, twice
// as much inside a transaction; at least one unit (or half) per item.

func readUnits(bytes int, consistent bool) float64 {
	u := math.Max(1, math.Ceil(float64(bytes)/4096))
	if !consistent {
		u /= 2
	}
	return u
}

func writeUnits(old, new abi.Item) float64 {
	sz := 0
	if old != nil {
		sz = itemSize(old)
	}
	if new != nil {
		sz = max(sz, itemSize(new))
	}
	return math.Max(1, math.Ceil(float64(sz)/1024))
}

func checkRCC(v string) error {
	switch v {
	case "", "NONE", "TOTAL", "INDEXES":
		return nil
	}
	return apierr.Validation("1 validation error detected: Value '%s' at 'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]", v)
}

// wantsCapacity reports whether ReturnConsumedCapacity mode asks for the
// capacity a request consumed (consumed answers nil otherwise): the units
// need not be computed when it does not.
func wantsCapacity(mode string) bool { return mode == "TOTAL" || mode == "INDEXES" }

// consumed builds a ConsumedCapacity for ReturnConsumedCapacity mode (nil
// for NONE); index is the index read, if any.
func consumed(mode, table, index string, global bool, units float64) map[string]any {
	if mode != "TOTAL" && mode != "INDEXES" {
		return nil
	}
	c := map[string]any{"TableName": table, "CapacityUnits": units}
	if mode == "INDEXES" {
		if index == "" {
			c["Table"] = map[string]any{"CapacityUnits": units}
		} else {
			key := "LocalSecondaryIndexes"
			if global {
				key = "GlobalSecondaryIndexes"
			}
			c["Table"] = map[string]any{"CapacityUnits": 0.0}
			c[key] = map[string]any{index: map[string]any{"CapacityUnits": units}}
		}
	}
	return c
}

// rccInput is the ReturnConsumedCapacity parameter.
type rccInput struct {
	ReturnConsumedCapacity string
}

// consumedList is the ConsumedCapacity list of a multi-table operation.
func consumedList(mode string, units map[string]float64) []map[string]any {
	if mode != "TOTAL" && mode != "INDEXES" {
		return nil
	}
	out := []map[string]any{}
	for _, name := range sortedNames(units) {
		out = append(out, consumed(mode, name, "", false, units[name]))
	}
	return out
}
