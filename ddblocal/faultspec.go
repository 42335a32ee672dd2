package ddblocal

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// FaultCodes are the codes a fault rate may inject (ParseFaultRate): the
// error codes FaultConfig sends as DynamoDB does, ServiceUnavailable (an
// HTTP 503), and the pseudo-code FaultUnprocessed for BatchGetItem and
// BatchWriteItem.
var FaultCodes = []string{FaultThroughput, FaultThrottling, FaultInternal, "ServiceUnavailable", FaultTransactionConflict, FaultUnprocessed}

// ParseFaultRate reads one fault rate written OP=CODE:RATE, as `host
// ddblocal --fault` takes it: OP a DynamoDB operation ("PutItem"),
// "DynamoDBStreams.<Op>", "Kinesis.<Op>" or "*" for every operation; CODE
// one of FaultCodes; RATE the probability per request, 0 to 1. It is
// added to rates (FaultConfig.Rates), which it creates when nil.
func ParseFaultRate(rates map[string]map[string]float64, spec string) (map[string]map[string]float64, error) {
	op, rest, ok := strings.Cut(spec, "=")
	code, rs, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || op == "" || code == "" || rs == "" {
		return rates, fmt.Errorf("fault %q: write OP=CODE:RATE, e.g. PutItem=%s:0.1 or '*=%s:0.05'", spec, FaultThroughput, FaultInternal)
	}
	if !knownFaultOp(op) {
		return rates, fmt.Errorf("fault %q: no operation %q: give a DynamoDB operation (PutItem, Query, TransactWriteItems, ...), DynamoDBStreams.<Op>, Kinesis.<Op>, or * for every operation", spec, op)
	}
	if !slices.Contains(FaultCodes, code) {
		return rates, fmt.Errorf("fault %q: unknown code %q; the codes: %s", spec, code, strings.Join(FaultCodes, ", "))
	}
	if code == FaultUnprocessed && op != "BatchGetItem" && op != "BatchWriteItem" {
		return rates, fmt.Errorf("fault %q: %s applies to BatchGetItem and BatchWriteItem only", spec, FaultUnprocessed)
	}
	rate, err := strconv.ParseFloat(rs, 64)
	if err != nil || rate < 0 || rate > 1 {
		return rates, fmt.Errorf("fault %q: rate %q: a probability is between 0 and 1 (e.g. 0.05)", spec, rs)
	}
	if rates == nil {
		rates = map[string]map[string]float64{}
	}
	if rates[op] == nil {
		rates[op] = map[string]float64{}
	}
	rates[op][code] = rate
	return rates, nil
}

// knownFaultOp reports whether faults of op can apply: an operation
// ddblocal serves, a streams or Kinesis one, or "*".
func knownFaultOp(op string) bool {
	if op == "*" {
		return true
	}
	if _, ok := handlers[op]; ok {
		return true
	}
	for _, p := range []string{"DynamoDBStreams.", "Kinesis."} {
		if name, ok := strings.CutPrefix(op, p); ok && name != "" {
			return true
		}
	}
	return false
}
