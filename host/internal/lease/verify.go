package lease

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// VerifyPrefix starts the key of a projection's verification item in the
// lease table (a control item, "dynafold#verify#<projection>"): which
// worker runs the next sampled verification pass, and what the last one
// found. Shard ids never start with it, and List leaves these items out.
const VerifyPrefix = ControlPrefix + "verify#"

// Attribute names of a verification item.
const (
	AttrVerifyNext   = "verifyNextMillis"
	AttrVerifyWorker = "verifyWorker"
	AttrVerifyAt     = "verifyAtMillis"
	AttrVerifyTook   = "verifyTookMillis"
	AttrVerifySample = "verifySample"
)

// The counts of a verification item, by attribute name.
var verifyCounts = []string{"rows", "events", "pending", "differs", "missing", "orphan", "ahead", "errors", "unchecked"}

// VerifyResult is what the last sampled verification of a projection
// found, as the lease table keeps it.
type VerifyResult struct {
	Projection string
	Worker     string           // the worker that ran it
	At         time.Time        // when it finished, by that worker's clock
	Took       time.Duration    // how long it ran
	Sample     float64          // the fraction of rows checked
	Counts     map[string]int64 // rows, events, pending, differs, missing, orphan, ahead, errors, unchecked
	Next       time.Time        // when the next pass is due (zero: never claimed)
}

// ClaimVerify makes worker the one to run the next verification pass of
// projection, when the pass is due at now (none was claimed for the
// interval every before it): true when the claim is this worker's. Clocks
// of the workers only need to agree to within a fraction of every.
func (t *Table) ClaimVerify(ctx context.Context, projection, worker string, now time.Time, every time.Duration) (bool, error) {
	_, err := t.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(t.name),
		Key:                      map[string]types.AttributeValue{AttrKey: s(VerifyPrefix + projection)},
		UpdateExpression:         aws.String("SET #next = :next, #w = :w"),
		ConditionExpression:      aws.String("attribute_not_exists(#next) OR #next <= :now"),
		ExpressionAttributeNames: map[string]string{"#next": AttrVerifyNext, "#w": AttrVerifyWorker},
		ExpressionAttributeValues: map[string]types.AttributeValue{":next": n(now.Add(every).UnixMilli()), ":w": s(worker),
			":now": n(now.UnixMilli())}})
	if isConditional(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("claiming the verification of %s in table %s: %w", projection, t.name, err)
	}
	return true, nil
}

// PutVerifyResult records what a verification pass of a projection found.
func (t *Table) PutVerifyResult(ctx context.Context, r VerifyResult) error {
	names := map[string]string{"#w": AttrVerifyWorker, "#at": AttrVerifyAt, "#took": AttrVerifyTook, "#sample": AttrVerifySample}
	vals := map[string]types.AttributeValue{":w": s(r.Worker), ":at": n(r.At.UnixMilli()), ":took": n(r.Took.Milliseconds()),
		":sample": &types.AttributeValueMemberN{Value: strconv.FormatFloat(r.Sample, 'g', -1, 64)}}
	set := []string{"#w = :w", "#at = :at", "#took = :took", "#sample = :sample"}
	for i, c := range verifyCounts {
		nk, vk := fmt.Sprintf("#c%d", i), fmt.Sprintf(":c%d", i)
		names[nk], vals[vk] = c, n(r.Counts[c])
		set = append(set, nk+" = "+vk)
	}
	_, err := t.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(t.name),
		Key:              map[string]types.AttributeValue{AttrKey: s(VerifyPrefix + r.Projection)},
		UpdateExpression: aws.String("SET " + strings.Join(set, ", ")), ExpressionAttributeNames: names, ExpressionAttributeValues: vals})
	if err != nil {
		return fmt.Errorf("recording the verification of %s in table %s: %w", r.Projection, t.name, err)
	}
	return nil
}

// VerifyResults reads every projection's verification item (a strongly
// consistent scan), by projection name.
func (t *Table) VerifyResults(ctx context.Context) ([]VerifyResult, error) {
	var out []VerifyResult
	var start map[string]types.AttributeValue
	for {
		page, err := t.client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(t.name), ConsistentRead: aws.Bool(true), ExclusiveStartKey: start,
			FilterExpression: aws.String("begins_with(#k, :p)"), ExpressionAttributeNames: map[string]string{"#k": AttrKey},
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": s(VerifyPrefix)}})
		if err != nil {
			return nil, fmt.Errorf("reading the verifications in table %s: %w", t.name, err)
		}
		for _, it := range page.Items {
			out = append(out, verifyFromItem(it))
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		start = page.LastEvaluatedKey
	}
}

func verifyFromItem(it map[string]types.AttributeValue) VerifyResult {
	num := func(a string) (int64, bool) {
		v, ok := it[a].(*types.AttributeValueMemberN)
		if !ok {
			return 0, false
		}
		x, err := strconv.ParseInt(v.Value, 10, 64)
		return x, err == nil
	}
	r := VerifyResult{Counts: map[string]int64{}}
	if k, ok := it[AttrKey].(*types.AttributeValueMemberS); ok {
		r.Projection = strings.TrimPrefix(k.Value, VerifyPrefix)
	}
	if w, ok := it[AttrVerifyWorker].(*types.AttributeValueMemberS); ok {
		r.Worker = w.Value
	}
	if ms, ok := num(AttrVerifyAt); ok {
		r.At = time.UnixMilli(ms)
	}
	if ms, ok := num(AttrVerifyNext); ok {
		r.Next = time.UnixMilli(ms)
	}
	if ms, ok := num(AttrVerifyTook); ok {
		r.Took = time.Duration(ms) * time.Millisecond
	}
	if v, ok := it[AttrVerifySample].(*types.AttributeValueMemberN); ok {
		r.Sample, _ = strconv.ParseFloat(v.Value, 64)
	}
	for _, c := range verifyCounts {
		if x, ok := num(c); ok {
			r.Counts[c] = x
		}
	}
	return r
}
