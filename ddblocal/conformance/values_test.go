package conformance

import (
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// Item is a DynamoDB item.
type Item = map[string]types.AttributeValue

func s(v string) types.AttributeValue     { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue     { return &types.AttributeValueMemberN{Value: v} }
func b(v []byte) types.AttributeValue     { return &types.AttributeValueMemberB{Value: v} }
func bl(v bool) types.AttributeValue      { return &types.AttributeValueMemberBOOL{Value: v} }
func null() types.AttributeValue          { return &types.AttributeValueMemberNULL{Value: true} }
func ss(v ...string) types.AttributeValue { return &types.AttributeValueMemberSS{Value: v} }
func ns(v ...string) types.AttributeValue { return &types.AttributeValueMemberNS{Value: v} }
func bs(v ...[]byte) types.AttributeValue { return &types.AttributeValueMemberBS{Value: v} }
func l(v ...types.AttributeValue) types.AttributeValue {
	if v == nil {
		v = []types.AttributeValue{}
	}
	return &types.AttributeValueMemberL{Value: v}
}
func m(v Item) types.AttributeValue { return &types.AttributeValueMemberM{Value: v} }

// names builds ExpressionAttributeNames from pairs "#a", "a", ...
func names(pairs ...string) map[string]string {
	out := map[string]string{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[pairs[i]] = pairs[i+1]
	}
	return out
}

// plain converts an attribute value into comparable Go values: numbers as
// canonical rationals, sets sorted, so equal DynamoDB values compare equal.
func plain(v types.AttributeValue) any {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return "S:" + v.Value
	case *types.AttributeValueMemberN:
		return "N:" + canonNum(v.Value)
	case *types.AttributeValueMemberB:
		return fmt.Sprintf("B:%x", v.Value)
	case *types.AttributeValueMemberBOOL:
		return fmt.Sprintf("BOOL:%v", v.Value)
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case *types.AttributeValueMemberSS:
		return sortedSet("SS", v.Value, func(x string) string { return x })
	case *types.AttributeValueMemberNS:
		return sortedSet("NS", v.Value, canonNum)
	case *types.AttributeValueMemberBS:
		out := make([]string, len(v.Value))
		for i, x := range v.Value {
			out[i] = fmt.Sprintf("%x", x)
		}
		return sortedSet("BS", out, func(x string) string { return x })
	case *types.AttributeValueMemberL:
		out := []any{"L"}
		for _, x := range v.Value {
			out = append(out, plain(x))
		}
		return out
	case *types.AttributeValueMemberM:
		return plainItem(v.Value)
	case nil:
		return nil
	default:
		return fmt.Sprintf("unknown %T", v)
	}
}

func sortedSet(kind string, vals []string, f func(string) string) []string {
	out := make([]string, len(vals))
	for i, x := range vals {
		out[i] = f(x)
	}
	sort.Strings(out)
	return append([]string{kind}, out...)
}

func canonNum(x string) string {
	r, ok := new(big.Rat).SetString(x)
	if !ok {
		return "bad:" + x
	}
	return r.RatString()
}

func plainItem(it Item) map[string]any {
	if it == nil {
		return nil
	}
	out := make(map[string]any, len(it))
	for k, v := range it {
		out[k] = plain(v)
	}
	return out
}

// equalItems reports whether two items hold equal values.
func equalItems(a, b Item) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(plainItem(a), plainItem(b))
}

// requireItem fails the test unless got holds the same values as want (nil
// want: no item).
func requireItem(t testing.TB, want, got Item, msgAndArgs ...any) {
	t.Helper()
	if !equalItems(want, got) {
		t.Fatalf("%s\nwant item: %v\n got item: %v", fmt.Sprint(msgAndArgs...), plainItem(want), plainItem(got))
	}
}

// requireItems compares two item lists in order.
func requireItems(t testing.TB, want, got []Item, msgAndArgs ...any) {
	t.Helper()
	w := make([]any, len(want))
	for i, x := range want {
		w[i] = plainItem(x)
	}
	g := make([]any, len(got))
	for i, x := range got {
		g[i] = plainItem(x)
	}
	if !reflect.DeepEqual(w, g) {
		t.Fatalf("%s\nwant items: %v\n got items: %v", fmt.Sprint(msgAndArgs...), w, g)
	}
}

// requireCode fails unless err is an API error with the given code.
func requireCode(t testing.TB, err error, code string, msgAndArgs ...any) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: want %s, got success", fmt.Sprint(msgAndArgs...), code)
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("%s: want %s, got non-API error %v", fmt.Sprint(msgAndArgs...), code, err)
	}
	if ae.ErrorCode() != code {
		t.Fatalf("%s: want %s, got %s (%v)", fmt.Sprint(msgAndArgs...), code, ae.ErrorCode(), err)
	}
	// Logged (go test -v) so a reviewer can check the error is the intended one.
	t.Logf("%s: %s: %s", fmt.Sprint(msgAndArgs...), ae.ErrorCode(), ae.ErrorMessage())
}

// requireValidation fails unless err is a ValidationException.
func requireValidation(t testing.TB, err error, msgAndArgs ...any) {
	t.Helper()
	requireCode(t, err, "ValidationException", msgAndArgs...)
}

// requireCCF fails unless err is a *types.ConditionalCheckFailedException, and returns it.
func requireCCF(t testing.TB, err error, msgAndArgs ...any) *types.ConditionalCheckFailedException {
	t.Helper()
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		t.Fatalf("%s: want ConditionalCheckFailedException, got %v", fmt.Sprint(msgAndArgs...), err)
	}
	return ccf
}

func noErr(t testing.TB, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// put writes items to table.
func put(t testing.TB, table string, items ...Item) {
	t.Helper()
	c := ddb(t)
	for _, it := range items {
		_, err := c.PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(table), Item: it})
		noErr(t, err, "PutItem")
	}
}

// get reads one item with a strongly consistent read.
func get(t testing.TB, table string, key Item) Item {
	t.Helper()
	out, err := ddb(t).GetItem(ctx(t), &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)})
	noErr(t, err, "GetItem")
	return out.Item
}
