package itemcheck_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/itemcheck"
	"github.com/dynafold/dynafold/internal/testenv"
)

func nest(levels int) abi.Value {
	v := abi.S("deep")
	for range levels - 1 {
		v = abi.L(v)
	}
	return v
}

// valueCases are attribute values with what the checker says of them:
// "" when DynamoDB stores them, else a part of the problem's text, and
// the path of the problem below the attribute.
var valueCases = []struct {
	name       string
	v          abi.Value
	want, path string
}{
	{"integer", abi.N("42"), "", ""},
	{"decimal", abi.N("-12.50"), "", ""},
	{"exponent", abi.N("1.5E+6"), "", ""},
	{"38 digits", abi.N("12345678901234567890123456789012345678"), "", ""},
	{"38 digits and trailing zeros", abi.N("1234567890123456789012345678901234567800000"), "", ""},
	{"smallest", abi.N("1E-130"), "", ""},
	{"largest", abi.N("9.9999999999999999999999999999999999999E+125"), "", ""},
	{"zero with a big exponent", abi.N("0E+999"), "", ""},
	{"not a number", abi.N("not-a-number"), "is not a number", ""},
	{"empty number", abi.N(""), "is not a number", ""},
	{"spaces", abi.N(" 1"), "is not a number", ""},
	{"NaN", abi.N("NaN"), "is not a number", ""},
	{"two points", abi.N("1.2.3"), "is not a number", ""},
	{"39 digits", abi.N("123456789012345678901234567890123456789"), "39 significant digits", ""},
	{"too large", abi.N("1E+126"), "larger in magnitude", ""},
	{"too small", abi.N("1E-131"), "smaller in magnitude", ""},
	{"empty string set", abi.Value{Kind: abi.KindSS}, "empty SS", ""},
	{"string set with duplicates", abi.SS("a", "b", "a"), `holding "a" twice`, ""},
	{"number set with equal numbers", abi.NS("1", "1.0"), "twice", ""},
	{"number set with a bad member", abi.NS("1", "x"), `member "x"`, ""},
	{"empty binary set", abi.Value{Kind: abi.KindBS}, "empty BS", ""},
	{"binary set with duplicates", abi.BS([]byte("a"), []byte("a")), "twice", ""},
	{"empty string", abi.S(""), "", ""},
	{"empty list and map", abi.L(abi.L(), abi.M(nil)), "", ""},
	{"bad number in a list in a map", abi.M(abi.Item{"lines": abi.L(abi.N("1"), abi.M(abi.Item{"price": abi.N("x")}))}), "is not a number", "lines[1].price"},
	{"empty map key", abi.M(abi.Item{"": abi.S("x")}), "empty", ""}, // ddblocal stores it (see below)
	{"32 levels", nest(32), "", ""},
	{"33 levels", nest(33), "32 levels", strings.Repeat("[0]", 32)},
}

// TestW8_TheCheckerKnowsDynamoDBsRulesForValues: numbers, sets, names and
// nesting, each problem at its attribute path.
func TestW8_TheCheckerKnowsDynamoDBsRulesForValues(t *testing.T) {
	for _, c := range valueCases {
		t.Run(c.name, func(t *testing.T) {
			p := itemcheck.Item(abi.Item{"pk": abi.S("k"), "a": c.v}, abi.Item{"pk": abi.S("k")})
			if c.want == "" {
				assert.Nil(t, p)
				return
			}
			require.NotNil(t, p)
			assert.Contains(t, p.What, c.want)
			want := "a"
			if c.path != "" {
				want += "." + c.path
				if c.path[0] == '[' {
					want = "a" + c.path
				}
			}
			assert.Equal(t, want, p.Path)
		})
	}
}

// TestW8_TheCheckerAgreesWithDynamoDBLocal: every value case is put into
// ddblocal (DynamoDB's answers, through the real SDK): what the checker
// accepts is stored, what it refuses is refused.
func TestW8_TheCheckerAgreesWithDynamoDBLocal(t *testing.T) {
	env := testenv.Start(t)
	table := env.Table(t, "items", false)
	for _, c := range valueCases {
		if c.name == "empty map key" {
			// DynamoDB refuses an empty attribute name at any depth ("Empty
			// attribute name"); ddblocal checks only the top level's.
			continue
		}
		item := abi.Item{"pk": abi.S("k"), "sk": abi.S(c.name), "a": c.v}
		m, err := ddbclient.ToAttributeMap(item)
		require.NoError(t, err, c.name)
		_, err = env.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &table, Item: m})
		p := itemcheck.Item(item, abi.Item{"pk": abi.S("k"), "sk": abi.S(c.name)})
		assert.Equal(t, err == nil, p == nil, "%s: DynamoDB says %v, the checker %v", c.name, err, p)
	}
}

