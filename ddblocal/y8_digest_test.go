package ddblocal

import (
	"strings"
	"testing"
)

// TestY8_RequestDigestIgnoresMemberOrderAndTheToken: a TransactWriteItems
// request written with its objects' members in another order, or another
// ClientRequestToken, has the same digest (the SDKs write a map's members
// in any order); a change of any value, name or array order does not.
func TestY8_RequestDigestIgnoresMemberOrderAndTheToken(t *testing.T) {
	base := `{"ClientRequestToken":"t1","TransactItems":[{"Put":{"TableName":"x","Item":{"pk":{"S":"a"},"n":{"N":"1"},"m":{"M":{"p":{"S":"q"},"r":{"L":[{"N":"1"},{"N":"2"}]}}}},"ExpressionAttributeValues":{":a":{"N":"5"},":b":{"S":"z"}}}}]}`
	same := []string{
		`{"TransactItems":[{"Put":{"ExpressionAttributeValues":{":b":{"S":"z"},":a":{"N":"5"}},"TableName":"x","Item":{"m":{"M":{"r":{"L":[{"N":"1"},{"N":"2"}]},"p":{"S":"q"}}},"n":{"N":"1"},"pk":{"S":"a"}}}}],"ClientRequestToken":"t1"}`,
		` { "ClientRequestToken" : "t2" , "TransactItems" : [ {"Put":{"TableName":"x","Item":{"pk":{"S":"a"},"n":{"N":"1"},"m":{"M":{"p":{"S":"q"},"r":{"L":[{"N":"1"},{"N":"2"}]}}}},"ExpressionAttributeValues":{":a":{"N":"5"},":b":{"S":"z"}}}} ] } `,
	}
	differ := []string{
		strings.Replace(base, `"N":"5"`, `"N":"6"`, 1),
		strings.Replace(base, `[{"N":"1"},{"N":"2"}]`, `[{"N":"2"},{"N":"1"}]`, 1),
		strings.Replace(base, `"pk":{"S":"a"}`, `"pk":{"S":"b"}`, 1),
		strings.Replace(base, `"p":{"S":"q"}`, `"P":{"S":"q"}`, 1),
		strings.Replace(base, `"TableName":"x"`, `"TableName":"x","ClientRequestToken":"t1"`, 1), // a nested member of that name counts
	}
	want := requestDigest([]byte(base))
	for _, s := range same {
		if requestDigest([]byte(s)) != want {
			t.Errorf("differs from the base, want the same: %s", s)
		}
	}
	for _, s := range differ {
		if requestDigest([]byte(s)) == want {
			t.Errorf("the same as the base, want another: %s", s)
		}
	}
}

// BenchmarkRequestDigest: the digest of a four-put TransactWriteItems with
// a ClientRequestToken, as the host sends one for each transaction.
//
//	go test ./ddblocal -run '^$' -bench RequestDigest -benchmem
func BenchmarkRequestDigest(b *testing.B) {
	put := `{"Put":{"TableName":"bench","Item":{"pk":{"S":"p"},"sk":{"N":"1"},"name":{"S":"item-name-with-some-length"},"count":{"N":"7"},"tags":{"SS":["a","b","c"]},"doc":{"M":{"x":{"N":"1"},"y":{"S":"why"},"z":{"L":[{"S":"p"},{"S":"q"}]}}}},"ConditionExpression":"attribute_not_exists(#k) OR #v < :v","ExpressionAttributeNames":{"#k":"pk","#v":"count"},"ExpressionAttributeValues":{":v":{"N":"5"}}}}`
	body := []byte(`{"ClientRequestToken":"0b9a0d5e-6c1e-4a57-9d3e-2f1d2b6c9e11","TransactItems":[` + strings.Repeat(put+",", 3) + put + `]}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		requestDigest(body)
	}
}