// TestW8_KeyAttributesAreTheRowsOrAbsent: an item may leave the key out
// or return it unchanged; another value or type is a problem naming both.
func TestW8_KeyAttributesAreTheRowsOrAbsent(t *testing.T) {
	key := abi.Item{"pk": abi.S("Stock#w-1"), "sk": abi.S("S")}
	assert.Nil(t, itemcheck.Item(abi.Item{"qty": abi.N("1")}, key))
	assert.Nil(t, itemcheck.Item(abi.Item{"pk": abi.S("Stock#w-1"), "qty": abi.N("1")}, key))
	p := itemcheck.Item(abi.Item{"pk": abi.S("Stock#w-2"), "qty": abi.N("1")}, key)
	require.NotNil(t, p)
	assert.Equal(t, "pk", p.Path)
	assert.Contains(t, p.What, `S "Stock#w-2"`)
	assert.Contains(t, p.What, `S "Stock#w-1"`)
	p = itemcheck.Item(abi.Item{"sk": abi.N("1")}, abi.Item{"pk": abi.S("a"), "sk": abi.S("1")})
	require.NotNil(t, p, "the same digits as another type")
	assert.Contains(t, p.What, `N "1"`)
	p = itemcheck.Item(abi.Item{"": abi.S("x")}, key)
	require.NotNil(t, p)
	assert.Contains(t, p.What, "empty name")
	assert.Nil(t, itemcheck.Item(abi.Item{"gone": {}}, key), "a zero Value is absent")
}

// TestW8_AnItemOver400KBIsRefusedNamingItsLargestAttribute: sizes by
// DynamoDB's rules; an item just over the limit is refused.
func TestW8_AnItemOver400KBIsRefusedNamingItsLargestAttribute(t *testing.T) {
	item := abi.Item{"pk": abi.S("k"), "n": abi.N("123.45")}
	assert.Equal(t, 2+1+1+(5+1)/2+1, itemcheck.Size(item))
	item["blob"] = abi.S(strings.Repeat("x", itemcheck.MaxItemSize-itemcheck.Size(item)-4))
	assert.Equal(t, itemcheck.MaxItemSize, itemcheck.Size(item))
	assert.Nil(t, itemcheck.TooLarge(item))
	item["blob"] = abi.S(item["blob"].Str + "x")
	p := itemcheck.TooLarge(item)
	require.NotNil(t, p)
	assert.Equal(t, "blob", p.Path)
	assert.Contains(t, p.What, "400 KB")
}

// TestW8_AnEffectValueIsCheckedAsAnAttribute: an effect is stored as an
// attribute of an outbox item.
func TestW8_AnEffectValueIsCheckedAsAnAttribute(t *testing.T) {
	assert.Nil(t, itemcheck.Value(abi.M(abi.Item{"to": abi.S("a@b"), "amount": abi.N("3")})))
	p := itemcheck.Value(abi.M(abi.Item{"amount": abi.N("three")}))
	require.NotNil(t, p)
	assert.Equal(t, "amount", p.Path)
	require.NotNil(t, itemcheck.Value(abi.Value{}))
}

func BenchmarkItem(b *testing.B) {
	key := abi.Item{"pk": abi.S("OrderSummary#o-1"), "sk": abi.S("OrderSummary")}
	item := abi.Item{"pk": key["pk"], "sk": key["sk"], "customer": abi.S("c-1"), "total": abi.N("1234.56"),
		"items": abi.N("7"), "status": abi.S("placed"), "tags": abi.SS("a", "b"),
		"lines": abi.L(abi.M(abi.Item{"sku": abi.S("A"), "price": abi.N("12.5")}), abi.M(abi.Item{"sku": abi.S("B"), "price": abi.N("3")}))}
	b.ReportAllocs()
	for b.Loop() {
		if itemcheck.Item(item, key) != nil || itemcheck.TooLarge(item) != nil {
			b.Fatal("valid")
		}
	}
}
